"""Draw the book's logo and favicon with Matplotlib: ``python -m tools.make_logo``.

The picture is a small attention map: three query dots on the left send weighted lines to
four key dots on the right (line width = attention weight, each query's weights sum to 1),
over the Hangul syllable 어 ("어텐션") and the letter A ("Attention"). It writes
``_static/logo.png`` (the sidebar logo) and ``_static/favicon.ico`` (16, 32, 48 px); both
are committed, so the site build does not depend on this script.
"""

from __future__ import annotations

import io
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

import d2lite  # noqa: E402, F401  (registers the Korean font)
from d2lite import plotting  # noqa: E402
from tools.core import ROOT  # noqa: E402

BLUE, ORANGE, INK = "#2a5aa8", "#e8833a", "#1f2933"


def attention_weights(seed: int = 3) -> np.ndarray:
    """A (3, 4) row-stochastic matrix: three queries attending over four keys."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(3, 4)) * 1.6
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    assert np.allclose(weights.sum(axis=1), 1.0)
    return weights


def draw(size_px: int, with_text: bool) -> Image.Image:
    """Render the logo as a square RGBA image of ``size_px`` pixels."""
    dpi = 100
    fig = plt.figure(figsize=(size_px / dpi, size_px / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.add_patch(plt.Circle((0.5, 0.5), 0.48, color="white", ec=BLUE, lw=size_px / 40))
    weights = attention_weights()
    qy = np.linspace(0.3, 0.7, 3)
    ky = np.linspace(0.25, 0.75, 4)
    for i, y0 in enumerate(qy):
        for j, y1 in enumerate(ky):
            ax.plot(
                [0.24, 0.76],
                [y0, y1],
                color=ORANGE,
                alpha=0.35 + 0.65 * weights[i, j],
                lw=size_px / 25 * weights[i, j] + 0.3,
                solid_capstyle="round",
            )
    ax.scatter([0.24] * 3, qy, s=(size_px / 9) ** 2 / 4, color=BLUE, zorder=3)
    ax.scatter([0.76] * 4, ky, s=(size_px / 10) ** 2 / 4, color=INK, zorder=3)
    if with_text:
        font = plotting.korean_font() or "DejaVu Sans"
        ax.text(
            0.5,
            0.86,
            "어",
            ha="center",
            va="center",
            fontsize=size_px / 7.5,
            color=BLUE,
            fontfamily=font,
            fontweight="bold",
        )
        ax.text(
            0.5,
            0.13,
            "A",
            ha="center",
            va="center",
            fontsize=size_px / 8,
            color=INK,
            fontfamily="DejaVu Sans",
            fontweight="bold",
        )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, transparent=True)
    plt.close(fig)
    buf.seek(0)
    return Image.open(buf).convert("RGBA")


def main() -> int:
    plotting.strict_glyphs(True)
    static = ROOT / "_static"
    static.mkdir(exist_ok=True)
    draw(320, with_text=True).save(static / "logo.png", optimize=True)
    draw(256, with_text=False).save(static / "favicon.ico", sizes=[(16, 16), (32, 32), (48, 48)])
    print("wrote _static/logo.png and _static/favicon.ico")
    return 0


if __name__ == "__main__":
    sys.exit(main())

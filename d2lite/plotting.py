"""Plotting helpers: Hangul-capable fonts, line plots, heatmaps and figures in two languages.

Importing this module registers a Korean font with Matplotlib (the NanumGothic files that the
``koreanize-matplotlib`` package ships), so Hangul labels render without missing glyphs.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import io
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from numbers import Real
from pathlib import Path

import matplotlib as mpl
import numpy as np
import torch
from matplotlib import font_manager
from matplotlib import pyplot as plt

# The names a reader calls. The machinery behind bilingual figures (LANGS, MAX_WIDTH_IN,
# figure_langs, korean_font, strict_glyphs) stays in this module: d2lite.plotting.<name>.
__all__ = [
    "bilingual",
    "plot",
    "set_axes",
    "set_figsize",
    "show_heatmaps",
]

LANGS = ("ko", "en")
#: Widest figure (inches) that :func:`bilingual` accepts: the site's text column is about 7 in.
MAX_WIDTH_IN = 7.5
_LANG_ENV = "D2LITE_FIG_LANG"
_GLYPH_MESSAGE = r"Glyph .* missing from"


def _register_korean_font() -> str | None:
    """Add the bundled Korean fonts to Matplotlib and make the regular one the default."""
    # Only the font files are used; the package's own import code is not run.
    spec = importlib.util.find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(spec.submodule_search_locations[0])
    names = []
    for path in sorted(root.rglob("*.ttf")):
        font_manager.fontManager.addfont(str(path))
        names.append(font_manager.FontProperties(fname=str(path)).get_name())
    if not names:
        return None
    family = "NanumGothic" if "NanumGothic" in names else names[0]
    # Latin letters, digits and math come from DejaVu Sans (it has the minus sign U+2212 that
    # math-mode tick labels such as 10^-3 need); Hangul falls back, glyph by glyph, to Nanum.
    mpl.rcParams["font.family"] = ["DejaVu Sans", family]
    return family


_KOREAN_FAMILY = _register_korean_font()
mpl.rcParams["axes.unicode_minus"] = False


def korean_font() -> str | None:
    """Name of the registered Korean font family, or ``None`` if none could be found."""
    return _KOREAN_FAMILY


class _MissingGlyphError(logging.Handler):
    """Raise on Matplotlib's log message for a glyph that math text had to replace."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "does not have a glyph" in message:
            raise UserWarning(f"missing from the font: {message}")


_MATH_GLYPH_HANDLER = _MissingGlyphError()


def strict_glyphs(enable: bool = True) -> None:
    """Make a glyph that no font can draw an error instead of a box (tests switch this on).

    Plain text reports it as a "Glyph ... missing" warning, math text as a log message.
    """
    action = "error" if enable else "default"
    warnings.filterwarnings(action, message=_GLYPH_MESSAGE, category=UserWarning)
    logger = logging.getLogger("matplotlib")
    if enable and _MATH_GLYPH_HANDLER not in logger.handlers:
        logger.addHandler(_MATH_GLYPH_HANDLER)
    elif not enable and _MATH_GLYPH_HANDLER in logger.handlers:
        logger.removeHandler(_MATH_GLYPH_HANDLER)


if os.environ.get("D2LITE_STRICT_FONTS") == "1":
    strict_glyphs(True)


def _check_figsize(figsize: object) -> None:
    """Two positive numbers (width, height) in inches, as a tuple or list."""
    if (not isinstance(figsize, (tuple, list)) or len(figsize) != 2
            or not all(isinstance(v, Real) and not isinstance(v, bool) for v in figsize)
            or min(figsize) <= 0):
        raise ValueError(f"figsize must be two positive numbers (width, height) in inches, "
                         f"got {figsize!r}")


def set_figsize(figsize: tuple[float, float] = (3.5, 2.5)) -> None:
    """Set the default figure size in inches."""
    _check_figsize(figsize)
    mpl.rcParams["figure.figsize"] = figsize


def set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend) -> None:
    """Label, limit and scale one Matplotlib axes."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale(xscale)
    axes.set_yscale(yscale)
    if xlim is not None:
        axes.set_xlim(xlim)
    if ylim is not None:
        axes.set_ylim(ylim)
    if legend:
        axes.legend(legend)
    axes.grid(True, alpha=0.3)


def _as_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def plot(
    X,
    Y=None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    legend: Sequence[str] | None = None,
    xlim=None,
    ylim=None,
    xscale: str = "linear",
    yscale: str = "linear",
    fmts: Sequence[str] = ("-", "m--", "g-.", "r:", "c-", "y--"),
    figsize: tuple[float, float] = (3.5, 2.5),
    axes=None,
) -> None:
    """Plot one or more curves: ``X`` (n,) or a list of them, ``Y`` likewise.

    Draws on ``axes`` if given, else on a new figure of ``figsize`` inches. Returns nothing,
    as d2l's does, so a cell that ends with it shows the figure once and no ``<Axes>`` echo;
    to decorate the axes afterwards, make them first (``fig, ax = plt.subplots()``) and pass
    ``axes=ax``.
    """

    def has_one_axis(v) -> bool:
        return hasattr(v, "ndim") and v.ndim == 1 or (
            isinstance(v, list) and len(v) > 0 and not hasattr(v[0], "__len__")
        )

    if has_one_axis(X):
        X = [X]
    if Y is None:
        X, Y = [[]] * len(X), X
    elif has_one_axis(Y):
        Y = [Y]
    if len(X) != len(Y):
        X = X * len(Y)
    if len(X) != len(Y):
        raise ValueError(f"got {len(X)} x-series for {len(Y)} y-series")
    if legend is not None and len(legend) != len(Y):
        raise ValueError(f"legend has {len(legend)} entries for {len(Y)} curves")
    if axes is None:
        _, axes = plt.subplots(figsize=figsize)
    for x, y, fmt in zip(X, Y, list(fmts) * (len(Y) // len(fmts) + 1)):
        y = _as_numpy(y)
        if len(x):
            x = _as_numpy(x)
            if x.shape != y.shape:
                raise ValueError(f"x has shape {x.shape} but y has shape {y.shape}")
            axes.plot(x, y, fmt)
        else:
            axes.plot(y, fmt)
    set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend)


def show_heatmaps(
    matrices,
    xlabel: str,
    ylabel: str,
    titles: Sequence[str] | None = None,
    figsize: tuple[float, float] = (2.5, 2.5),
    cmap: str = "Reds",
    shared_scale: bool = True,
) -> None:
    """Draw a grid of heatmaps from ``matrices`` of shape (rows, cols, queries, keys).

    ``figsize`` is the size of the whole figure in inches, as in d2l. With ``shared_scale``
    (the default) all panels use one colour scale and one colour bar reads for each; with
    ``shared_scale=False`` each panel has its own scale (as in d2l) and its own colour bar.
    Returns nothing, so a cell ending with it shows the figure once; ``plt.gcf()`` gives the
    figure for further changes.
    """
    matrices = _as_numpy(matrices)
    if matrices.ndim != 4:
        raise ValueError(
            "matrices must have shape (rows, cols, queries, keys), "
            f"got {matrices.ndim} dimension(s) {tuple(matrices.shape)}"
        )
    _check_figsize(figsize)
    num_rows, num_cols = matrices.shape[:2]
    if titles is not None and len(titles) != num_cols:
        raise ValueError(f"got {len(titles)} titles for {num_cols} columns")
    fig, axes = plt.subplots(
        num_rows,
        num_cols,
        figsize=figsize,
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )

    def limits(m: np.ndarray) -> tuple[float, float]:
        lo, hi = float(m.min()), float(m.max())
        return (min(lo, 0.0), max(hi, 1.0)) if lo == hi else (lo, hi)

    shared = limits(matrices)
    pcm = None
    for i, (row_axes, row_matrices) in enumerate(zip(axes, matrices)):
        for j, (ax, matrix) in enumerate(zip(row_axes, row_matrices)):
            vmin, vmax = shared if shared_scale else limits(matrix)
            pcm = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax)
            if not shared_scale:
                fig.colorbar(pcm, ax=ax, shrink=0.8)
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles:
                ax.set_title(titles[j])
    if shared_scale:
        fig.colorbar(pcm, ax=axes, shrink=0.6)


def figure_langs() -> tuple[str, ...]:
    """Languages that :func:`bilingual` draws, from ``D2LITE_FIG_LANG`` (default ``ko,en``)."""
    raw = os.environ.get(_LANG_ENV, "ko,en")
    langs = tuple(s.strip() for s in raw.split(",") if s.strip())
    bad = [s for s in langs if s not in LANGS]
    if not langs or bad:
        raise ValueError(f"{_LANG_ENV} must list languages from {LANGS}, got {raw!r}")
    return langs


def _png(fig, dpi: int) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def bilingual(
    draw: Callable[[Callable[[str, str], str]], object] | None = None,
    *,
    caption: tuple[str, str] | None = None,
    dpi: int = 100,
    alt: tuple[str, str] | None = None,
):
    """Draw a figure once per language and show all versions for the site's language switch.

    ``draw`` receives ``t(ko, en)``, which returns the text in the language being drawn. Each
    version is shown inside ``<figure class="lang-ko">`` or ``<figure class="lang-en">`` (with
    the matching half of ``caption``), so the website's switch can hide the other one. Use it
    as ``@d2l.bilingual`` on a drawing function or call ``d2l.bilingual(draw, caption=(ko, en))``;
    it returns what ``draw`` returned for the last language.

    ``alt`` is a (korean, english) pair of texts that say what the figure shows, for readers
    who cannot see it; it defaults to the caption. Figures are drawn for a text column about
    7 inches wide: one wider than :data:`MAX_WIDTH_IN` raises ``ValueError``, because the site
    would shrink it until its labels are unreadable.
    """
    if draw is None:
        return lambda fn: bilingual(fn, caption=caption, dpi=dpi, alt=alt)
    if not callable(draw):
        raise ValueError(f"bilingual needs a drawing function, got {type(draw).__name__}")
    if caption is not None and (len(caption) != 2 or not all(isinstance(c, str) for c in caption)):
        raise ValueError(f"caption must be a (korean, english) pair of strings, got {caption!r}")
    if alt is not None and (len(alt) != 2 or not all(isinstance(a, str) for a in alt)):
        raise ValueError(f"alt must be a (korean, english) pair of strings, got {alt!r}")
    langs = figure_langs()
    images: list[tuple[str, bytes]] = []
    result = None
    for lang in langs:
        before = set(plt.get_fignums())

        def t(ko: str, en: str, _lang: str = lang) -> str:
            return ko if _lang == "ko" else en

        result = draw(t)
        new = [n for n in plt.get_fignums() if n not in before]
        if not new:
            raise ValueError("the drawing function made no Matplotlib figure")
        for num in new:
            fig = plt.figure(num)
            png = _png(fig, dpi)
            plt.close(fig)
            width_in = _png_width(png) / dpi
            if width_in > MAX_WIDTH_IN:
                raise ValueError(
                    f"the figure is {width_in:.1f} in wide; the text column shows "
                    f"{MAX_WIDTH_IN} in, so draw it narrower (figsize) or lay its panels "
                    "out in more rows"
                )
            images.append((lang, png))
    captions = dict(zip(LANGS, caption)) if caption else {}
    alts = dict(zip(LANGS, alt)) if alt else captions
    # A figure drawn by d2l.diagrams (the drawing returned its Diagram) is marked as a diagram
    # of the architecture, so the site's tests can find one in every chapter.
    diagram = type(result).__module__.startswith("d2lite.diagrams")
    _display(images, captions, alts, diagram=diagram)
    return result


def _png_width(png: bytes) -> int:
    """Pixel width from a PNG's header (the IHDR chunk follows the 8-byte signature)."""
    return int.from_bytes(png[16:20], "big")


def _display(
    images: list[tuple[str, bytes]], captions: dict[str, str], alts: dict[str, str],
    *, diagram: bool = False,
) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python: nothing to show
        return
    if get_ipython() is None:
        return
    parts = []
    for lang, png in images:
        data = base64.b64encode(png).decode("ascii")
        text = html.escape(captions.get(lang, ""))
        figcaption = f"<figcaption>{text}</figcaption>" if text else ""
        alt = html.escape(alts.get(lang, "")) or text or ("그림" if lang == "ko" else "figure")
        parts.append(
            f'<figure class="d2l-figure{" d2l-diagram" if diagram else ""} lang-{lang}" '
            f'lang="{lang}">'
            f'<img src="data:image/png;base64,{data}" style="max-width:100%" alt="{alt}">'
            f"{figcaption}</figure>"
        )
    fallback = base64.b64encode(images[0][1]).decode("ascii")
    display({"text/html": "\n".join(parts), "image/png": fallback}, raw=True)

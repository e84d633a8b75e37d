"""Interactive attention views: hover a token, pick a layer and head, slide the temperature.

``AttentionView(weights, queries, keys)`` displays as one self-contained piece of HTML (its own
CSS and a small inline script; nothing is fetched, no ``require.js``), in Jupyter, Colab and on
the book's website, and as a PNG (:mod:`d2lite.plotting`, Hangul labels) for the PDF and for
viewers that run no script. Labels and controls carry ``lang-ko``/``lang-en`` classes, so the
site's language switch shows the reader's language.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import math
import uuid
from collections.abc import Sequence
from importlib import resources

import numpy as np
import torch

from . import plotting
from .checks import check_scalar

__all__ = ["AttentionView"]

#: The most weights one view embeds (every value travels in the page).
MAX_VALUES = 250_000

Text = str | tuple[str, str]

_AXIS_NAMES = {1: [("헤드", "head")], 2: [("층", "layer"), ("헤드", "head")]}

# The page-side half of a view lives in package files beside this module, so that tools read
# it as CSS and JavaScript (tests/test_views.py runs `node --check` on the script):
# views_assets/attention_view.css styles every view; views_assets/attention_view.js is the
# behavior, scoped to the views of one render (``data-av="__ID__"``, the placeholder replaced
# by each render's id): several views on a page and a re-rendered cell each get their own
# state. ES5 only, no globals, nothing fetched. Both are package data (pyproject.toml).
ASSETS = "views_assets"


@functools.cache
def _asset(name: str) -> str:
    """The text of ``d2lite/views_assets/<name>``, read once."""
    return resources.files("d2lite").joinpath(f"{ASSETS}/{name}").read_text(encoding="utf-8")


def _pair(text: Text, name: str) -> tuple[str, str]:
    """A label as a (korean, english) pair; one string serves both languages."""
    if isinstance(text, str):
        return text, text
    if (
        isinstance(text, (tuple, list))
        and len(text) == 2
        and all(isinstance(t, str) for t in text)
    ):
        return text[0], text[1]
    raise ValueError(f"{name} must be a string or a (korean, english) pair, got {text!r}")


def _labels(tokens: object, n: int, name: str, axis: str) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a sequence of {n} token labels, got {tokens!r}")
    if len(tokens) != n:
        raise ValueError(f"{name} must have one label per {axis} = {n}, got {len(tokens)}")
    bad = [t for t in tokens if not isinstance(t, (str, int))]
    if bad:
        raise ValueError(f"{name} must be strings, got {type(bad[0]).__name__} {bad[0]!r}")
    return [str(t) for t in tokens]


def _array(x: object, name: str) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        if x.is_complex() or not (x.is_floating_point() or x.dtype in (torch.int64, torch.int32)):
            raise ValueError(f"{name} must be real numbers, got dtype {x.dtype}")
        x = x.detach().to("cpu", torch.float64).numpy()
    arr = np.asarray(x)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def _softmax(scores: np.ndarray, temperature: float) -> np.ndarray:
    z = scores / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _bilingual_span(text: Text, langs: tuple[str, ...]) -> str:
    """``<span class="lang-ko">…</span><span class="lang-en">…</span>`` for the site's switch."""
    ko, en = (html.escape(t) for t in _pair(text, "label"))
    if langs == ("ko",) or (ko == en and langs != ("en",)):
        return f'<span lang="ko">{ko}</span>' if langs == ("ko",) else ko
    if langs == ("en",):
        return f'<span lang="en">{en}</span>'
    return (
        f'<span class="lang-ko" lang="ko">{ko}</span><span class="lang-sep"> · </span>'
        f'<span class="lang-en" lang="en">{en}</span>'
    )


class AttentionView:
    """An interactive view of attention weights of shape (..., queries, keys).

    ``queries`` and ``keys`` label the last two axes; leading axes (layers, heads) become
    selectors named by ``titles`` (one per leading axis, each a string or a (korean, english)
    pair). With ``scores`` (same shape, ``-inf`` where masked), a temperature slider re-applies
    the softmax in the browser: ``weights`` must then equal ``softmax(scores / temperature)``.
    Values are shown with ``digits`` decimals; ``caption`` is a string or a (korean, english)
    pair. Displayed, it is self-contained HTML (``_repr_html_``) and a PNG (``_repr_png_``).
    """

    def __init__(
        self,
        weights,
        queries: Sequence[str],
        keys: Sequence[str],
        *,
        titles: Sequence[Text] | None = None,
        scores=None,
        caption: Text | None = None,
        temperature: float = 1.0,
        digits: int = 2,
    ) -> None:
        w = _array(weights, "weights")
        if w.ndim < 2:
            raise ValueError(
                f"weights must have shape (..., queries, keys), got shape {tuple(w.shape)}"
            )
        if 0 in w.shape:
            raise ValueError(f"weights must not be empty, got shape {tuple(w.shape)}")
        if w.size > MAX_VALUES:
            raise ValueError(
                f"weights has {w.size:,} values; a view embeds at most {MAX_VALUES:,}: "
                "select layers, heads or a shorter sentence"
            )
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and non-negative (attention weights)")
        self.temperature = check_scalar(temperature, "temperature", float, low=0, low_open=True)
        self.digits = check_scalar(digits, "digits", int, low=0, high=6)
        *lead, num_q, num_k = w.shape
        self.queries = _labels(queries, num_q, "queries", "query (weights.shape[-2])")
        self.keys = _labels(keys, num_k, "keys", "key (weights.shape[-1])")
        names = _AXIS_NAMES.get(len(lead)) or [
            (f"축 {a}", f"axis {a}") for a in range(len(lead))
        ]
        if titles is not None:
            if isinstance(titles, str) or len(titles) != len(lead):
                raise ValueError(
                    f"titles must name each of the {len(lead)} leading axes of weights "
                    f"(shape {tuple(w.shape)}), got {titles!r}"
                )
            names = [_pair(t, "each title") for t in titles]
        self.titles = names
        self.caption = None if caption is None else _pair(caption, "caption")
        self.scores = None
        if scores is not None:
            s = _array(scores, "scores")
            if s.shape != w.shape:
                raise ValueError(
                    f"scores must have the shape of weights {tuple(w.shape)}, "
                    f"got {tuple(s.shape)}"
                )
            if np.isnan(s).any() or np.isposinf(s).any():
                raise ValueError("scores must be finite, or -inf where a key is masked")
            if np.isneginf(s).all(axis=-1).any():
                raise ValueError("scores must leave at least one key per query unmasked")
            expected = _softmax(s, self.temperature)
            if not np.allclose(expected, w, atol=1e-4):
                worst = float(np.abs(expected - w).max())
                raise ValueError(
                    "weights must equal softmax(scores / temperature) over the keys "
                    f"(largest difference {worst:.3g}; temperature={self.temperature})"
                )
            self.scores = s
        self.weights = w
        self._pngs: dict[str, bytes] = {}

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.weights.shape)

    def __repr__(self) -> str:
        return f"AttentionView(shape={self.shape})"

    # -- HTML ------------------------------------------------------------------------------

    def _data(self) -> str:
        *lead, num_q, num_k = self.shape
        data = {
            "lead": lead,
            "q": num_q,
            "k": num_k,
            "digits": self.digits,
            "tau": self.temperature,
            "w": [round(float(v), 6) for v in self.weights.ravel()],
            "s": None,
        }
        if self.scores is not None:
            data["s"] = [
                None if math.isinf(v) else float(f"{v:.7g}") for v in self.scores.ravel()
            ]
        # Inside <script>, "</" would end the element: JSON allows the escaped form.
        return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")

    def _controls(self, langs: tuple[str, ...]) -> str:
        parts = []
        for axis, (size, name) in enumerate(zip(self.shape[:-2], self.titles)):
            options = "".join(f'<option value="{i}">{i + 1}</option>' for i in range(size))
            parts.append(
                f"<label>{_bilingual_span(name, langs)}"
                f'<select data-axis="{axis}" aria-label="{html.escape(name[1])}">{options}'
                "</select></label>"
            )
        if self.scores is not None:
            parts.append(
                f"<label>{_bilingual_span(('온도 τ', 'temperature τ'), langs)}"
                '<input class="av-temp" type="range" min="-3" max="3" step="0.25" value="0" '
                'aria-label="temperature">'
                f'<output class="av-tau">{self.temperature:.2f}</output></label>'
            )
        if not parts:
            return ""
        return '<div class="av-controls">' + "".join(parts) + "</div>"

    def _grid(self, langs: tuple[str, ...]) -> str:
        num_q, num_k = self.shape[-2:]
        corner = _bilingual_span(("쿼리＼키", "query＼key"), langs)
        out = [
            f'<div class="av-grid" style="grid-template-columns:auto repeat({num_k},2.1em)">',
            f'<div class="av-corner">{corner}</div>',
        ]
        for j, key in enumerate(self.keys):
            out.append(
                f'<div class="av-tok av-key" data-key="{j}" tabindex="0" role="button">'
                f"{html.escape(key)}</div>"
            )
        for i, query in enumerate(self.queries):
            out.append(
                f'<div class="av-tok av-query" data-query="{i}" tabindex="0" role="button">'
                f"{html.escape(query)}</div>"
            )
            out += [
                f'<div class="av-cell" data-q="{i}" data-k="{j}"></div>' for j in range(num_k)
            ]
        out.append("</div>")
        return "".join(out)

    def _print_images(self, langs: tuple[str, ...]) -> str:
        parts = []
        for lang in langs:
            png = base64.b64encode(self._png(lang)).decode("ascii")
            cls = f' class="lang-{lang}"' if len(langs) > 1 else ""
            pick = 0 if lang == "ko" else 1
            alt = html.escape((self.caption or ("어텐션 가중치", "attention weights"))[pick])
            parts.append(f'<img{cls} src="data:image/png;base64,{png}" alt="{alt}">')
        return '<div class="av-print">' + "".join(parts) + "</div>"

    def _repr_html_(self) -> str:
        langs = plotting.figure_langs()
        uid = uuid.uuid4().hex[:12]
        hint = _bilingual_span(
            ("쿼리 토큰(행)이나 키 토큰(열)에 마우스를 올리거나 눌러 보세요.",
             "Hover over or tap a query token (row) or a key token (column)."),
            langs,
        )  # fmt: skip
        caption = ""
        label = "attention weights"
        if self.caption:
            caption = f'<div class="av-caption">{_bilingual_span(self.caption, langs)}</div>'
            label = self.caption[1] if langs != ("ko",) else self.caption[0]
        return (
            f'<div class="attention-view" data-av="{uid}" role="figure" '
            f'aria-label="{html.escape(label)}">'
            f"<style>{_asset('attention_view.css')}</style>"
            f'<div class="av-live">{self._controls(langs)}'
            f'<div class="av-scroll">{self._grid(langs)}</div>'
            f'<div class="av-readout" aria-live="polite">{hint}</div></div>'
            f"{self._print_images(langs)}{caption}"
            f'<script type="application/json" class="av-data">{self._data()}</script>'
            f"<script>{_asset('attention_view.js').replace('__ID__', uid)}</script></div>"
        )

    # -- PNG -------------------------------------------------------------------------------

    def _png(self, lang: str | None = None) -> bytes:
        """The PNG in ``lang`` (default: the first of the figure languages), drawn once."""
        lang = lang or plotting.figure_langs()[0]
        if lang not in self._pngs:
            self._pngs[lang] = self._draw_png(lang)
        return self._pngs[lang]

    def _draw_png(self, lang: str) -> bytes:
        """Every panel (up to 16: layers x heads in reading order) as heatmaps in a grid."""
        from matplotlib.figure import Figure  # no pyplot: a view never touches the cell's figures

        pick = 0 if lang == "ko" else 1
        *lead, num_q, num_k = self.shape
        panels = self.weights.reshape(-1, num_q, num_k)[:16]
        fit = max(1, int(7.0 // (num_k * 0.16 + 0.7)))  # panels per row at the column width
        cols = min(len(panels), lead[-1] if lead else 1, fit)
        rows = math.ceil(len(panels) / cols)
        cell = min(0.28, (7.0 / cols - 0.7) / num_k)
        width = min(plotting.MAX_WIDTH_IN - 0.2, cols * (num_k * cell + 0.7) + 1.2)
        height = min(9.0, rows * (num_q * cell + 0.9) + 0.6)
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False)
        image = None
        for n, ax in enumerate(axes.flat):
            if n >= len(panels):
                ax.axis("off")
                continue
            image = ax.imshow(panels[n], cmap="Reds", vmin=0, vmax=1)
            first_col, last_row = n % cols == 0, n + cols >= len(panels)
            # tick labels on the outer panels only (ticks cost time to lay out)
            if last_row:
                ax.set_xticks(range(num_k), self.keys, rotation=90, fontsize=8)
            else:
                ax.set_xticks([])
            if first_col:
                ax.set_yticks(range(num_q), self.queries, fontsize=8)
            else:
                ax.set_yticks([])
            if lead:
                index = np.unravel_index(n, lead)
                ax.set_title(" · ".join(f"{self.titles[a][pick]} {i + 1}"
                                        for a, i in enumerate(index)), fontsize=8)  # fmt: skip
        fig.supxlabel(("키", "keys")[pick], fontsize=9)
        fig.supylabel(("쿼리", "queries")[pick], fontsize=9)
        fig.colorbar(image, ax=axes, shrink=0.8)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)  # the constrained layout already fits
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self._png()

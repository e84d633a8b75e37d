"""The diagram vocabulary: boxes, tensors, arrows, groups, masks, caches and residual paths.

Every architecture figure of the book is drawn with these few parts, so a query looks like a
query, a mask like a mask and a residual path like a residual path in every chapter. A
:class:`Diagram` is a Matplotlib figure whose data units are inches (``x`` from 0 to ``width``,
``y`` from 0 to ``height``, origin at the bottom left), so sizes and gaps read as they print.
Labels are plain strings or ``(korean, english)`` pairs, which the diagram translates with the
``t(ko, en)`` callback that :func:`d2lite.bilingual` passes to a drawing function.

:meth:`Diagram.finish` measures every label with Matplotlib's renderer and raises
``ValueError`` when one spills out of its box, comes within :data:`CLEARANCE` of another label
or a part, is crossed by an arrow, is clipped by the figure's edge or is set smaller than
:data:`MIN_FONT_PT` (and when an arrow runs through a part or two parts touch): a figure that
cannot be read does not reach the page. :func:`trace` runs a module on a small batch to learn
the shapes a diagram prints, and :func:`draw` finds the diagram of a module by its class.
"""

from __future__ import annotations

import copy
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from matplotlib import patches
from matplotlib import pyplot as plt
from matplotlib.colors import LinearSegmentedColormap, to_rgb
from matplotlib.path import Path as MplPath
from torch import nn

from .. import plotting  # noqa: F401  (registers the Korean font)

__all__ = [
    "DRAWERS",
    "copy_module",
    "Diagram",
    "CLEARANCE",
    "MIN_FONT_PT",
    "PALETTE",
    "Palette",
    "Part",
    "Role",
    "causal_mask",
    "contrast",
    "draw",
    "drawer",
    "format_shape",
    "padding_mask",
    "role_cmap",
    "shape_of",
    "trace",
    "Trace",
]

#: Smallest font (points, at the drawn size) that any diagram label may use.
MIN_FONT_PT = 9.0
#: Widest diagram (inches): the site's text column is about 7 in (see plotting.MAX_WIDTH_IN).
MAX_WIDTH_IN = 7.0
#: Font sizes (points) of the parts' texts.
FONT = {"label": 11.0, "sub": 9.5, "shape": 9.5, "title": 11.5, "note": 9.5, "arrow": 9.5}
#: Smallest gaps (inches) that :meth:`Diagram.problems` accepts between two labels or a label
#: and a part, and between two parts: closer than that, they read as touching.
CLEARANCE = {"label": 0.03, "part": 0.06}


@dataclass(frozen=True)
class Role:
    """Colors of one role: ``fill`` for areas, ``edge`` for outlines, arrows and colored
    text on white, ``ink`` for text drawn on ``fill``."""

    name: str
    fill: str
    edge: str
    ink: str = "#1a1a1a"


@dataclass(frozen=True)
class Palette:
    """The book's colors by role. One instance, :data:`PALETTE`, is used by every diagram,
    by the attention views and by heatmaps that color queries, keys or values."""

    query: Role
    key: Role
    value: Role
    output: Role
    state: Role
    mask: Role
    cache: Role
    residual: Role
    highlight: Role
    neutral: Role
    gray: Role
    background: str = "#ffffff"

    @property
    def roles(self) -> dict[str, Role]:
        """Every role by name."""
        return {
            name: getattr(self, name)
            for name in ("query", "key", "value", "output", "state", "mask", "cache",
                         "residual", "highlight", "neutral", "gray")
        }  # fmt: skip

    def __getitem__(self, name: str) -> Role:
        roles = self.roles
        if name not in roles:
            raise ValueError(f"role must be one of {sorted(roles)}, got {name!r}")
        return roles[name]


# Blue, orange and green for query, key and value: they stay apart for the common forms of
# color blindness, and their edges differ in lightness (value darkest, key lightest). Purple
# for outputs, olive-yellow for recurrent state, teal for caches, grays for masks and residual
# paths, crimson for the highlight. Every edge color is dark enough to carry text on white
# (contrast >= 4.5:1), and every fill is light enough for the near-black ink (> 12:1).
PALETTE = Palette(
    query=Role("query", fill="#d6e6f7", edge="#1f5fa8"),
    key=Role("key", fill="#fddcb8", edge="#b85a00"),
    value=Role("value", fill="#c9e8d2", edge="#0e5a2c"),
    output=Role("output", fill="#e7dcf2", edge="#6a3d9a"),
    state=Role("state", fill="#f5edbf", edge="#6b5d00"),
    mask=Role("mask", fill="#d9d9d9", edge="#595959"),
    cache=Role("cache", fill="#d2edef", edge="#00696f"),
    residual=Role("residual", fill="#eeeeee", edge="#4d4d4d"),
    highlight=Role("highlight", fill="#fbdde6", edge="#c0134f"),
    neutral=Role("neutral", fill="#f0f0f0", edge="#404040"),
    gray=Role("gray", fill="#f2f2f2", edge="#a6a6a6", ink="#595959"),
)


def _luminance(color: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colors (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def role_cmap(role: str | Role) -> LinearSegmentedColormap:
    """A color map from white to a role's edge color, for heatmaps of queries, keys or values
    (``d2l.show_heatmaps(..., cmap=d2l.diagrams.role_cmap("query"))``)."""
    if isinstance(role, str):
        role = PALETTE[role]
    if not isinstance(role, Role):
        raise TypeError(f"role must be a role name or a Role, got {type(role).__name__}")
    return LinearSegmentedColormap.from_list(f"d2l_{role.name}", ["#ffffff", role.fill, role.edge])


def format_shape(shape: Iterable[int]) -> str:
    """``(2, 10, 32)`` for a tensor shape; a 1-tuple keeps its comma: ``(4,)``."""
    dims = tuple(int(s) for s in shape)
    if not dims:
        return "()"
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def causal_mask(n: int) -> np.ndarray:
    """(n, n) booleans: query i sees keys 0..i (True = visible)."""
    _positive(n, "n")
    return np.tril(np.ones((n, n), dtype=bool))


def padding_mask(num_queries: int, num_keys: int, valid_len: int) -> np.ndarray:
    """(num_queries, num_keys) booleans: every query sees the first ``valid_len`` keys."""
    _positive(num_queries, "num_queries")
    _positive(num_keys, "num_keys")
    if not isinstance(valid_len, int) or not 0 <= valid_len <= num_keys:
        raise ValueError(f"valid_len must be an int in [0, {num_keys}], got {valid_len!r}")
    return np.broadcast_to(np.arange(num_keys) < valid_len, (num_queries, num_keys)).copy()


def _positive(n, name: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{name} must be a positive int, got {n!r}")


@dataclass
class Part:
    """One drawn part: its kind, frame (inches), role and the texts that must fit in it."""

    name: str
    kind: str
    x0: float
    y0: float
    x1: float
    y1: float
    role: str | None = None
    label: str | None = None
    shape: tuple[int, ...] | None = None
    artists: list = field(default_factory=list)
    texts: list = field(default_factory=list)  # Matplotlib Text objects inside the frame
    solid: bool = True  # other parts and free labels may not overlap it
    free: list = field(default_factory=list)  # its Text objects outside the frame
    members: list = field(default_factory=list)  # a group's parts
    visible: np.ndarray | None = None  # a mask's visible cells
    depth: float = 0.0  # a tensor's sheets behind the front one reach this far up and right

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """Everything the part covers (x0, y0, x1, y1), its back sheets included."""
        return (self.x0, self.y0, self.x1 + self.depth, self.y1 + self.depth)

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def anchor(self, side: str, at: float = 0.5) -> tuple[float, float]:
        """A point on a side ("left", "right", "top", "bottom"; ``at`` from 0 to 1 along it,
        bottom to top or left to right, 0.5 its midpoint) or the "center"."""
        if isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at <= 1:
            raise ValueError(f"at must be a number in [0, 1], got {at!r}")
        cx, cy = self.center
        y = self.y0 + at * (self.y1 - self.y0)
        x = self.x0 + at * (self.x1 - self.x0)
        points = {"left": (self.x0, y), "right": (self.x1, y), "top": (x, self.y1),
                  "bottom": (x, self.y0), "center": (cx, cy)}  # fmt: skip
        if side not in points:
            raise ValueError(f"side must be one of {sorted(points)}, got {side!r}")
        return points[side]


Label = str | tuple[str, str] | None
Point = tuple[float, float]


class Diagram:
    """A figure for drawing an architecture, measured in inches.

    ``width`` x ``height`` inches (width at most :data:`MAX_WIDTH_IN`); ``t`` is the
    ``t(ko, en)`` callback of :func:`d2lite.bilingual` (English when omitted); ``title`` is drawn
    at the top; ``palette`` defaults to :data:`PALETTE` (tests pass another to prove that no
    color is hard-coded). Parts are added with :meth:`box`, :meth:`tensor`, :meth:`arrow`,
    :meth:`group`, :meth:`add`, :meth:`residual`, :meth:`mask`, :meth:`cache` and :meth:`text`;
    every part is
    also kept by name in ``parts`` and every shape printed in ``shapes`` (name -> tuple), so a
    test can compare the figure with the module it shows. Call :meth:`finish` last.
    """

    def __init__(
        self,
        width: float,
        height: float,
        *,
        t: Callable[[str, str], str] | None = None,
        title: Label = None,
        palette: Palette | None = None,
    ) -> None:
        for name, v in (("width", width), ("height", height)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise ValueError(f"{name} must be a positive number of inches, got {v!r}")
        if width > MAX_WIDTH_IN:
            raise ValueError(
                f"width must be at most {MAX_WIDTH_IN} in (the text column), got {width}"
            )
        if t is not None and not callable(t):
            raise TypeError(f"t must be the t(ko, en) callback, got {type(t).__name__}")
        palette = PALETTE if palette is None else palette
        if not isinstance(palette, Palette):
            raise TypeError(f"palette must be a Palette, got {type(palette).__name__}")
        self.width, self.height = float(width), float(height)
        self.t = t or (lambda ko, en: en)
        self.palette = palette
        self.fig = plt.figure(figsize=(width, height), facecolor=palette.background)
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.set_aspect("equal")
        self.ax.axis("off")
        self.parts: dict[str, Part] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.free_texts: list = []  # texts outside any part (arrow labels, titles, notes)
        self._focus: list[Part] = []
        self._gray_rest = False
        self._paths: list[tuple[str, list[Point]]] = []  # every arrow's polyline
        self._count = 0
        if title is not None:
            self.text(width / 2, height - 0.05, title, size=FONT["title"], va="top",
                      weight="bold", name="title")  # fmt: skip

    # -- helpers -----------------------------------------------------------------------------
    def tr(self, label: Label) -> str:
        """The text of a label: a string as it is, a (korean, english) pair through ``t``."""
        if label is None:
            return ""
        if isinstance(label, str):
            return label
        if isinstance(label, tuple) and len(label) == 2 and all(isinstance(s, str) for s in label):
            return self.t(*label)
        raise TypeError(f"a label must be a str or a (korean, english) pair, got {label!r}")

    def _role(self, role: str | None) -> Role:
        return self.palette[role or "neutral"]

    def _name(self, name: str | None, kind: str) -> str:
        self._count += 1
        name = name or f"{kind}{self._count}"
        if name in self.parts:
            raise ValueError(f"name {name!r} is already used by a part of this diagram")
        return name

    def _renderer(self):
        return self.fig.canvas.get_renderer()

    def text_size(self, s: str, size: float, **kw) -> tuple[float, float]:
        """Width and height (inches) that ``s`` takes at ``size`` points."""
        txt = self.ax.text(0, 0, s, fontsize=size, **kw)
        bb = txt.get_window_extent(self._renderer())
        txt.remove()
        return bb.width / self.fig.dpi, bb.height / self.fig.dpi

    def _add(self, part: Part) -> Part:
        self.parts[part.name] = part
        if part.shape is not None and part.kind != "mask":  # printed shapes only
            self.shapes[part.name] = part.shape
        return part

    def _frame(self, x, y, w, h, role: Role, *, style="round", lw=1.3, ls="-", hatch=None,
               fill=None, z=2):  # fmt: skip
        box = patches.FancyBboxPatch(
            (x - w / 2, y - h / 2), w, h,
            boxstyle="round,pad=0,rounding_size=0.06" if style == "round" else "square,pad=0",
            fc=fill or role.fill, ec=role.edge, lw=lw, ls=ls, hatch=hatch, zorder=z,
        )  # fmt: skip
        self.ax.add_patch(box)
        return box

    # -- parts -------------------------------------------------------------------------------
    def box(
        self,
        x: float,
        y: float,
        label: Label,
        sub: Label = None,
        *,
        kind: str = "layer",
        role: str | None = None,
        w: float | None = None,
        h: float | None = None,
        name: str | None = None,
    ) -> Part:
        """An operation centered at (x, y): ``label`` with an optional smaller ``sub`` line.

        ``kind`` "layer" (has weights: filled), "op" (no weights: white, thin outline) or "io"
        (a token or value: no frame). ``w`` and ``h`` default to the text's size plus a margin;
        a given size that the text does not fit is reported by :meth:`finish`.
        """
        if kind not in ("layer", "op", "io"):
            raise ValueError(f"kind must be 'layer', 'op' or 'io', got {kind!r}")
        r = self._role(role)
        main, small = self.tr(label), self.tr(sub)
        lw_, lh = self.text_size(main, FONT["label"])
        sw, sh = self.text_size(small, FONT["sub"]) if small else (0.0, 0.0)
        w = w if w is not None else max(lw_, sw) + 0.24
        h = h if h is not None else lh + (sh + 0.04 if small else 0) + 0.18
        name = self._name(name, "box")
        artists = []
        if kind != "io":
            fill = r.fill if (kind == "layer" or role) else self.palette.background
            lw = 1.4 if kind == "layer" else 1.0
            artists.append(self._frame(x, y, w, h, r, fill=fill, lw=lw))
        texts = []
        if small:
            gap = (lh + sh + 0.04) / 2
            texts.append(self.ax.text(x, y + gap - lh / 2, main, fontsize=FONT["label"],
                                      ha="center", va="center", color=r.ink, zorder=4))
            texts.append(self.ax.text(x, y - gap + sh / 2, small, fontsize=FONT["sub"],
                                      ha="center", va="center", color=r.ink, zorder=4))
        else:
            texts.append(self.ax.text(x, y, main, fontsize=FONT["label"], ha="center",
                                      va="center", color=r.ink, zorder=4))  # fmt: skip
        return self._add(Part(name, kind, x - w / 2, y - h / 2, x + w / 2, y + h / 2, role,
                              main, None, artists, texts, solid=True))  # fmt: skip

    def tensor(
        self,
        x: float,
        y: float,
        label: Label,
        shape: Sequence[int] | None,
        *,
        role: str | None = None,
        w: float | None = None,
        h: float | None = None,
        name: str | None = None,
    ) -> Part:
        """A tensor centered at (x, y): a stacked block with ``label`` and its ``shape`` text,
        e.g. "(2, 10, 32)". The shape is recorded in ``shapes`` under the part's name."""
        r = self._role(role or "neutral")
        main = self.tr(label)
        dims = None if shape is None else tuple(int(s) for s in shape)
        shape_txt = format_shape(dims) if dims is not None else ""
        lw_, lh = self.text_size(main, FONT["label"])
        sw, sh = (self.text_size(shape_txt, FONT["shape"], family="DejaVu Sans Mono")
                  if shape_txt else (0.0, 0.0))
        w = w if w is not None else max(lw_, sw) + 0.26
        h = h if h is not None else lh + (sh + 0.05 if shape_txt else 0) + 0.2
        name = self._name(name, "tensor")
        depth = 0.06  # the two sheets behind the front one: a tensor has more than one axis
        artists = []
        for k in (2, 1):
            sheet = patches.Rectangle((x - w / 2 + k * depth, y - h / 2 + k * depth), w, h,
                                      fc=r.fill, ec=r.edge, lw=0.9, zorder=1.5)  # fmt: skip
            self.ax.add_patch(sheet)
            artists.append(sheet)
        artists.append(self._frame(x, y, w, h, r, style="square", lw=1.4))
        texts = []
        if shape_txt:
            gap = (lh + sh + 0.05) / 2
            texts.append(self.ax.text(x, y + gap - lh / 2, main, fontsize=FONT["label"],
                                      ha="center", va="center", color=r.ink, zorder=4))
            texts.append(self.ax.text(x, y - gap + sh / 2, shape_txt, fontsize=FONT["shape"],
                                      ha="center", va="center", color=r.ink, zorder=4,
                                      family="DejaVu Sans Mono"))  # fmt: skip
        else:
            texts.append(self.ax.text(x, y, main, fontsize=FONT["label"], ha="center",
                                      va="center", color=r.ink, zorder=4))  # fmt: skip
        part = Part(name, "tensor", x - w / 2, y - h / 2, x + w / 2, y + h / 2, role, main, dims,
                    artists, texts, depth=2 * depth)  # fmt: skip
        return self._add(part)

    def add(self, x: float, y: float, *, r: float = 0.13, name: str | None = None) -> Part:
        """A sum node (a circle with a plus) at (x, y), where a residual path joins."""
        role = self.palette.residual
        name = self._name(name, "add")
        circle = patches.Circle((x, y), r, fc=self.palette.background, ec=role.edge, lw=1.4,
                                zorder=3)  # fmt: skip
        self.ax.add_patch(circle)
        bar = r * 0.6
        lines = [self.ax.plot([x - bar, x + bar], [y, y], color=role.edge, lw=1.4, zorder=4)[0],
                 self.ax.plot([x, x], [y - bar, y + bar], color=role.edge, lw=1.4, zorder=4)[0]]
        return self._add(Part(name, "add", x - r, y - r, x + r, y + r, "residual", "+", None,
                              [circle, *lines], []))  # fmt: skip

    def _end(self, p: Part | Point, toward: Point, side: str | None) -> Point:
        if not isinstance(p, Part):
            if len(p) != 2:
                raise ValueError(f"an arrow end must be a Part or an (x, y) point, got {p!r}")
            return (float(p[0]), float(p[1]))
        if side:
            return p.anchor(side)
        cx, cy = p.center
        dx, dy = toward[0] - cx, toward[1] - cy
        if p.kind == "add":  # a circle: leave or enter along the line between the centers
            d = math.hypot(dx, dy) or 1.0
            rr = p.width / 2
            return (cx + dx / d * rr, cy + dy / d * rr)
        # the side that faces the other end (scaled by the frame, so a wide box prefers top/bottom)
        if abs(dx) * p.height >= abs(dy) * p.width:
            return p.anchor("right" if dx > 0 else "left")
        return p.anchor("top" if dy > 0 else "bottom")

    def arrow(
        self,
        a: Part | Point,
        b: Part | Point,
        label: Label = None,
        *,
        shape: Sequence[int] | None = None,
        role: str | None = None,
        via: Sequence[Point] = (),
        start: str | None = None,
        end: str | None = None,
        label_side: str = "auto",
        ls: str = "-",
        lw: float = 1.4,
        name: str | None = None,
    ) -> Part:
        """An arrow from ``a`` to ``b`` (parts or points), through the points ``via``.

        ``start``/``end`` pick the sides it leaves and enters ("left", "right", "top", "bottom";
        default: the sides that face each other). ``label`` and ``shape`` (recorded in
        ``shapes``) are written beside the longest segment; ``label_side`` "left", "right",
        "above", "below" or "auto".
        """
        r = self._role(role or "neutral")
        via = [tuple(map(float, p)) for p in via]
        first_target = via[0] if via else (b.center if isinstance(b, Part) else b)
        p0 = self._end(a, first_target, start)
        last_source = via[-1] if via else p0
        p1 = self._end(b, last_source, end)
        points = [p0, *via, p1]
        path = MplPath(points, [MplPath.MOVETO] + [MplPath.LINETO] * (len(points) - 1))
        art = patches.FancyArrowPatch(path=path, arrowstyle="-|>", mutation_scale=12,
                                      color=r.edge, lw=lw, ls=ls, zorder=2.5,
                                      shrinkA=0, shrinkB=0)  # fmt: skip
        self.ax.add_patch(art)
        name = self._name(name, "arrow")
        dims = None if shape is None else tuple(int(s) for s in shape)
        lines = [s for s in (self.tr(label), format_shape(dims) if dims is not None else "") if s]
        texts = []
        if lines:
            seg = max(zip(points, points[1:]), key=lambda s: math.dist(*s))
            (xa, ya), (xb, yb) = seg
            mx, my = (xa + xb) / 2, (ya + yb) / 2
            vertical = abs(xb - xa) < abs(yb - ya)
            side = label_side if label_side != "auto" else ("right" if vertical else "above")
            text = "\n".join(lines)
            off = 0.08
            kw = {"left": dict(ha="right", va="center", xy=(mx - off, my)),
                  "right": dict(ha="left", va="center", xy=(mx + off, my)),
                  "above": dict(ha="center", va="bottom", xy=(mx, my + off)),
                  "below": dict(ha="center", va="top", xy=(mx, my - off))}  # fmt: skip
            if side not in kw:
                raise ValueError(
                    f"label_side must be 'left', 'right', 'above', 'below' or 'auto', got {side!r}"
                )
            spec = kw[side]
            txt = self.ax.text(*spec["xy"], text, fontsize=FONT["arrow"], ha=spec["ha"],
                               va=spec["va"], color=r.ink if role is None else r.edge,
                               linespacing=1.15, zorder=4)  # fmt: skip
            self.free_texts.append(txt)
            texts.append(txt)
        xs, ys = zip(*points)
        self._paths.append((name, points))
        part = Part(name, "arrow", min(xs), min(ys), max(xs), max(ys), role,
                    self.tr(label) or None, dims, [art], [], solid=False)  # fmt: skip
        part.free = texts  # checked against every label and part
        return self._add(part)

    def residual(
        self,
        a: Part | Point,
        b: Part,
        *,
        side: str = "left",
        offset: float = 0.35,
        label: Label = None,
        name: str | None = None,
    ) -> Part:
        """The residual (skip) path from ``a`` around to ``b`` (usually an :meth:`add` node):
        out of ``a`` on ``side`` ("left", "right", "top", "bottom") by ``offset`` inches past
        both ends, along, and into ``b`` from the same side. Drawn the same way in every
        diagram: the residual color, solid, with an arrowhead."""
        if side not in ("left", "right", "top", "bottom"):
            raise ValueError(f"side must be 'left', 'right', 'top' or 'bottom', got {side!r}")
        if not isinstance(b, Part):
            raise TypeError(f"b must be a Part (an add node), got {type(b).__name__}")
        start = a.anchor(side) if isinstance(a, Part) else (float(a[0]), float(a[1]))
        end = b.anchor(side)
        if side in ("left", "right"):
            pick = min if side == "left" else max
            x_out = pick(start[0], end[0]) + (-offset if side == "left" else offset)
            via = [(x_out, start[1]), (x_out, end[1])]
        else:
            pick = min if side == "bottom" else max
            y_out = pick(start[1], end[1]) + (-offset if side == "bottom" else offset)
            via = [(start[0], y_out), (end[0], y_out)]
        label_side = {"left": "left", "right": "right", "top": "above", "bottom": "below"}[side]
        return self.arrow(start, end, label, role="residual", via=via, label_side=label_side,
                          name=name or f"residual{self._count + 1}")

    def group(
        self,
        parts: Sequence[Part],
        title: Label = None,
        *,
        pad: float = 0.14,
        role: str | None = None,
        title_side: str = "top",
        shape: Sequence[int] | None = None,
        name: str | None = None,
    ) -> Part:
        """A dashed frame around ``parts`` with a ``title`` above it (e.g. "x N layers"), below
        it (``title_side="bottom"``) or to its right (``"right"``). A ``shape`` (recorded in
        ``shapes``) follows the title: "encoder (3, 1, 32)"."""
        if not parts or not all(isinstance(p, Part) for p in parts):
            raise ValueError("parts must be a non-empty sequence of the diagram's parts")
        r = self._role(role or "neutral")
        x0 = min(p.extent[0] for p in parts) - pad
        y0 = min(p.extent[1] for p in parts) - pad
        x1 = max(p.extent[2] for p in parts) + pad
        y1 = max(p.extent[3] for p in parts) + pad
        frame = patches.FancyBboxPatch((x0, y0), x1 - x0, y1 - y0,
                                       boxstyle="round,pad=0,rounding_size=0.1", fc="none",
                                       ec=r.edge, lw=1.1, ls=(0, (4, 3)), zorder=1)  # fmt: skip
        self.ax.add_patch(frame)
        name = self._name(name, "group")
        dims = None if shape is None else tuple(int(s) for s in shape)
        part = Part(name, "group", x0, y0, x1, y1, role, self.tr(title) or None, dims, [frame],
                    [], solid=False)  # fmt: skip
        part.members = list(parts)
        if dims is not None:
            title = " ".join(s for s in (self.tr(title), format_shape(dims)) if s)
        if title is not None:
            if title_side == "top":
                txt = self.ax.text(x0 + 0.06, y1 + 0.05, self.tr(title), fontsize=FONT["note"],
                                   ha="left", va="bottom", color=r.edge)
            elif title_side == "bottom":
                txt = self.ax.text(x1 - 0.06, y0 - 0.05, self.tr(title), fontsize=FONT["note"],
                                   ha="right", va="top", color=r.edge)
            elif title_side == "right":
                txt = self.ax.text(x1 + 0.08, (y0 + y1) / 2, self.tr(title), fontsize=FONT["note"],
                                   ha="left", va="center", color=r.edge)
            else:
                raise ValueError(
                    f"title_side must be 'top', 'bottom' or 'right', got {title_side!r}"
                )
            self.free_texts.append(txt)
            part.free = [txt]
        return self._add(part)

    def mask(
        self,
        x: float,
        y: float,
        visible,
        *,
        cell: float = 0.2,
        values=None,
        fmt: str = "{:.2f}",
        label: Label = None,
        name: str | None = None,
    ) -> Part:
        """A (queries, keys) grid centered at (x, y): visible cells white (or showing ``values``),
        hidden cells hatched in the mask color. ``visible`` is a 2-D boolean array
        (:func:`causal_mask`, :func:`padding_mask`); the same look marks a mask everywhere.
        A hidden cell shows 0 (its weight) unless its value is NaN: then only its hatching.
        ``label`` is written above the grid."""
        vis = np.asarray(visible)
        if vis.ndim != 2 or vis.dtype != bool or 0 in vis.shape:
            raise ValueError(
                f"visible must be a non-empty 2-D boolean array, got {vis.dtype} {vis.shape}"
            )
        vals = None
        if values is not None:
            vals = np.asarray(values, dtype=float)
            if vals.shape != vis.shape:
                raise ValueError(f"values must have shape {vis.shape}, got {vals.shape}")
        m = self.palette.mask
        rows, cols = vis.shape
        x0, y1 = x - cols * cell / 2, y + rows * cell / 2
        artists, texts = [], []
        for i in range(rows):
            for j in range(cols):
                cx0, cy0 = x0 + j * cell, y1 - (i + 1) * cell
                if vis[i, j]:
                    rect = patches.Rectangle((cx0, cy0), cell, cell, fc=self.palette.background,
                                             ec=m.edge, lw=0.6, zorder=2)  # fmt: skip
                else:
                    rect = patches.Rectangle((cx0, cy0), cell, cell, fc=m.fill, ec=m.edge,
                                             lw=0.6, hatch="////", zorder=2)  # fmt: skip
                self.ax.add_patch(rect)
                artists.append(rect)
                if vals is not None and (vis[i, j] or not np.isnan(vals[i, j])):
                    s = fmt.format(vals[i, j]).replace("0.", ".", 1) if vis[i, j] else "0"
                    txt = self.ax.text(cx0 + cell / 2, cy0 + cell / 2, s, fontsize=MIN_FONT_PT,
                                       ha="center", va="center", color=m.ink, zorder=4,
                                       bbox=None if vis[i, j] else
                                       dict(fc=self.palette.background, ec="none", pad=0.3))
                    txt.d2l_frame = (cx0, cy0, cx0 + cell, cy0 + cell)
                    texts.append(txt)
        frame = patches.Rectangle((x0, y1 - rows * cell), cols * cell, rows * cell, fc="none",
                                  ec=m.edge, lw=1.2, zorder=3)  # fmt: skip
        self.ax.add_patch(frame)
        artists.append(frame)
        name = self._name(name, "mask")
        part = Part(name, "mask", x0, y1 - rows * cell, x0 + cols * cell, y1, "mask",
                    self.tr(label) or None, (rows, cols), artists, texts)  # fmt: skip
        part.visible = vis
        if label is not None:
            txt = self.ax.text(x, y1 + 0.06, self.tr(label), fontsize=FONT["note"], ha="center",
                               va="bottom", color=m.ink)  # fmt: skip
            self.free_texts.append(txt)
            part.free = [txt]
        return self._add(part)

    def cache(
        self,
        x: float,
        y: float,
        rows: int,
        *,
        label: Label = None,
        new: int = 1,
        w: float = 1.1,
        row_h: float = 0.14,
        name: str | None = None,
    ) -> Part:
        """A cache centered at (x, y): ``rows`` stacked rows, one per cached position, the last
        ``new`` of them filled (what this step added), with ``label`` above. Drawn the same way
        wherever a cache appears (the KV cache of decoding)."""
        _positive(rows, "rows")
        if isinstance(new, bool) or not isinstance(new, int) or not 0 <= new <= rows:
            raise ValueError(f"new must be an int in [0, rows={rows}], got {new!r}")
        c = self.palette.cache
        h = rows * row_h
        x0, ytop = x - w / 2, y + h / 2
        artists = []
        for i in range(rows):
            fresh = i >= rows - new
            rect = patches.Rectangle((x0, ytop - (i + 1) * row_h), w, row_h,
                                     fc=c.edge if fresh else c.fill, ec=c.edge, lw=0.7, zorder=2)
            self.ax.add_patch(rect)
            artists.append(rect)
        frame = patches.Rectangle((x0, ytop - h), w, h, fc="none", ec=c.edge, lw=1.6, zorder=3)
        self.ax.add_patch(frame)
        artists.append(frame)
        name = self._name(name, "cache")
        part = Part(name, "cache", x0, ytop - h, x0 + w, ytop, "cache", self.tr(label) or None,
                    None, artists, [])  # fmt: skip
        if label is not None:
            txt = self.ax.text(x, ytop + 0.06, self.tr(label), fontsize=FONT["note"], ha="center",
                               va="bottom", color=c.edge)  # fmt: skip
            self.free_texts.append(txt)
            part.free = [txt]
        return self._add(part)

    def text(
        self,
        x: float,
        y: float,
        s: Label,
        *,
        size: float = FONT["note"],
        role: str | None = None,
        ha: str = "center",
        va: str = "center",
        name: str | None = None,
        **kw,
    ) -> Part:
        """A free label at (x, y) (a note, a token, a formula), in a role's color if given."""
        color = self._role(role).edge if role else self.palette.neutral.ink
        txt = self.ax.text(x, y, self.tr(s), fontsize=size, ha=ha, va=va, color=color,
                           zorder=4, **kw)  # fmt: skip
        self.free_texts.append(txt)
        name = self._name(name, "text")
        part = Part(name, "text", x, y, x, y, role, self.tr(s), None, [], [], solid=False)
        part.free = [txt]
        return self._add(part)

    def highlight(self, *parts: Part, gray_rest: bool = True) -> None:
        """Mark ``parts`` as what the paragraph talks about: :meth:`finish` outlines them in the
        highlight color and (``gray_rest``) grays every other part, whose labels stay
        readable. With ``gray_rest=False`` only the outline is drawn."""
        for p in parts:
            if not isinstance(p, Part) or self.parts.get(p.name) is not p:
                raise ValueError(f"highlight takes parts of this diagram, got {p!r}")
        if not isinstance(gray_rest, bool):
            raise TypeError(f"gray_rest must be a bool, got {type(gray_rest).__name__}")
        self._focus.extend(parts)
        self._gray_rest = self._gray_rest or gray_rest

    # -- finishing ---------------------------------------------------------------------------
    def _apply_focus(self) -> None:
        if not self._focus:
            return
        gray, hl = self.palette.gray, self.palette.highlight
        focus = {p.name for p in self._focus}
        for p in self._focus:
            if p.kind in ("arrow", "text"):
                for a in p.artists:
                    a.set_color(hl.edge)
                    a.set_linewidth(2.4)
                for txt in p.free:
                    txt.set_color(hl.edge)
                continue
            x0, y0, x1, y1 = p.extent
            ring = patches.FancyBboxPatch((x0 - 0.05, y0 - 0.05), x1 - x0 + 0.1, y1 - y0 + 0.1,
                                          boxstyle="round,pad=0,rounding_size=0.08", fc="none",
                                          ec=hl.edge, lw=2.6, zorder=3.5)  # fmt: skip
            self.ax.add_patch(ring)
        for p in self.parts.values():
            if not self._gray_rest or p.name in focus or p.kind == "group":
                continue
            for a in p.artists:
                if isinstance(a, patches.FancyArrowPatch):
                    a.set_color(gray.edge)
                elif isinstance(a, patches.Patch):
                    a.set_edgecolor(gray.edge)
                    if a.get_facecolor()[3] > 0 and not _is_white(a.get_facecolor()):
                        a.set_facecolor(gray.fill)
                else:
                    a.set_color(gray.edge)
            for txt in [*p.texts, *p.free]:
                txt.set_color(gray.ink)

    def finish(self, check: bool | None = None) -> Diagram:
        """Apply the highlight, then check the layout (see :meth:`problems`) and return the
        diagram. A problem raises ``ValueError`` listing every one when ``check`` is true, or,
        by default, when ``D2LITE_STRICT_FONTS=1`` (as the book's build and tests run);
        otherwise (a reader's notebook, whose fonts may measure a little differently) it is a
        warning and the figure is still drawn. ``check=False`` skips the check."""
        self._apply_focus()
        if check is None:
            check = "strict" if os.environ.get("D2LITE_STRICT_FONTS") == "1" else "warn"
        if check:
            found = self.problems()
            if found:
                message = "the diagram's labels do not fit:\n  " + "\n  ".join(found)
                if check == "warn":
                    warnings.warn(message, UserWarning, stacklevel=2)
                else:
                    raise ValueError(message)
        return self

    def _bbox(self, txt) -> tuple[float, float, float, float]:
        bb = txt.get_window_extent(self._renderer())
        (x0, y0), (x1, y1) = self.ax.transData.inverted().transform([[bb.x0, bb.y0],
                                                                      [bb.x1, bb.y1]])
        return (x0, y0, x1, y1)

    def problems(self) -> list[str]:
        """What a reader could not read: a label outside its part, two labels that overlap, a
        free label over a part, two parts that overlap, text beyond the figure's edge, or a
        font smaller than :data:`MIN_FONT_PT`. An empty list when everything fits."""
        out = []
        eps = 0.01
        boxes = []  # (owner, text, bbox)
        for p in self.parts.values():
            for txt in p.texts:
                bb = self._bbox(txt)
                boxes.append((p.name, txt, bb))
                frame = getattr(txt, "d2l_frame", (p.x0, p.y0, p.x1, p.y1))  # a mask's cell
                if not _inside(bb, frame, eps):
                    out.append(f"{p.name}: label {txt.get_text()!r} does not fit in its frame")
        for txt in self.free_texts:
            boxes.append((None, txt, self._bbox(txt)))
        for _owner, txt, bb in boxes:
            if txt.get_fontsize() < MIN_FONT_PT - 1e-6:
                out.append(f"{txt.get_text()!r} is set at {txt.get_fontsize()} pt, "
                           f"below {MIN_FONT_PT} pt")  # fmt: skip
            if not _inside(bb, (0, 0, self.width, self.height), 0):
                out.append(f"{txt.get_text()!r} is cut off by the figure's edge")
        for i, (_, t1, b1) in enumerate(boxes):
            for _, t2, b2 in boxes[i + 1:]:
                if _overlap(b1, b2, -CLEARANCE["label"]):
                    out.append(f"labels {t1.get_text()!r} and {t2.get_text()!r} overlap")
        for _, txt, bb in boxes:  # no line may run through a label
            for name, points in self._paths:
                if any(_segment_hits(a, b, bb, eps) for a, b in zip(points, points[1:])):
                    out.append(f"{name} runs through the label {txt.get_text()!r}")
        solid = [p for p in self.parts.values() if p.solid]
        for name, points in self._paths:  # nor through a part (it may end on its edge)
            for p in solid:
                frame = (p.x0, p.y0, p.x1, p.y1)
                if any(_segment_hits(a, b, frame, eps) for a, b in zip(points, points[1:])):
                    out.append(f"{name} runs through {p.name}")
        for owner, txt, bb in boxes:
            if owner is not None:
                continue  # a label inside its own part (checked above)
            for p in solid:
                if _overlap(bb, p.extent, -CLEARANCE["label"]):
                    out.append(f"label {txt.get_text()!r} lies over {p.name}")
        for i, p in enumerate(solid):
            for q in solid[i + 1:]:
                if _overlap(p.extent, q.extent, -CLEARANCE["part"]):
                    out.append(f"parts {p.name} and {q.name} overlap")
            if not _inside(p.extent, (0, 0, self.width, self.height), 0):
                out.append(f"{p.name} is cut off by the figure's edge")
        return out

    def labels(self) -> list[str]:
        """Every text drawn, in drawing order (for tests and alt text)."""
        return [t.get_text() for t in self.ax.texts]

    def check_alt(self, alt: tuple[str, str]) -> None:
        """Raise ``ValueError`` if the alt text (a (korean, english) pair) is empty in either
        language or names a shape, such as "(2, 1, 10)", that the diagram does not print: the
        alt text then describes another configuration than the figure."""
        if (not isinstance(alt, tuple) or len(alt) != 2
                or not all(isinstance(a, str) for a in alt)):  # fmt: skip
            raise ValueError(f"alt must be a (korean, english) pair of strings, got {alt!r}")
        if not any("\uac00" <= ch <= "\ud7a3" for ch in alt[0]) or not alt[1].strip():
            raise ValueError(f"alt must say what the figure shows in Korean and in English, "
                             f"got {alt!r}")  # fmt: skip
        drawn = "\n".join(self.labels())
        missing = sorted({m for a in alt for m in re.findall(r"\(\d+(?:, \d+)*,?\)", a)
                          if m not in drawn})  # fmt: skip
        if missing:
            raise ValueError(f"the alt text names shapes the diagram does not print: {missing}")


def _is_white(rgba) -> bool:
    return all(c > 0.99 for c in rgba[:3])


def _inside(inner, outer, eps: float) -> bool:
    return (inner[0] >= outer[0] - eps and inner[1] >= outer[1] - eps
            and inner[2] <= outer[2] + eps and inner[3] <= outer[3] + eps)  # fmt: skip


def _segment_hits(a: Point, b: Point, box, eps: float) -> bool:
    """Whether the segment a-b passes through the rectangle ``box`` shrunk by ``eps``."""
    x0, y0, x1, y1 = box[0] + eps, box[1] + eps, box[2] - eps, box[3] - eps
    if x0 >= x1 or y0 >= y1:
        return False
    # Liang-Barsky clipping: the segment meets the rectangle if some parameter interval survives
    lo, hi = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            lo = max(lo, r)
        else:
            hi = min(hi, r)
        if lo > hi:
            return False
    return True


def _overlap(a, b, eps: float) -> bool:
    """Whether boxes a and b overlap by more than ``eps`` (a negative ``eps``: come closer than
    ``-eps``)."""
    return (min(a[2], b[2]) - max(a[0], b[0]) > eps
            and min(a[3], b[3]) - max(a[1], b[1]) > eps)  # fmt: skip



# -- drawn from the model ------------------------------------------------------------------------
def shape_of(x) -> tuple[int, ...] | tuple | None:
    """The shape of a tensor as a tuple of ints; of a tuple or list of outputs, a tuple of their
    shapes; ``None`` for anything else."""
    if isinstance(x, torch.Tensor):
        return tuple(x.shape)
    if isinstance(x, tuple | list):
        return tuple(shape_of(v) for v in x)
    return None


@dataclass
class Trace:
    """What one forward pass produced: the ``output`` and, for the module and every submodule
    that ran (by qualified name, "" for the module itself), the shape of its output, and the
    shapes of its inputs in ``inputs``. ``calls`` counts the calls of each; ``module`` is the
    copy that ran."""

    output: object
    shapes: dict[str, object]
    inputs: dict[str, object]
    calls: dict[str, int]
    module: nn.Module  # the copy that ran (its attention_weights, for example)

    def __getitem__(self, name: str):
        if name not in self.shapes:
            raise KeyError(f"no submodule {name!r} ran; these did: {sorted(self.shapes)}")
        return self.shapes[name]


def copy_module(module: nn.Module) -> nn.Module:
    """A deep copy of ``module``. Tensors a module keeps from a call with gradients (such as
    ``attention_weights`` after a training step) are not graph leaves, which ``copy.deepcopy``
    refuses; the copy holds them detached, and ``module`` stays as it was."""
    memo: dict[int, object] = {}

    def detach(value) -> None:
        if isinstance(value, torch.Tensor) and not value.is_leaf:
            memo[id(value)] = value.detach().clone()
        elif isinstance(value, (list, tuple)):
            for item in value:
                detach(item)
        elif isinstance(value, dict):
            for item in value.values():
                detach(item)

    for m in module.modules():
        for value in vars(m).values():
            detach(value)
    return copy.deepcopy(module, memo)


def trace(module: nn.Module, *args, **kwargs) -> Trace:
    """Run ``module(*args, **kwargs)`` once and record the shape every submodule produced.

    The pass runs on a copy of ``module`` in eval mode without gradients, with the random
    number generators restored afterwards, so drawing a figure changes nothing the chapter
    computes next (not its weights, its ``attention_weights`` nor the next random number).
    A submodule called several times (a decoder step by step) keeps its last shapes.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    model = copy_module(module).eval()
    shapes: dict[str, object] = {}
    inputs: dict[str, object] = {}
    calls: dict[str, int] = {}
    handles = []
    for name, sub in model.named_modules():
        def hook(_m, ins, out, _name=name):
            shapes[_name] = shape_of(out)
            inputs[_name] = shape_of(tuple(ins))
            calls[_name] = calls.get(_name, 0) + 1

        handles.append(sub.register_forward_hook(hook))
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            output = model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    return Trace(output, shapes, inputs, calls, model)


#: The drawing function of each module class, filled by :func:`drawer`; :func:`draw` reads it.
DRAWERS: dict[type, Callable[..., Diagram]] = {}


def drawer(*classes: type):
    """Register the decorated function as the diagram of modules of ``classes`` (and of their
    subclasses, unless one has its own), so that :func:`draw` finds it."""
    if not classes or not all(isinstance(c, type) for c in classes):
        raise TypeError(f"drawer takes one or more classes, got {classes!r}")

    def register(fn):
        for c in classes:
            DRAWERS[c] = fn
        return fn

    return register


def draw(model, *args, **kwargs) -> Diagram:
    """The diagram of ``model``, by the function registered for its class (the nearest in its
    method resolution order): ``d2l.diagrams.draw(d2l.DotProductAttention(), t=t)``."""
    for cls in type(model).__mro__:
        if cls in DRAWERS:
            return DRAWERS[cls](model, *args, **kwargs)
    known = sorted(c.__name__ for c in DRAWERS)
    raise TypeError(f"no diagram is registered for {type(model).__name__}; known: {known}")

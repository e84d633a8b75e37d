"""Chapter 6's diagrams: multi-head attention (split -> attention per head -> concatenate ->
W_o) and the reshape that turns heads into batch examples.

Both compute what they print: :func:`draw_multihead` runs the module on a small batch
(:func:`core.trace`, on a copy) and reads every shape from that run; :func:`draw_head_split`
runs the split and merge functions it is given on a tensor whose every feature holds the
number of its head, and draws where each head's slice went.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..multihead import MultiHeadAttention, transpose_output, transpose_qkv
from .core import Diagram, drawer, format_shape, trace

__all__ = ["HEAD_ROLES", "draw_head_split", "draw_multihead", "head_role"]

#: Palette roles that color the heads, in turn (the query, key and value colors are left to
#: the projections, the output color to W_o): head i gets ``HEAD_ROLES[i % 4]``, and its
#: number is printed in every band, so heads 1 and 5 still tell apart.
HEAD_ROLES = ("state", "cache", "highlight", "neutral")

MAX_HEADS = 8


def head_role(i: int) -> str:
    """The palette role of head ``i`` (0-based)."""
    return HEAD_ROLES[i % len(HEAD_ROLES)]


def _positive(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")
    return v


def _in_features(layer: nn.Module, default: int) -> int:
    """The input size a projection expects (a lazy layer takes ``default``)."""
    if isinstance(layer, nn.modules.lazy.LazyModuleMixin) and layer.has_uninitialized_params():
        return default
    return int(layer.in_features)


def _bands(dg: Diagram, x: float, y: float, h: int, width: float, name: str, *,
           height: float = 0.34) -> list:  # fmt: skip
    """A strip of ``h`` bands centered at (x, y), band i in head i's color with its number."""
    gap = 0.07
    bw = (width - gap * (h - 1)) / h
    x0 = x - width / 2
    return [dg.box(x0 + bw / 2 + i * (bw + gap), y, str(i + 1), role=head_role(i), w=bw,
                   h=height, name=f"{name}{i + 1}") for i in range(h)]  # fmt: skip


@drawer(MultiHeadAttention)
def draw_multihead(
    mha: nn.Module,
    *,
    batch: int = 2,
    queries: int = 4,
    keys: int = 6,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Multi-head attention as the module computes it: the queries, keys and values each go
    through their projection (``W_q``, ``W_k``, ``W_v``); each projection is cut into
    ``num_heads`` column slices, one colored band per head; head i attends with slice i of
    Q, K and V; the heads' outputs are concatenated (the same bands) and multiplied by
    ``W_o``.

    ``mha`` is a ``d2l.MultiHeadAttention`` (or any module with ``num_heads``, ``W_q``,
    ``W_k``, ``W_v``, ``W_o`` and the same call), run on a copy with ``batch`` examples of
    ``queries`` queries and ``keys`` key-value pairs; every shape printed is one that run
    produced. ``shapes`` holds "queries", "keys", "values", "Q", "K", "V", "head1".."headh"
    (one head's output), "concat" and "output".
    """
    needed = ("num_heads", "W_q", "W_k", "W_v", "W_o")
    if not isinstance(mha, nn.Module) or not all(hasattr(mha, a) for a in needed):
        raise TypeError(
            f"mha must be a multi-head attention module with {', '.join(needed)}, "
            f"got {type(mha).__name__}"
        )
    for name, v in (("batch", batch), ("queries", queries), ("keys", keys)):
        _positive(v, name)
    h = int(mha.num_heads)
    if not 1 <= h <= MAX_HEADS:
        raise ValueError(f"mha.num_heads must be 1 to {MAX_HEADS} to be drawn, got {h}")
    hidden = int(mha.W_o.in_features)
    d_q, d_k, d_v = (_in_features(getattr(mha, w), hidden) for w in ("W_q", "W_k", "W_v"))
    Q_in, K_in, V_in = (torch.zeros(batch, queries, d_q), torch.zeros(batch, keys, d_k),
                        torch.zeros(batch, keys, d_v))  # fmt: skip
    tr = trace(mha, Q_in, K_in, V_in)
    att = tr["attention"]  # (batch * heads, n, p): every head as one more example
    if att[0] != batch * h:
        raise ValueError(f"the attention ran on {att[0]} examples, expected batch * heads = "
                         f"{batch * h}")  # fmt: skip
    per_head = (att[0] // h, *att[1:])  # one head's output: (batch, n, p)
    concat = tr.inputs["W_o"][0]
    if concat[-1] != h * per_head[-1]:
        raise ValueError(f"W_o got {concat}, not the {h} heads' outputs concatenated")

    width, height = 6.6, 5.25
    dg = Diagram(width, height, t=t)
    cols = (1.15, 3.3, 5.45)
    y_in, y_w, y_strip, y_head, y_cat = 4.85, 4.0, 3.0, 1.75, 0.5
    strip_w = 1.75
    inputs = ((("쿼리", "queries"), Q_in.shape, "query", "queries", "$W_q$", "Q", "W_q"),
              (("키", "keys"), K_in.shape, "key", "keys", "$W_k$", "K", "W_k"),
              (("값", "values"), V_in.shape, "value", "values", "$W_v$", "V", "W_v"))
    strips = []
    for x, (label, shape, role, name, w_label, out, layer) in zip(cols, inputs, strict=True):
        tin = dg.tensor(x, y_in, label, shape, role=role, name=name)
        box = dg.box(x, y_w, w_label, role=role, name=layer)
        dg.arrow(tin, box)
        bands = _bands(dg, x, y_strip, h, strip_w, f"{out}_")
        frame = dg.group(bands, pad=0.06, role=role, name=f"{out}_strip")
        dg.arrow(box, (x, frame.y1), out, shape=tr[layer], role=role, label_side="right",
                 name=out)  # fmt: skip
        strips.append(bands)
    # the heads, spread over the width, one attention each
    label = (lambda i: (f"헤드 {i}", f"head {i}")) if h <= 4 else (lambda i: str(i))
    span = width - 0.5
    step = span / h
    heads = []
    for i in range(h):
        x = 0.25 + step * (i + 0.5)
        heads.append(dg.box(x, y_head, label(i + 1), format_shape(per_head), role=head_role(i),
                            w=min(step - 0.12, 1.3), name=f"head{i + 1}"))  # fmt: skip
        dg.shapes[f"head{i + 1}"] = per_head
    for s, bands in enumerate(strips):
        for i, band in enumerate(bands):
            dg.arrow(band.anchor("bottom"), heads[i].anchor("top", 0.3 + 0.2 * s),
                     role=head_role(i), lw=1.0, name=f"slice{s}_{i + 1}")  # fmt: skip
    # concatenate, W_o, output
    x_cat = 1.55
    cat = _bands(dg, x_cat, y_cat, h, 2.1, "cat_")
    for i in range(h):
        dg.arrow(heads[i].anchor("bottom"), cat[i].anchor("top"), role=head_role(i), lw=1.0,
                 name=f"merge{i + 1}")  # fmt: skip
    cat_frame = dg.group(cat, pad=0.06, name="cat_strip")
    dg.text(x_cat, cat_frame.y0 - 0.05, ("이어 붙이기", "concatenate"), va="top",
            name="cat_label")  # fmt: skip
    wo = dg.box(4.1, y_cat, "$W_o$", role="output", name="W_o")
    dg.arrow(cat_frame.anchor("right"), wo, shape=concat, name="concat")
    out = dg.tensor(5.6, y_cat, ("출력", "output"), tr[""], role="output", name="output")
    dg.arrow(wo, out)
    dg.trace = tr
    return dg.finish()


def draw_head_split(
    num_heads: int,
    *,
    batch: int = 2,
    steps: int = 3,
    width: int = 2,
    split: Callable | None = None,
    merge: Callable | None = None,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The reshape that computes every head at once: ``split`` (``transpose_qkv``) takes
    (batch, steps, num_heads * width) to (batch * num_heads, steps, width), so that head i
    of example b becomes example ``b * num_heads + i`` of a bigger batch, and ``merge``
    (``transpose_output``) takes it back.

    Both functions run on a tensor whose every feature holds the number of its head; the
    right column is drawn from what ``split`` returned (the head found in each of its
    examples), and the figure raises if ``merge`` does not undo ``split``. ``shapes`` holds
    "features" and "heads_as_batch".
    """
    for name, v in (("num_heads", num_heads), ("batch", batch), ("steps", steps),
                    ("width", width)):  # fmt: skip
        _positive(v, name)
    if num_heads > 4 or batch > 2:
        raise ValueError(f"at most 4 heads and 2 examples can be drawn, got num_heads="
                         f"{num_heads}, batch={batch}")  # fmt: skip
    split = split or transpose_qkv
    merge = merge or transpose_output
    h = num_heads
    X = torch.arange(h).repeat_interleave(width).expand(batch, steps, -1).float()
    X = X + 100 * torch.arange(batch)[:, None, None]  # the example, too: 100 * b + head
    Y = split(X, h)
    Z = merge(Y, h)
    if not torch.equal(Z, X):
        raise ValueError("merge does not undo split")
    if Y.dim() != 3 or Y.shape[0] != batch * h:
        raise ValueError(f"split returned {tuple(Y.shape)}, expected ({batch * h}, ...)")
    owner = []  # (example, head) of every row of the bigger batch, read from the values
    for j in range(Y.shape[0]):
        vals = torch.unique(Y[j])
        if vals.numel() != 1:
            raise ValueError(f"split mixed heads or examples in its example {j}")
        v = int(vals.item())
        owner.append((v // 100, v % 100))

    rows = batch * h
    row_h, gap = 0.34, 0.1
    col_h = rows * row_h + (rows - 1) * gap
    height = col_h + 0.9
    dg = Diagram(6.2, height, t=t)
    top = height - 0.5
    # left: each example's features, one band per head
    band_w = 0.42
    x_left = 1.35
    block_gap = 0.6
    block_h = (col_h - block_gap * (batch - 1)) / batch if batch > 1 else col_h
    block_h = min(block_h, 0.9)
    pitch = block_h + block_gap
    y_blocks = [top - col_h / 2 + (batch - 1) * pitch / 2 - b * pitch for b in range(batch)]
    left = []
    for b, yb in enumerate(y_blocks):
        bands = _bands(dg, x_left, yb, h, h * band_w + (h - 1) * 0.07, f"x{b + 1}_",
                       height=block_h)  # fmt: skip
        dg.group(bands, (f"예제 {b + 1}", f"example {b + 1}"), pad=0.08, title_side="bottom",
                 name=f"example{b + 1}")  # fmt: skip
        left.extend(bands)
    xs = format_shape(X.shape)
    dg.text(x_left, height - 0.06, (f"특성 {xs}", f"features {xs}"), va="top",
            name="features_shape")  # fmt: skip
    dg.shapes["features"] = tuple(X.shape)
    # right: the bigger batch, one row per (example, head)
    x_right = 4.95
    right = []
    for j, (b, i) in enumerate(owner):
        y = top - row_h / 2 - j * (row_h + gap)
        right.append(dg.box(x_right, y, str(i + 1), role=head_role(i), w=band_w, h=row_h,
                            name=f"y{j}"))  # fmt: skip
        dg.text(x_right + band_w / 2 + 0.1, y, (f"예제 {b + 1}", f"example {b + 1}"),
                ha="left", name=f"y{j}_example")  # fmt: skip
        dg.text(x_right - band_w / 2 - 0.1, y, f"{j}", ha="right", name=f"y{j}_index")
    ys = format_shape(Y.shape)
    dg.text(x_right + 0.3, height - 0.06, (f"헤드를 배치로 {ys}", f"heads as batch {ys}"),
            va="top", name="heads_shape")  # fmt: skip
    dg.shapes["heads_as_batch"] = tuple(Y.shape)
    # the two functions between them
    x0, x1 = x_left + (h * band_w + (h - 1) * 0.07) / 2 + 0.2, x_right - band_w / 2 - 0.4
    ymid = top - col_h / 2
    dg.arrow((x0, ymid + 0.3), (x1, ymid + 0.3), getattr(split, "__name__", "split"),
             label_side="above", name="split")  # fmt: skip
    dg.arrow((x1, ymid - 0.3), (x0, ymid - 0.3), getattr(merge, "__name__", "merge"),
             label_side="below", name="merge")  # fmt: skip
    dg.owner = owner
    return dg.finish()


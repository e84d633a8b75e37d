"""Chapters 3 and 4's diagrams: attention pooling, the masked softmax, and additive against
scaled dot-product scoring side by side.

Each computes what it prints: the pooling figure its weights (from a scoring function, or
checks the ones it is given), the masked-softmax figure the weights of ``masked_softmax`` on
the scores it is given, the scoring figure the shapes the two attention modules produce on a
small batch (through :func:`core.trace`, on copies).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn

from .core import Diagram, format_shape, trace

__all__ = ["draw_attention_pooling", "draw_masked_softmax", "draw_scoring"]


def _tensor(x, name: str, dims: int) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != dims or not x.is_floating_point():
        raise ValueError(
            f"{name} must be a {dims}-D float tensor, got {x.dtype} of shape {tuple(x.shape)}"
        )
    return x.detach()


def _labels(labels, default: list[str], name: str) -> list[str]:
    if labels is None:
        return default
    labels = list(labels)
    if len(labels) != len(default) or not all(isinstance(s, str) for s in labels):
        raise ValueError(f"{name} must be {len(default)} strings, got {labels!r}")
    return labels


def draw_attention_pooling(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor | None = None,
    *,
    weights: torch.Tensor | None = None,
    score: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    query_label: str = "$\\mathbf{q}$",
    key_labels: Sequence[str] | None = None,
    value_labels: Sequence[str] | None = None,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Attention pooling for one query: ``query`` (d,) is scored against every row of ``keys``
    (m, d), a softmax turns the scores into weights, and the output is the weighted sum of the
    values.

    The weights are ``softmax(score(query, keys))`` (``score`` defaults to the scaled dot
    product), or the given ``weights`` (m,), which must be non-negative and sum to 1. With
    ``values`` (m, v) the output's shape is printed too. ``shapes`` holds "query", "keys",
    "weights" and, with values, "values" and "output"; ``weights`` the weights drawn.
    """
    query, keys = _tensor(query, "query", 1), _tensor(keys, "keys", 2)
    m, d_k = keys.shape
    if query.shape[0] != d_k:
        raise ValueError(f"query must have size {d_k} (the keys' size), got {query.shape[0]}")
    if not 1 <= m <= 5:
        raise ValueError(f"keys must have 1 to 5 rows to be drawn, got {m}")
    if values is not None:
        values = _tensor(values, "values", 2)
        if values.shape[0] != m:
            raise ValueError(f"values must have {m} rows (one per key), got {values.shape[0]}")
    if weights is not None and score is not None:
        raise ValueError("give weights or score, not both")
    if weights is None:
        score = score or (lambda q, k: k @ q / math.sqrt(q.shape[0]))
        scores = score(query, keys)
        if not isinstance(scores, torch.Tensor) or tuple(scores.shape) != (m,):
            got = tuple(scores.shape) if isinstance(scores, torch.Tensor) else type(scores)
            raise ValueError(f"score must return one score per key, shape ({m},), got {got}")
        weights = torch.softmax(scores.detach(), dim=0)
    else:
        weights = _tensor(weights, "weights", 1)
        if weights.shape[0] != m:
            raise ValueError(f"weights must have shape ({m},), got {tuple(weights.shape)}")
        if (weights < 0).any() or not torch.isclose(weights.sum(), weights.new_tensor(1.0)):
            raise ValueError(f"weights must be non-negative and sum to 1, got {weights.tolist()}")
    key_labels = _labels(key_labels, [f"$\\mathbf{{k}}_{i + 1}$" for i in range(m)], "key_labels")
    value_labels = _labels(value_labels, [f"$\\mathbf{{v}}_{i + 1}$" for i in range(m)],
                           "value_labels")  # fmt: skip
    row = 0.62
    top = 0.55 + row * (m - 1)
    dg = Diagram(6.8, top + 0.8, t=t)
    xq, xk, xw, xv, xo = 0.6, 1.95, 3.4, 4.75, 6.05
    output = None if values is None else weights @ values
    shapes = {"query": tuple(query.shape), "keys": tuple(keys.shape),
              "weights": tuple(weights.shape)}  # fmt: skip
    if values is not None:
        shapes.update(values=tuple(values.shape), output=tuple(output.shape))
    heads = [(xq, ("쿼리", "query"), "query", "query"), (xk, ("키", "keys"), "key", "keys"),
             (xw, ("가중치", "weights"), None, "weights"),
             (xv, ("값", "values"), "value", "values"),
             (xo, ("출력", "output"), "output", "output")]  # fmt: skip
    for x, (ko, en), role, key in heads:
        if key in shapes:
            ko, en = f"{ko} {format_shape(shapes[key])}", f"{en} {format_shape(shapes[key])}"
        dg.text(x, top + 0.33, (ko, en), role=role, va="bottom", name=f"head_{key}")
    dg.shapes.update(shapes)
    mid = (0.55 + top) / 2
    q = dg.box(xq, mid, query_label, role="query", name="query")
    best = int(weights.argmax())
    for i in range(m):
        y = top - i * row
        k = dg.box(xk, y, key_labels[i], role="key", w=1.0, name=f"k{i + 1}")
        dg.arrow(q, k.anchor("left"), name=f"qk{i + 1}")
        a = dg.box(xw, y, f"$\\alpha_{i + 1}$ = {weights[i].item():.3f}", kind="op", w=1.15,
                   role="highlight" if i == best else None, name=f"alpha{i + 1}")  # fmt: skip
        dg.arrow(k, a, name=f"ka{i + 1}")
        v = dg.box(xv, y, value_labels[i], role="value", w=1.0, name=f"v{i + 1}")
        dg.arrow(a, v, name=f"av{i + 1}")
        dg.arrow(v, (xo - 0.55, mid), start="right", name=f"vo{i + 1}")
    dg.box(xo, mid, "$\\sum_i \\alpha_i \\mathbf{v}_i$", role="output", w=1.1, name="output")
    dg.weights = weights
    return dg.finish()


def draw_masked_softmax(
    scores: torch.Tensor,
    valid_lens: torch.Tensor,
    *,
    tokens: Sequence[Sequence[str]] | None = None,
    softmax: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The weights of the masked softmax on ``scores`` (batch, queries, keys) with
    ``valid_lens`` (batch,) or (batch, queries), one grid per example: a row per query, a
    column per key (headed by ``tokens``, one list per example), each cell its weight; the
    keys beyond a row's valid length are hatched in the mask style and hold 0.

    ``softmax`` defaults to ``d2l.masked_softmax``; the figure raises if it gives a hidden key
    any weight. ``shapes`` holds "scores", "valid_lens" and "weights".
    """
    scores = _tensor(scores, "scores", 3)
    batch, n, m = scores.shape
    if batch > 2 or n > 4 or m > 6:
        raise ValueError(f"scores must be at most (2, 4, 6) to be drawn, got {tuple(scores.shape)}")
    if not isinstance(valid_lens, torch.Tensor):
        raise TypeError(f"valid_lens must be a torch.Tensor, got {type(valid_lens).__name__}")
    if softmax is None:
        from ..attention import masked_softmax as softmax
    with torch.no_grad():
        weights = softmax(scores, valid_lens)
    lens = valid_lens.reshape(batch, -1).expand(batch, n)  # (batch, queries)
    visible = (torch.arange(m) < lens[..., None]).numpy()
    if (weights.numpy()[~visible] != 0).any():
        raise ValueError("softmax gave weight to a key beyond the valid length")
    if tokens is not None:
        tokens = [list(row) for row in tokens]
        if len(tokens) != batch or any(len(row) != m for row in tokens):
            raise ValueError(f"tokens must be {batch} lists of {m} strings, got {tokens!r}")
    cell = 0.55
    panel = m * cell
    width = min(7.0, batch * (panel + 0.55) + 0.2)
    height = n * cell + 1.2
    dg = Diagram(width, height, t=t)
    dg.shapes["scores"] = tuple(scores.shape)
    dg.shapes["valid_lens"] = tuple(valid_lens.shape)
    dg.shapes["weights"] = tuple(weights.shape)
    for b in range(batch):
        x0 = 0.6 + b * (panel + 0.55)
        grid_top = height - 0.75
        cx, cy = x0 + panel / 2, grid_top - n * cell / 2
        per_row = sorted({int(v) for v in lens[b]})
        len_text = str(per_row[0]) if len(per_row) == 1 else str([int(v) for v in lens[b]])
        dg.mask(cx, cy, visible[b], cell=cell, values=weights[b].numpy(), name=f"weights{b + 1}")
        dg.text(cx, height - 0.08, (f"예제 {b + 1}: 유효 길이 {len_text}",
                                    f"example {b + 1}: valid length {len_text}"),
                va="top", size=10, name=f"title{b + 1}")  # fmt: skip
        for j in range(m):
            label = tokens[b][j] if tokens else f"$k_{j + 1}$"
            dg.text(x0 + (j + 0.5) * cell, grid_top + 0.06, label, va="bottom",
                    role="key", name=f"key{b + 1}_{j + 1}")  # fmt: skip
        for i in range(n):
            dg.text(x0 - 0.08, grid_top - (i + 0.5) * cell, f"$q_{i + 1}$", ha="right",
                    role="query", name=f"query{b + 1}_{i + 1}")  # fmt: skip
    sc, vl, wt = (format_shape(x.shape) for x in (scores, valid_lens, weights))
    dg.text(width / 2, 0.05, (f"점수 {sc}, 유효 길이 {vl} → 가중치 {wt}",
                              f"scores {sc}, valid lengths {vl} → weights {wt}"),
            va="bottom", name="shapes")  # fmt: skip
    dg.weights = weights
    dg.visible = visible
    return dg.finish()


def draw_scoring(
    additive: nn.Module,
    dot: nn.Module,
    *,
    batch: int = 2,
    queries: int = 1,
    keys: int = 10,
    query_size: int = 20,
    key_size: int = 2,
    value_size: int = 4,
    valid_lens: torch.Tensor | None = None,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Scaled dot-product scoring (left) and additive scoring (right) side by side, each step
    labeled with the shape the module produced on the same batch: ``batch`` examples of
    ``queries`` queries and ``keys`` keys and values (size ``value_size``). The additive
    module gets queries of ``query_size`` and keys of ``key_size``; the dot product needs one
    size for both and gets ``key_size`` for each. Rows line up, so the additive side's extra
    steps (W_q, W_k, the (batch, n, m, d_h) tensor, w_v) stand out. ``shapes`` holds every
    printed shape under "dot.*" and "add.*".
    """
    for name, v in (("batch", batch), ("queries", queries), ("keys", keys),
                    ("query_size", query_size), ("key_size", key_size),
                    ("value_size", value_size)):  # fmt: skip
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    for name, module, needed in (("additive", additive, ("W_q", "W_k", "w_v")),
                                 ("dot", dot, ())):  # fmt: skip
        if not isinstance(module, nn.Module) or not all(hasattr(module, a) for a in needed):
            raise TypeError(
                f"{name} must be an attention module{' with W_q, W_k and w_v' if needed else ''}"
                f", got {type(module).__name__}"
            )
    if valid_lens is None:
        valid_lens = torch.full((batch,), keys)
    gen = torch.Generator().manual_seed(0)
    V = torch.randn(batch, keys, value_size, generator=gen)
    Qa = torch.randn(batch, queries, query_size, generator=gen)
    Ka = torch.randn(batch, keys, key_size, generator=gen)
    Qd = torch.randn(batch, queries, key_size, generator=gen)
    ta = trace(additive, Qa, Ka, V, valid_lens)
    td = trace(dot, Qd, Ka, V, valid_lens)
    weights_a = ta.module.attention_weights
    weights_d = td.module.attention_weights
    if weights_a is None or weights_d is None:
        raise ValueError("both modules must keep their attention_weights (need_weights=True)")
    dg = Diagram(6.9, 5.5, t=t)
    rows = [0.45, 1.3, 2.15, 3.0, 3.85, 4.7]  # inputs, W, tanh, w_v, softmax, output
    # -- dot product (left) --------------------------------------------------------------
    dg.text(1.6, 5.45, ("스케일드 내적", "scaled dot product"), va="top", size=10.5,
            weight="bold", name="dot_title")  # fmt: skip
    q = dg.tensor(0.75, rows[0], "Q", Qd.shape, role="query", name="dot.Q")
    k = dg.tensor(2.45, rows[0], "K", Ka.shape, role="key", name="dot.K")
    s = dg.box(1.6, rows[3], "$QK^\\top/\\sqrt{d}$", kind="op", name="dot.score")
    dg.arrow(q, s.anchor("bottom", 0.3), name="dot.q_in")
    dg.arrow(k, s.anchor("bottom", 0.7), name="dot.k_in")
    sm = dg.box(1.6, rows[4], ("마스크 소프트맥스", "masked softmax"), kind="op",
                name="dot.softmax")  # fmt: skip
    dg.text(1.6, (rows[1] + rows[2]) / 2, ("학습할\n파라미터 없음", "no learned\nparameters"),
            name="dot.no_params")  # fmt: skip
    dg.arrow(s, sm, ("점수", "scores"), shape=weights_d.shape, name="dot.scores")
    out = dg.tensor(1.6, rows[5], ("가중치 × V", "weights × V"), td[""], role="output",
                    name="dot.out")  # fmt: skip
    dg.arrow(sm, out, ("가중치", "weights"), shape=weights_d.shape, name="dot.weights")
    # -- additive (right) ----------------------------------------------------------------
    xa = 5.15
    dg.text(xa, 5.45, ("가산", "additive"), va="top", size=10.5, weight="bold", name="add_title")
    q = dg.tensor(4.15, rows[0], "Q", Qa.shape, role="query", name="add.Q")
    k = dg.tensor(6.05, rows[0], "K", Ka.shape, role="key", name="add.K")
    wq = dg.box(4.15, rows[1], "$W_q$", role="query", name="add.W_q")
    wk = dg.box(6.05, rows[1], "$W_k$", role="key", name="add.W_k")
    dg.arrow(q, wq, name="add.q_in")
    dg.arrow(k, wk, name="add.k_in")
    pair = dg.box(xa, rows[2], ("모든 쌍 +, tanh", "every pair +, tanh"), kind="op",
                  name="add.tanh")  # fmt: skip
    dg.arrow(wq, pair.anchor("bottom", 0.2), shape=ta["W_q"], label_side="left", name="add.W_q_out")
    dg.arrow(wk, pair.anchor("bottom", 0.8), shape=ta["W_k"], label_side="right",
             name="add.W_k_out")  # fmt: skip
    wv = dg.box(xa, rows[3], "$\\mathbf{w}_v$", name="add.w_v")
    dg.arrow(pair, wv, shape=ta.inputs["w_v"][0], name="add.features")
    sm = dg.box(xa, rows[4], ("마스크 소프트맥스", "masked softmax"), kind="op",
                name="add.softmax")  # fmt: skip
    dg.arrow(wv, sm, ("점수", "scores"), shape=weights_a.shape, name="add.scores")
    out = dg.tensor(xa, rows[5], ("가중치 × V", "weights × V"), ta[""], role="output",
                    name="add.out")  # fmt: skip
    dg.arrow(sm, out, ("가중치", "weights"), shape=weights_a.shape, name="add.weights")
    if tuple(ta[""]) != tuple(td[""]):
        raise ValueError(f"the two attentions disagree on the output: {ta['']} and {td['']}")
    v = dg.tensor(3.4, rows[5], "V", V.shape, role="value", name="V")
    dg.arrow(v, dg.parts["dot.out"], name="dot.v_in")
    dg.arrow(v, dg.parts["add.out"], name="add.v_in")
    dg.traces = {"additive": ta, "dot": td}
    return dg.finish()

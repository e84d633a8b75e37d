"""Chapter 11's diagrams: the tiling schedule of ``tiled_attention``, the KV cache growing by
one row per decoded token, grouped-query attention's head groups, and RoPE's rotation.

Each is computed from the chapter's objects: the schedule follows ``tiled_attention``'s loops
for the given lengths and block size, the cache is a GPT's own ``KVCache`` after real decoding
steps (on a copy of the model), the head groups and shapes come from running the
``GroupedQueryAttention`` modules given, and the rotated pairs are ``RotaryEmbedding``'s output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from .. import efficient as _eff
from .. import lm as _lm
from .core import Diagram, copy_module, drawer, format_shape, trace

__all__ = ["draw_gqa", "draw_kv_cache", "draw_rope", "draw_tiling", "tiling_schedule"]

T = Callable[[str, str], str] | None


def _count(v, name: str, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    return v


def _tensor(d: Diagram, x: float, y: float, label, shape, **kw):
    """d.tensor wide enough for its shape text in the monospaced font it is drawn in (the
    core sizes it by the proportional font, too narrow for four numbers)."""
    w = d.text_size(format_shape(tuple(shape)), 9.5, family="DejaVu Sans Mono")[0] + 0.3
    return d.tensor(x, y, label, shape, w=max(w, d.text_size(d.tr(label), 11)[0] + 0.3), **kw)


# -- tiling ------------------------------------------------------------------------------------
def tiling_schedule(n: int, m: int, block_size: int, causal: bool = False
                    ) -> list[tuple[int, int]]:  # fmt: skip
    """The tiles (query block i, key block j) that ``tiled_attention`` computes for ``n``
    queries and ``m`` keys, in the order it computes them: query blocks in the outer loop,
    key blocks in the inner one; with ``causal`` a key block wholly in the future of every
    query of the block ends the inner loop (queries are the last n of the m positions)."""
    n, m, block_size = _count(n, "n"), _count(m, "m"), _count(block_size, "block_size")
    if causal and n > m:
        raise ValueError(f"causal tiling needs n <= m, got n={n}, m={m}")
    out = []
    for i in range(0, n, block_size):
        rows = min(block_size, n - i)
        for j in range(0, m, block_size):
            if causal and j > i + rows - 1 + (m - n):
                break
            out.append((i // block_size, j // block_size))
    return out


def draw_tiling(q: Tensor, k: Tensor, v: Tensor, block_size: int, *, causal: bool = False,
                step: int | None = None, t: T = None) -> Diagram:  # fmt: skip
    """The schedule of ``tiled_attention(q, k, v, block_size, causal)``: a grid of query blocks
    × key blocks numbered in the order the tiles are computed (tiles never computed hatched),
    the query blocks at the left, the key/value blocks on top, and what fast memory holds at
    step ``step`` (default: the last): that query block, that key and value block and their
    score tile, with the shapes they have for these q, k, v."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, Tensor) or x.dim() < 2:
            raise ValueError(f"{name} must be a tensor (..., length, features), got {x!r:.50}")
    n, m = q.shape[-2], k.shape[-2]
    sched = tiling_schedule(n, m, block_size, causal)
    nb, mb = math.ceil(n / block_size), math.ceil(m / block_size)
    if nb > 6 or mb > 6:
        raise ValueError(f"at most 6 blocks a side can be drawn, got {nb} x {mb}")
    step = len(sched) if step is None else _count(step, "step")
    if step > len(sched):
        raise ValueError(f"step must be at most {len(sched)} (the tiles computed), got {step}")
    bi, bj = sched[step - 1]
    order = np.zeros((nb, mb))
    for s, (i, j) in enumerate(sched, 1):
        order[i, j] = s
    qi = q[..., bi * block_size : (bi + 1) * block_size, :]
    kj = k[..., bj * block_size : (bj + 1) * block_size, :]
    vj = v[..., bj * block_size : (bj + 1) * block_size, :]
    tile = qi.shape[:-1] + (kj.shape[-2],)
    cell = 0.42
    d = Diagram(6.4, 4.1, t=t, title=("타일링 순서", "The tiling schedule"))
    gx, gy = 1.0 + mb * cell / 2, 0.35 + nb * cell / 2  # grid center
    # a skipped tile (NaN) shows its hatching only: it is not computed, so it holds no number
    grid = d.mask(gx + 0.1, gy, order > 0, cell=cell, values=np.where(order > 0, order, np.nan),
                  fmt="{:.0f}", name="grid")
    for i in range(nb):
        d.box(grid.x0 - 0.45, grid.y1 - (i + 0.5) * cell, f"$Q_{i}$", kind="layer" if i == bi
              else "op", role="query" if i == bi else None, w=0.5, h=cell - 0.07,
              name=f"Q{i}")  # fmt: skip
    for j in range(mb):
        d.box(grid.x0 + (j + 0.5) * cell, grid.y1 + 0.3, f"$K_{j}V_{j}$", kind="layer"
              if j == bj else "op", role="key" if j == bj else None, w=cell - 0.07, h=0.42,
              name=f"KV{j}")  # fmt: skip
    d.text(grid.x0 - 0.45, grid.y1 + 0.3, ("쿼리↓ 키→", "Q↓ K→"), name="axes")
    # fast memory at the chosen step
    fx = 4.75
    qt = _tensor(d, fx, 2.85, f"$Q_{bi}$", qi.shape, role="query", name="Qi")
    kt = _tensor(d, fx, 2.05, f"$K_{bj}$, $V_{bj}$", kj.shape, role="key", name="Kj")
    st = _tensor(d, fx, 1.25, ("점수 타일", "score tile"), tile, role="neutral", name="S")
    d.text(fx, 0.55, ("+ 행별 μ, ℓ, 출력 누적", "+ running μ, ℓ, output"), name="state")
    d.group([qt, kt, st], (f"빠른 메모리, {step}단계", f"fast memory, step {step}"),
            pad=0.12, name="sram")
    if kj.shape != vj.shape[:-1] + (kj.shape[-1],) or vj.shape[-2] != kj.shape[-2]:
        raise ValueError("k and v must have the same number of positions")
    return d.finish()


# -- KV cache ----------------------------------------------------------------------------------
def draw_kv_cache(net: nn.Module, prompt: Tensor, steps: int = 3, *, t: T = None) -> Diagram:
    """Greedy decoding with ``net``'s KV cache (on a copy of ``net``): the prompt fills the
    cache of the first block, then each step feeds one token whose key and value become one
    new row (filled). Under each cache its keys' shape (batch, heads, positions, head width),
    over each arrow the shape of the keys that step appended."""
    if not isinstance(net, _lm.GPT):
        raise TypeError(f"net must be a d2l.GPT, got {type(net).__name__}")
    steps = _count(steps, "steps")
    if steps > 3:
        raise ValueError(f"steps must be at most 3 to draw, got {steps}")
    if not isinstance(prompt, Tensor) or prompt.dim() != 2 or prompt.shape[0] != 1:
        raise ValueError(f"prompt must be token ids of shape (1, p), got {prompt!r:.60}")
    net = copy_module(net)  # decoding fills its caches: the chapter's model stays as it was
    cache = net.init_cache()
    feed, grown = prompt, []
    for _ in range(steps + 1):
        before = len(cache[0])
        tr = trace(net, feed, cache)
        nxt = tr.output[:, -1].argmax(-1, keepdim=True)
        new = (cache[0].k.shape[:2] + (len(cache[0]) - before, cache[0].k.shape[-1]))
        grown.append((tuple(feed.shape), new, tuple(cache[0].k.shape), tr.output.shape))
        feed = nxt
    heads = grown[0][2][1]
    gap = 6.4 / (steps + 1)
    row_h = min(0.14, 2.2 / grown[-1][2][2])
    d = Diagram(6.4, 3.9, t=t, title=("KV 캐시 (블록 1)", "The KV cache (block 1)"))
    for s, (fed, new, total, _) in enumerate(grown):
        x = gap * (s + 0.5)
        label = (("프롬프트", "prompt") if s == 0 else (f"{s}단계", f"step {s}"))
        sub = (f"토큰 {fed[1]}개", f"{fed[1]} token{'s' * (fed[1] != 1)}")
        inp = d.box(x, 3.25, label, sub, kind="op", name=f"in{s}")
        rows = total[2]
        c = d.cache(x, 1.75 - (2.2 - rows * row_h) / 2 + 0.0, rows, new=new[2], row_h=row_h,
                    w=0.7, name=f"cache{s}")  # fmt: skip
        d.arrow(inp, c, shape=new, label_side="right" if s < steps else "left",
                name=f"new{s}")  # fmt: skip
        d.text(x, c.y0 - 0.2, f"K {format_shape(total)}", family="DejaVu Sans Mono",
               name=f"k{s}")
        d.shapes[f"k{s}"] = total
    del heads
    return d.finish()


# -- GQA ---------------------------------------------------------------------------------------
@drawer(_eff.GroupedQueryAttention)
def draw_gqa(*attns: nn.Module, batch: int = 1, steps: int = 4, t: T = None) -> Diagram:
    """Grouped-query attention's head groups, one panel per ``GroupedQueryAttention`` given
    (left to right): its query heads on top, each joined to the key/value head it shares
    below; under the panel the shape of the keys (and values) after the split into heads and
    the bytes the cache keeps per token, from running the module (a copy) with a cache on a
    (``batch``, ``steps``) batch."""
    if not 1 <= len(attns) <= 3:
        raise ValueError(f"draw_gqa takes 1 to 3 GroupedQueryAttention modules, got {len(attns)}")
    for a in attns:  # the chapter's own class or d2l's: what the drawing uses
        if not all(hasattr(a, n) for n in ("num_heads", "num_kv_heads", "W_q", "W_k", "_split")):
            raise TypeError(f"expected a GroupedQueryAttention, got {type(a).__name__}")
    _count(batch, "batch"), _count(steps, "steps")
    d = Diagram(6.4, 2.95, t=t)
    width = 6.4 / len(attns)
    for p, a in enumerate(attns):
        h, g = a.num_heads, a.num_kv_heads
        x_in = torch.zeros(batch, steps, a.W_q.in_features)
        cache = _lm.KVCache()
        tr = trace(a, x_in, x_in, x_in, cache=cache)
        k_shape = tuple(a._split(torch.zeros(tr["W_k"]), g).shape)
        per_token = cache.num_bytes() // (batch * steps)
        x0 = p * width + 0.15
        step = (width - 0.3) / h
        qs = []
        for i in range(h):
            qs.append(d.box(x0 + (i + 0.5) * step, 2.3, "", role="query", w=step - 0.08,
                            h=0.3, name=f"q{p}_{i}"))  # fmt: skip
        group = h // g
        for j in range(g):
            left, right = qs[j * group].x0, qs[(j + 1) * group - 1].x1
            kv = d.box((left + right) / 2, 1.3, "", role="key", w=right - left, h=0.3,
                       name=f"kv{p}_{j}")  # fmt: skip
            for i in range(j * group, (j + 1) * group):
                d.arrow(kv.anchor("top", (qs[i].center[0] - left) / (right - left)),
                        qs[i].anchor("bottom"), lw=1.0, name=f"link{p}_{i}")  # fmt: skip
        cx = p * width + width / 2
        name = {h: ("멀티헤드", "multi-head"), 1: ("멀티쿼리", "multi-query")}.get(
            g, ("그룹 쿼리", "grouped-query"))  # fmt: skip
        d.text(cx, 2.72, (f"{name[0]}: 키·값 헤드 {g}개",
                          f"{name[1]}: {g} K/V head{'s' * (g != 1)}"), name=f"title{p}")
        d.text(cx, 0.85, f"K, V {format_shape(k_shape)}", family="DejaVu Sans Mono",
               name=f"shape{p}")  # fmt: skip
        d.shapes[f"k{p}"] = k_shape
        d.text(cx, 0.5, (f"캐시 {per_token} B/토큰", f"cache {per_token} B/token"),
               name=f"bytes{p}")  # fmt: skip
    return d.finish()


# -- RoPE --------------------------------------------------------------------------------------
def draw_rope(rope: nn.Module, x: Tensor, *, pairs: Sequence[int] = (0, 1), positions: int = 6,
              t: T = None) -> Diagram:  # fmt: skip
    """RoPE's rotation: the feature pairs ``pairs`` of the vector ``x`` (dim,) after ``rope``
    (a ``RotaryEmbedding``) at positions 0 .. ``positions`` - 1, one panel per pair, each
    position's pair drawn as an arrow from the origin; pair i turns by θ_i per position."""
    if not all(hasattr(rope, n) for n in ("dim", "max_len", "sin", "cos")):
        raise TypeError(f"rope must be a RotaryEmbedding, got {type(rope).__name__}")
    if not isinstance(x, Tensor) or x.shape != (rope.dim,):
        raise ValueError(f"x must be a vector of shape ({rope.dim},), got {x!r:.50}")
    positions = _count(positions, "positions", 2)
    if positions > min(rope.max_len, 8):
        raise ValueError(f"positions must be at most min(max_len, 8), got {positions}")
    pairs = list(pairs)
    if not 1 <= len(pairs) <= 2 or not all(isinstance(i, int) and 0 <= i < rope.dim // 2
                                           for i in pairs):  # fmt: skip
        raise ValueError(f"pairs must be 1 or 2 pair indices in [0, {rope.dim // 2}), got {pairs}")
    with torch.no_grad():
        out = rope(x.expand(1, positions, rope.dim))[0]
    d = Diagram(6.4, 3.6, t=t, title=("회전 위치 임베딩", "Rotary position embedding"))
    d.shapes["rope"] = tuple(out.shape)
    d.text(3.2, 0.15, (f"위치 0–{positions - 1}에서 돌린 x, 모양 {format_shape(out.shape)}",
                       f"x rotated at positions 0–{positions - 1}, shape "
                       f"{format_shape(out.shape)}"),
           name="shape")  # fmt: skip
    width = 6.4 / len(pairs)
    for p, i in enumerate(pairs):
        pts = out[:, 2 * i : 2 * i + 2]
        scale = 1.05 / float(pts.norm(dim=-1).max())
        ox, oy = width * (p + 0.5), 1.7
        theta = float(torch.atan2(rope.sin[1, i], rope.cos[1, i]))
        for pos, (u, w) in enumerate(pts.tolist()):
            tip = (ox + u * scale, oy + w * scale)
            d.arrow((ox, oy), tip, role="query" if pos == 0 else None, lw=1.2,
                    name=f"p{p}_{pos}")  # fmt: skip
            r = math.hypot(u, w) * scale
            lx, ly = ox + u * scale * (r + 0.17) / r, oy + w * scale * (r + 0.17) / r
            d.text(lx, ly, str(pos), name=f"l{p}_{pos}")
        d.text(ox, 3.1, (f"쌍 ({2 * i}, {2 * i + 1}): θ = {theta:.2f} rad",
                          f"pair ({2 * i}, {2 * i + 1}): θ = {theta:.2f} rad"),
               name=f"title{p}")  # fmt: skip
    return d.finish()

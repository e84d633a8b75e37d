"""Exact tiled attention, KV cache, grouped-query attention, rotary embeddings (chapter 11).

Generated from book/11_efficient.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import contextlib
import math
import weakref

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

import d2lite as d2l
from d2lite import checks


def _tensors(tree) -> list[Tensor]:
    return [x for x in tree_leaves(tree) if isinstance(x, Tensor)]


class PeakMemory(TorchDispatchMode):
    """Bytes of the tensors created inside the block: peak is the most alive at once.

    with PeakMemory() as mem: ... then mem.peak (bytes), mem.live (still alive).
    Every ATen operator is seen; a storage counts from its creation until it is
    freed, and views or in-place results of an input add nothing. Buffers
    private to a kernel are not seen.
    Built on PyTorch's private torch.utils._python_dispatch and
    torch.utils._pytree (checked with PyTorch 2.13); they may change between
    versions.
    """

    def __enter__(self) -> "PeakMemory":
        self.live, self.peak, self._alive = 0, 0, {}
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in _tensors((args, kwargs))}
        for t in _tensors(out):
            storage = t.untyped_storage()
            ptr, size = storage.data_ptr(), storage.nbytes()
            if size == 0 or ptr in inputs or ptr in self._alive:
                # empty, a view or in-place result of an input, or counted already
                continue
            self.live += size
            self.peak = max(self.peak, self.live)
            # The storage's Python object dies with the storage: then the bytes
            # are free.
            self._alive[ptr] = weakref.ref(
                storage, lambda _, p=ptr, s=size: self._free(p, s)
            )
        return out

    def _free(self, ptr: int, size: int) -> None:
        self.live -= size
        self._alive.pop(ptr, None)


def tiled_attention(
    q: Tensor, k: Tensor, v: Tensor, block_size: int = 64, causal: bool = False
) -> Tensor:
    """Exact scaled dot-product attention computed block by block with an online
    softmax.

    q (..., n, d), k (..., m, d), v (..., m, d_v) -> (..., n, d_v). Only
    (block, block) score tiles are ever materialized; a running max and a running
    sum rescale the partial outputs, all three kept in float32 for half-precision
    inputs. With causal=True the n queries are the last n of the m key positions
    (query i sits at position m - n + i), as with a KV cache.
    """
    block_size = checks.check_scalar(block_size, "block_size", int, low=1)
    if q.dim() < 2 or k.dim() != q.dim() or v.dim() != q.dim():
        raise ValueError(
            f"q, k, v must have the same number (>= 2) of dimensions, got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"need q (..., n, d), k (..., m, d), v (..., m, d_v), got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    n, m = q.shape[-2], k.shape[-2]
    if m == 0 or (causal and n > m):  # some query would have no key to look at
        raise ValueError(
            f"every query needs a key: got {n} queries, {m} keys, causal={causal}"
        )
    scale = 1.0 / math.sqrt(q.shape[-1])
    # Half-precision sums of thousands of terms lose their digits: accumulate in
    # float32.
    acc_dtype = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for i in range(0, n, block_size):
        qi = q[..., i : i + block_size, :] * scale
        # query positions
        rows = torch.arange(i, i + qi.shape[-2], device=q.device) + (m - n)
        run_max = torch.full(qi.shape[:-1], -math.inf, dtype=acc_dtype, device=q.device)
        run_sum = torch.zeros_like(run_max)
        acc = torch.zeros(*qi.shape[:-1], v.shape[-1], dtype=acc_dtype, device=q.device)
        for j in range(0, m, block_size):
            if causal and j > i + qi.shape[-2] - 1 + (m - n):
                break  # every key of this tile lies in the future of every query
            s = (qi @ k[..., j : j + block_size, :].transpose(-2, -1)).to(acc_dtype)
            if causal:
                cols = torch.arange(j, j + s.shape[-1], device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], -math.inf)
            new_max = torch.maximum(run_max, s.amax(-1))
            p = torch.exp(s - new_max[..., None])
            correction = torch.exp(run_max - new_max)  # rescales what was summed so far
            run_sum = run_sum * correction + p.sum(-1)
            acc = (acc * correction[..., None]
                   + p @ v[..., j : j + block_size, :].to(acc_dtype))
            run_max = new_max
        out[..., i : i + qi.shape[-2], :] = (acc / run_sum[..., None]).to(q.dtype)
    return out


def fused_attention(
    queries: Tensor, keys: Tensor, values: Tensor, valid_lens: Tensor | None = None,
    dropout: float = 0.0,
) -> Tensor:
    """softmax(Q K^T / sqrt(d)) V by PyTorch's fused kernel, which never stores the
    weights.

    queries (batch, heads, n, d), keys (batch, heads, m, d), values (batch, heads, m, v)
    -> (batch, heads, n, v); valid_lens: None, (batch,) or (batch, n), as in
    masked_softmax.
    A query of valid length 0 gets the output 0, as its all-zero weights would give.
    """
    checks.check_qkv(queries, keys, values, same_size=True, heads=True)
    batch, _, n, _ = queries.shape
    m = keys.shape[-2]
    valid_lens = checks.check_valid_lens(valid_lens, batch, m, n)
    dropout = checks.check_scalar(dropout, "dropout", float, low=0, high=1)
    if valid_lens is None:
        return F.scaled_dot_product_attention(queries, keys, values, dropout_p=dropout)
    # (batch, 1, 1 or n, 1)
    lens = valid_lens.to(queries.device).reshape(batch, 1, -1, 1)
    arange = torch.arange(m, device=queries.device)
    empty = lens == 0
    # Called directly, the lengths were just read to check them: asking whether a row
    # is empty costs nothing. Inside a model the question would make the host wait for
    # a GPU, so empty rows are handled whether or not there are any.
    if not checks.values_checked() and not empty.any():
        return F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=arange < lens, dropout_p=dropout
        )
    # the kernel gives NaN or 0 for a row with no key, by backend and version: such a
    # row is shown every key, and its output set to 0
    out = F.scaled_dot_product_attention(
        queries, keys, values, attn_mask=arange < lens.masked_fill(empty, m),
        dropout_p=dropout,
    )
    return out.masked_fill(empty, 0.0)


@contextlib.contextmanager
def fast_attention(model: nn.Module):
    """Inside the block, every attention layer of model (each module with a need_weights
    attribute) takes the fused fast path and keeps no weights; leaving restores them."""
    if not isinstance(model, nn.Module):
        raise ValueError(
            f"fast_attention expects an nn.Module, got {type(model).__name__}"
        )
    layers = [module for module in model.modules() if hasattr(module, "need_weights")]
    saved = [module.need_weights for module in layers]
    for module in layers:
        module.need_weights = False
    try:
        yield model
    finally:
        for module, flag in zip(layers, saved):
            module.need_weights = flag


class GroupedQueryAttention(nn.Module):
    """Multi-head attention whose num_heads query heads share num_kv_heads
    key/value heads.

    num_kv_heads == num_heads is multi-head attention, num_kv_heads == 1 is
    multi-query attention.
    """

    def __init__(
        self,
        num_hiddens: int,
        num_heads: int,
        num_kv_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        rotary: "RotaryEmbedding | None" = None,
    ) -> None:
        super().__init__()
        num_hiddens = checks.check_positive(num_hiddens, "num_hiddens")
        num_heads = checks.check_positive(num_heads, "num_heads")
        num_kv_heads = checks.check_positive(num_kv_heads, "num_kv_heads")
        dropout = checks.check_scalar(
            dropout, "dropout", float, low=0, high=1, high_open=True
        )
        if num_hiddens % num_heads:
            raise ValueError(
                f"num_hiddens={num_hiddens} not divisible by num_heads={num_heads}"
            )
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_heads={num_heads} not divisible by num_kv_heads={num_kv_heads}"
            )
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = num_hiddens // num_heads
        self.dropout, self.rotary = dropout, rotary
        kv = num_kv_heads * self.head_dim
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, kv, bias=bias)
        self.W_v = nn.Linear(num_hiddens, kv, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def _split(self, X: Tensor, heads: int) -> Tensor:
        b, t, _ = X.shape
        # (b, heads, t, head_dim)
        return X.reshape(b, t, heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        valid_lens: Tensor | None = None,
        *,
        causal: bool = False,
        cache: d2l.KVCache | None = None,
    ) -> Tensor:
        """queries (b, n, d), keys/values (b, s, d) -> (b, n, d); a cache grows by
        these s tokens.

        valid_lens: None, (b,) or (b, n), as in MultiHeadAttention: keys at
        positions >= the length (counted over the cache and the new keys) are
        masked; lengths lie in [1, keys].
        causal=True: the n queries are the last n of the m key positions (cached
        and new), so query i sits at position m - n + i and sees keys
        0 .. m - n + i; n > m is an error.
        """
        W = self.W_q.in_features
        for name, X in (("queries", queries), ("keys", keys), ("values", values)):
            checks.check_features(X, name, W)
        if keys.shape[:2] != values.shape[:2] or keys.shape[0] != queries.shape[0]:
            raise ValueError(
                f"need queries (b, n, {W}), keys and values (b, m, {W}), got "
                f"{tuple(queries.shape)}, {tuple(keys.shape)}, {tuple(values.shape)}"
            )
        offset = 0 if cache is None else len(cache)
        (b, n), m = queries.shape[:2], offset + keys.shape[1]
        if causal and n > m:
            raise ValueError(
                "causal attention needs queries <= keys (the queries are the last "
                f"positions), got {n} queries and {m} keys"
            )
        valid_lens = checks.check_valid_lens(valid_lens, b, m, n, min_len=1)
        q = self._split(self.W_q(queries), self.num_heads)
        k = self._split(self.W_k(keys), self.num_kv_heads)
        v = self._split(self.W_v(values), self.num_kv_heads)
        if self.rotary is not None:
            q, k = self.rotary(q, offset), self.rotary(k, offset)
        if cache is not None:
            k, v = cache.append(k, v)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)  # each kv head serves `group` query heads
        v = v.repeat_interleave(group, dim=1)
        mask = None  # True where a query may look
        if valid_lens is not None:  # (b, 1, 1 or n, m): keys before each length
            lens = valid_lens.to(q.device).reshape(b, 1, -1, 1)
            mask = torch.arange(m, device=q.device) < lens
        if causal:  # query i (at position m - n + i) sees keys 0 .. m - n + i
            tril = torch.ones(n, m, dtype=torch.bool, device=q.device).tril(m - n)
            mask = tril if mask is None else mask & tril
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )
        return self.W_o(out.transpose(1, 2).reshape(b, n, -1))


class RotaryEmbedding(nn.Module):
    """Rotary position embedding: rotate neighboring feature pairs (2i, 2i+1),
    not the rotate-half pairs (i, i + dim/2) of many libraries, by angle
    pos * base^(-2i/dim).
    """

    def __init__(self, dim: int, max_len: int = 1024, base: float = 10000.0) -> None:
        super().__init__()
        dim = checks.check_scalar(dim, "dim", int, low=1)
        if dim % 2:
            raise ValueError(f"dim must be a positive even int, got {dim!r}")
        max_len = checks.check_scalar(max_len, "max_len", int, low=1)
        base = checks.check_scalar(base, "base", float, low=0, low_open=True)
        checks.check_bytes(2 * max_len * (dim // 2) * 4,
                           f"RotaryEmbedding(max_len={max_len})")
        self.dim, self.max_len = dim, max_len
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float32) / dim)
        # (max_len, dim/2)
        angles = torch.arange(max_len, dtype=torch.float32)[:, None] * inv_freq
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x (..., seq, dim) -> same shape, position t rotated by the angles of
        offset + t.
        """
        if x.dim() < 2 or x.shape[-1] != self.dim or not x.is_floating_point():
            raise ValueError(f"expected a float tensor (..., seq, {self.dim}), got "
                             f"{tuple(x.shape)} {x.dtype}")
        offset = checks.check_scalar(offset, "offset", int, low=0)
        seq = x.shape[-2]
        if offset < 0 or offset + seq > self.max_len:
            raise ValueError(
                f"positions {offset}..{offset + seq - 1} exceed max_len={self.max_len}"
            )
        cos = self.cos[offset : offset + seq].to(x.dtype)
        sin = self.sin[offset : offset + seq].to(x.dtype)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
        return out.flatten(-2)


class RMSNorm(nn.Module):
    """Root-mean-square normalization: x / sqrt(mean(x^2) + eps) * weight; no
    centering, no bias.
    """

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        dim = checks.check_positive(dim, "dim")
        self.eps = checks.check_scalar(eps, "eps", float, low=0, low_open=True)
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.weight.shape[0] or not x.is_floating_point():
            raise ValueError(
                f"expected a float tensor with last dim {self.weight.shape[0]}, "
                f"got {tuple(x.shape)} {x.dtype}"
            )
        x32 = x.float()  # x^2 of a half-precision 300 overflows: square in float32
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (normed * self.weight).to(x.dtype)


__all__ = [
    "GroupedQueryAttention",
    "PeakMemory",
    "RMSNorm",
    "RotaryEmbedding",
    "fast_attention",
    "fused_attention",
    "tiled_attention",
]

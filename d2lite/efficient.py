"""Exact tiled attention, KV cache, grouped-query attention, rotary embeddings (chapter 10).

Generated from book/10_efficient.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math
import weakref

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

import d2lite as d2l
from d2lite import checks


def tiled_attention(
    q: Tensor, k: Tensor, v: Tensor, block_size: int = 64, causal: bool = False
) -> Tensor:
    """Exact scaled dot-product attention computed block by block with an online softmax.

    q (..., n, d), k (..., m, d), v (..., m, d_v) -> (..., n, d_v). Only (block, block) score
    tiles are ever materialised; a running max and a running sum rescale the partial outputs.
    """
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
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
    scale = 1.0 / math.sqrt(q.shape[-1])
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for i in range(0, n, block_size):
        qi = q[..., i : i + block_size, :] * scale
        rows = torch.arange(i, i + qi.shape[-2], device=q.device)
        run_max = torch.full(qi.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)
        run_sum = torch.zeros_like(run_max)
        acc = torch.zeros(*qi.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for j in range(0, m, block_size):
            if causal and j > rows[-1]:
                break  # every key of this tile lies in the future of every query
            s = qi @ k[..., j : j + block_size, :].transpose(-2, -1)
            if causal:
                cols = torch.arange(j, j + s.shape[-1], device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], -math.inf)
            new_max = torch.maximum(run_max, s.amax(-1))
            p = torch.exp(s - new_max[..., None])
            correction = torch.exp(run_max - new_max)  # rescales what was summed so far
            run_sum = run_sum * correction + p.sum(-1)
            acc = acc * correction[..., None] + p @ v[..., j : j + block_size, :]
            run_max = new_max
        out[..., i : i + qi.shape[-2], :] = acc / run_sum[..., None]
    return out


class KVCache:
    """Keys and values of the tokens decoded so far, grown along the sequence axis."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add k, v (..., t, d) for t new tokens; return all cached keys and values."""
        if k.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"k and v disagree: {tuple(k.shape)} vs {tuple(v.shape)}")
        if self.k is None:
            self.k, self.v = k, v
        else:
            if k.shape[:-2] != self.k.shape[:-2] or k.shape[-1] != self.k.shape[-1]:
                raise ValueError(
                    f"new keys {tuple(k.shape)} do not fit the cache {tuple(self.k.shape)}"
                )
            self.k = torch.cat([self.k, k], dim=-2)
            self.v = torch.cat([self.v, v], dim=-2)
        return self.k, self.v

    def num_bytes(self) -> int:
        if self.k is None:
            return 0
        return self.k.numel() * self.k.element_size() + self.v.numel() * self.v.element_size()


class RotaryEmbedding(nn.Module):
    """Rotary position embedding: rotate feature pairs (2i, 2i+1) by angle pos * base^(-2i/dim)."""

    def __init__(self, dim: int, max_len: int = 1024, base: float = 10000.0) -> None:
        super().__init__()
        if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0 or dim % 2:
            raise ValueError(f"dim must be a positive even int, got {dim!r}")
        if not isinstance(max_len, int) or max_len <= 0:
            raise ValueError(f"max_len must be a positive int, got {max_len!r}")
        self.dim, self.max_len = dim, max_len
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float32) / dim)
        angles = torch.arange(max_len, dtype=torch.float32)[:, None] * inv_freq  # (max_len, dim/2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """x (..., seq, dim) -> same shape, position t rotated by the angles of offset + t."""
        if x.dim() < 2 or x.shape[-1] != self.dim:
            raise ValueError(f"expected (..., seq, {self.dim}), got {tuple(x.shape)}")
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


class GroupedQueryAttention(nn.Module):
    """Multi-head attention whose num_heads query heads share num_kv_heads key/value heads.

    num_kv_heads == num_heads is multi-head attention, num_kv_heads == 1 is multi-query attention.
    """

    def __init__(
        self,
        num_hiddens: int,
        num_heads: int,
        num_kv_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        rotary: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        for name, value in (
            ("num_hiddens", num_hiddens),
            ("num_heads", num_heads),
            ("num_kv_heads", num_kv_heads),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if num_hiddens % num_heads:
            raise ValueError(f"num_hiddens={num_hiddens} not divisible by num_heads={num_heads}")
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
        return X.reshape(b, t, heads, self.head_dim).transpose(1, 2)  # (b, heads, t, p)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        valid_lens: Tensor | None = None,
        *,
        causal: bool = False,
        cache: KVCache | None = None,
    ) -> Tensor:
        """queries (b, n, h), keys/values (b, m, h) -> (b, n, h); cache grows by m tokens.

        valid_lens: None, (b,) or (b, n), as in MultiHeadAttention: keys at positions >= the
        length (counted over the cache and the new keys) are masked; lengths lie in [1, keys].
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
        if causal:  # query i (at position offset + i) sees keys 0 .. offset + i
            tril = torch.ones(n, m, dtype=torch.bool, device=q.device).tril(m - n)
            mask = tril if mask is None else mask & tril
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )
        return self.W_o(out.transpose(1, 2).reshape(b, n, -1))


class RMSNorm(nn.Module):
    """Root-mean-square normalisation: x / sqrt(mean(x^2) + eps) * weight; no centring, no bias."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"expected last dim {self.weight.shape[0]}, got {tuple(x.shape)}")
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class TinyDecoderLM(nn.Module):
    """A decoder-only language model: pre-norm blocks of grouped-query attention with rotary
    positions (or, with sinusoidal=True, the sinusoidal encoding of chapter 7 added to the
    embeddings) and a GELU FFN, RMSNorm throughout. generate() decodes greedily, with or without
    one KVCache per block."""

    def __init__(self, vocab_size: int, num_hiddens: int, num_heads: int, num_kv_heads: int,
                 num_blks: int, max_len: int = 1024, sinusoidal: bool = False) -> None:  # fmt: skip
        super().__init__()
        if not isinstance(num_blks, int) or num_blks <= 0:
            raise ValueError(f"num_blks must be a positive int, got {num_blks!r}")
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        rotary = None if sinusoidal else RotaryEmbedding(num_hiddens // num_heads, max_len)
        self.pos_encoding = (d2l.PositionalEncoding(num_hiddens, max_len=max_len)
                             if sinusoidal else None)
        self.blks = nn.ModuleList()
        for _ in range(num_blks):
            self.blks.append(nn.ModuleDict({
                "norm1": RMSNorm(num_hiddens),
                "attn": GroupedQueryAttention(num_hiddens, num_heads, num_kv_heads,
                                              rotary=rotary),
                "norm2": RMSNorm(num_hiddens),
                "ffn": nn.Sequential(nn.Linear(num_hiddens, 4 * num_hiddens), nn.GELU(),
                                     nn.Linear(4 * num_hiddens, num_hiddens)),
            }))
        self.norm = RMSNorm(num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def forward(self, tokens: Tensor, caches: list[KVCache] | None = None) -> Tensor:
        """tokens (batch, steps) -> logits (batch, steps, vocab); caches grow by steps."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (batch, steps), got {tuple(tokens.shape)}")
        if caches is not None and len(caches) != len(self.blks):
            raise ValueError(f"need one cache per block ({len(self.blks)}), got {len(caches)}")
        X = self.embedding(tokens)
        if self.pos_encoding is not None:
            start = 0 if caches is None else len(caches[0])
            if start + X.shape[1] > self.pos_encoding.P.shape[1]:
                raise ValueError(f"positions beyond max_len={self.pos_encoding.P.shape[1]}")
            X = X + self.pos_encoding.P[:, start : start + X.shape[1]].to(X.dtype)
        for i, blk in enumerate(self.blks):
            H = blk["norm1"](X)
            X = X + blk["attn"](H, H, H, causal=True,
                                cache=None if caches is None else caches[i])
            X = X + blk["ffn"](blk["norm2"](X))
        return self.dense(self.norm(X))

    @torch.no_grad()
    def generate(self, prompt: Tensor, steps: int, use_cache: bool = True) -> Tensor:
        """Greedy decoding: prompt (batch, p) -> (batch, p + steps)."""
        tokens = prompt
        caches = [KVCache() for _ in self.blks] if use_cache else None
        new = prompt
        for _ in range(steps):
            # With a cache only the newest tokens go in; without one the whole prefix is redone.
            logits = self(new, caches) if use_cache else self(tokens)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], dim=1)
            new = nxt
        return tokens


def _tensors(tree) -> list[Tensor]:
    return [x for x in tree_leaves(tree) if isinstance(x, Tensor)]


class PeakMemory(TorchDispatchMode):
    """Bytes of the tensors created inside the block: peak is the most alive at once.

    with PeakMemory() as mem: ... then mem.peak (bytes), mem.live (still alive). Every ATen
    operator is seen; a storage counts from its creation until it is freed, and views or
    in-place results of an input add nothing. Buffers private to a kernel are not seen.
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
                continue  # empty, a view or in-place result of an input, or counted already
            self.live += size
            self.peak = max(self.peak, self.live)
            # The storage's Python object dies with the storage: then the bytes are free.
            self._alive[ptr] = weakref.ref(storage, lambda _, p=ptr, s=size: self._free(p, s))
        return out

    def _free(self, ptr: int, size: int) -> None:
        self.live -= size
        self._alive.pop(ptr, None)


__all__ = [
    "GroupedQueryAttention",
    "KVCache",
    "PeakMemory",
    "RMSNorm",
    "RotaryEmbedding",
    "TinyDecoderLM",
    "tiled_attention",
]

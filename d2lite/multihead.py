"""Multi-head attention computed by reshaping, not by looping over heads (chapter 6).

Generated from book/06_multihead.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import torch
from torch import Tensor, nn

import d2lite as d2l
from d2lite import checks


def transpose_qkv(X: Tensor, num_heads: int) -> Tensor:
    """Split features into heads:
    (batch, steps, num_heads * p) -> (batch * num_heads, steps, p)."""
    checks.check_positive(num_heads, "num_heads")
    if X.dim() != 3 or X.shape[-1] % num_heads != 0:
        raise ValueError(
            f"expected shape (batch, steps, features) with features divisible by "
            f"num_heads={num_heads}, got {tuple(X.shape)}"
        )
    batch, steps, features = X.shape
    X = X.reshape(batch, steps, num_heads, features // num_heads)
    X = X.permute(0, 2, 1, 3)  # (batch, num_heads, steps, p)
    return X.reshape(batch * num_heads, steps, features // num_heads)


def transpose_output(X: Tensor, num_heads: int) -> Tensor:
    """Undo transpose_qkv:
    (batch * num_heads, steps, p) -> (batch, steps, num_heads * p)."""
    checks.check_positive(num_heads, "num_heads")
    if X.dim() != 3 or X.shape[0] % num_heads != 0:
        raise ValueError(
            "expected shape (batch * num_heads, steps, p) with a first axis divisible "
            f"by num_heads={num_heads}, got {tuple(X.shape)}"
        )
    batch_heads, steps, p = X.shape
    X = X.reshape(batch_heads // num_heads, num_heads, steps, p)
    X = X.permute(0, 2, 1, 3)  # (batch, steps, num_heads, p)
    return X.reshape(batch_heads // num_heads, steps, num_heads * p)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention; all heads computed at once by reshaping.

    Unlike d2l, which always uses nn.LazyLinear, query_size, key_size and value_size
    give ordinary nn.Linear projections whose input sizes are checked.
    """

    def __init__(
        self,
        num_hiddens: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        query_size: int | None = None,
        key_size: int | None = None,
        value_size: int | None = None,
    ) -> None:
        super().__init__()
        checks.check_divisible(num_hiddens, num_heads)
        self.num_heads = num_heads
        self.attention = d2l.DotProductAttention(dropout)

        def project(size: int | None) -> nn.Module:
            if size is None:
                return nn.LazyLinear(num_hiddens, bias=bias)
            return nn.Linear(size, num_hiddens, bias=bias)

        self.W_q, self.W_k, self.W_v = (
            project(query_size),
            project(key_size),
            project(value_size),
        )
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        # False: the fused fast path of chapter 11 (d2l.fast_attention)
        self.need_weights = True

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None, *,
                need_weights: bool | None = None) -> Tensor:
        """queries (batch, n, d_q), keys (batch, m, d_k), values (batch, m, d_v)
        -> (batch, n, p_o).

        p_o is num_hiddens; valid_lens: None, (batch,) or (batch, n) masks keys >= the
        length.
        """
        checks.check_qkv(queries, keys, values)
        checks.check_in_features(self.W_q, queries, "queries")
        checks.check_in_features(self.W_k, keys, "keys")
        checks.check_in_features(self.W_v, values, "values")
        (batch, n), m = queries.shape[:2], keys.shape[1]
        valid_lens = checks.check_valid_lens(valid_lens, batch, m, n)
        if not (self.need_weights if need_weights is None else need_weights):
            return self._fast_forward(queries, keys, values, valid_lens)
        if valid_lens is not None:
            # Head j of example e sits at row e * num_heads + j: repeat each length per
            # head.
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        q = transpose_qkv(self.W_q(queries), self.num_heads)  # (batch * heads, n, p)
        k = transpose_qkv(self.W_k(keys), self.num_heads)  # (batch * heads, m, p)
        v = transpose_qkv(self.W_v(values), self.num_heads)  # (batch * heads, m, p)
        output = self.attention(q, k, v, valid_lens)  # (batch * heads, n, p)
        return self.W_o(transpose_output(output, self.num_heads))

    def _fast_forward(self, queries, keys, values, valid_lens) -> Tensor:
        """The same result with no weights kept: heads as views (batch, heads, steps,
        p), the lengths broadcast over heads instead of repeated, and the fused
        kernel."""
        self.attention.attention_weights = None

        # (batch, steps, heads * p) -> (batch, heads, steps, p)
        def heads(X: Tensor) -> Tensor:
            return X.unflatten(-1, (self.num_heads, -1)).transpose(1, 2)

        p = self.attention.dropout.p if self.training else 0.0
        output = d2l.fused_attention(
            heads(self.W_q(queries)), heads(self.W_k(keys)), heads(self.W_v(values)),
            valid_lens, p)  # fmt: skip
        return self.W_o(output.transpose(1, 2).flatten(2))  # (batch, n, p_o)


__all__ = [
    "MultiHeadAttention",
    "transpose_output",
    "transpose_qkv",
]

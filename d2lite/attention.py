"""Masked softmax, scaled dot-product attention and additive attention (chapter 4).

Generated from book/04_attention_scoring.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math

import torch
from torch import Tensor, nn


def masked_softmax(X: Tensor, valid_lens: Tensor | None = None) -> Tensor:
    """Softmax over the last axis that gives key positions >= valid_lens exactly zero weight.

    X: (batch, queries, keys); valid_lens: None, (batch,) or (batch, queries) -> same shape as X.
    A row whose valid length is 0 (or negative) has no key to attend to and is all zeros.
    """
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    if X.dim() != 3:
        raise ValueError(f"X must have shape (batch, queries, keys), got {tuple(X.shape)}")
    batch, queries, keys = X.shape
    valid_lens = torch.as_tensor(valid_lens, device=X.device)
    if tuple(valid_lens.shape) == (batch,):
        lens = valid_lens[:, None, None]  # the same length for every query of an example
    elif tuple(valid_lens.shape) == (batch, queries):
        lens = valid_lens[:, :, None]  # one length per query (causal masks need this)
    else:
        raise ValueError(
            f"valid_lens must have shape ({batch},) or ({batch}, {queries}) for X of shape "
            f"{tuple(X.shape)}, got {tuple(valid_lens.shape)}"
        )
    keep = torch.arange(keys, device=X.device) < lens  # (batch, 1 or queries, keys)
    # A very negative finite score (not -inf) keeps an all-masked row free of NaN ...
    X = X.masked_fill(~keep, torch.finfo(X.dtype).min)
    # ... and zeroing afterwards makes masked weights exactly 0, even in such a row.
    return torch.softmax(X, dim=-1).masked_fill(~keep, 0.0)


def _check_qkv(queries: Tensor, keys: Tensor, values: Tensor, same_size: bool) -> None:
    """Raise ValueError unless (batch, n, d_q), (batch, m, d_k), (batch, m, d_v) fit together."""
    for name, x in (("queries", queries), ("keys", keys), ("values", values)):
        if x.dim() != 3:
            raise ValueError(
                f"{name} must have shape (batch, steps, features), got {tuple(x.shape)}"
            )
    q, k, v = (tuple(x.shape) for x in (queries, keys, values))
    if not q[0] == k[0] == v[0]:
        raise ValueError(f"batch sizes differ: queries {q}, keys {k}, values {v}")
    if k[1] != v[1]:
        raise ValueError(f"every key needs one value: keys {k} but values {v}")
    if same_size and q[2] != k[2]:
        raise ValueError(f"queries and keys need the same feature size: queries {q}, keys {k}")


class DotProductAttention(nn.Module):
    """Scaled dot-product attention softmax(Q K^T / sqrt(d)) V with padding masks."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: Tensor | None = None

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, valid_lens: Tensor | None = None
    ) -> Tensor:
        """queries (batch, n, d), keys (batch, m, d), values (batch, m, v) -> (batch, n, v)."""
        _check_qkv(queries, keys, values, same_size=True)
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (batch, n, m)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(nn.Module):
    """Additive attention w_v^T tanh(W_q q + W_k k); queries and keys may differ in size.

    Give query_size and key_size to build ordinary Linear layers; leave them out and the
    layers infer their input sizes at the first call (nn.LazyLinear), as in d2l.
    """

    def __init__(
        self,
        num_hiddens: int,
        dropout: float = 0.0,
        query_size: int | None = None,
        key_size: int | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(num_hiddens, int) or num_hiddens <= 0:
            raise ValueError(f"num_hiddens must be a positive int, got {num_hiddens!r}")

        def project(size: int | None) -> nn.Module:
            if size is None:
                return nn.LazyLinear(num_hiddens, bias=False)
            return nn.Linear(size, num_hiddens, bias=False)

        self.W_q, self.W_k = project(query_size), project(key_size)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: Tensor | None = None

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, valid_lens: Tensor | None = None
    ) -> Tensor:
        """queries (batch, n, d_q), keys (batch, m, d_k), values (batch, m, v) -> (batch, n, v)."""
        _check_qkv(queries, keys, values, same_size=False)
        for name, layer, x in (("queries", self.W_q, queries), ("keys", self.W_k, keys)):
            lazy = isinstance(layer, nn.modules.lazy.LazyModuleMixin)
            if not lazy and x.shape[-1] != layer.in_features:
                raise ValueError(
                    f"{name} must have {layer.in_features} features, got shape {tuple(x.shape)}"
                )
        q, k = self.W_q(queries), self.W_k(keys)  # (batch, n, h), (batch, m, h)
        # Every query meets every key: broadcast to (batch, n, m, h).
        features = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, n, m)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


__all__ = [
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
]

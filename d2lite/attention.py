"""Masked softmax, scaled dot-product attention and additive attention (chapter 4).

Generated from book/04_attention_scoring.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math

import torch
from torch import Tensor, nn

from d2lite import checks


def masked_softmax(X: Tensor, valid_lens: Tensor | None = None) -> Tensor:
    """Softmax over the last axis that gives key positions >= valid_lens exactly zero weight.

    X: (batch, queries, keys); valid_lens: None, (batch,) or (batch, queries) -> same shape as X.
    Lengths lie in [0, keys]; a row of valid length 0 has no key: all zeros.
    """
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    batch, queries, keys = checks.check_scores(X).shape
    valid_lens = checks.check_valid_lens(valid_lens, batch, keys, queries)
    valid_lens = valid_lens.to(X.device)
    # (batch,): one length per example; (batch, queries): one per query.
    lens = valid_lens.reshape(batch, -1, 1)
    keep = torch.arange(keys, device=X.device) < lens  # (batch, 1 or queries, keys)
    # A very negative finite score (not -inf) keeps an all-masked row free of NaN ...
    X = X.masked_fill(~keep, torch.finfo(X.dtype).min)
    # ... and zeroing afterwards makes masked weights exactly 0, even in such a row.
    return torch.softmax(X, dim=-1).masked_fill(~keep, 0.0)


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
        checks.check_qkv(queries, keys, values, same_size=True)
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
        checks.check_positive(num_hiddens, "num_hiddens")

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
        checks.check_qkv(queries, keys, values)
        checks.check_in_features(self.W_q, queries, "queries")
        checks.check_in_features(self.W_k, keys, "keys")
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

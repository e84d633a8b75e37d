"""Masked softmax, scaled dot-product attention and additive attention (chapter 4).

Generated from book/04_attention_scoring.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math

import torch
from torch import Tensor, nn

import d2lite as d2l
from d2lite import checks


def masked_softmax(X: Tensor, valid_lens: Tensor | None = None) -> Tensor:
    """Softmax over the last axis that gives key positions >= valid_lens exactly
    zero weight.

    X: (batch, queries, keys); valid_lens: None, (batch,) or (batch, queries) -> same
    shape as X.
    Lengths lie in [0, keys]; a row of valid length 0 has no key: all zeros. A row
    whose kept scores are all -inf has nothing to weigh: it comes out NaN.
    """
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    batch, queries, keys = checks.check_scores(X).shape
    valid_lens = checks.check_valid_lens(valid_lens, batch, keys, queries)
    valid_lens = valid_lens.to(X.device)
    # (batch,): one length per example; (batch, queries): one per query.
    lens = valid_lens.reshape(batch, -1, 1)
    empty = lens == 0  # rows that keep no key
    # A row that hid every key would be all -inf, and its softmax 0/0 = NaN. It is
    # shown every key instead and set to zeros at the end.
    hide = torch.arange(keys, device=X.device) >= lens.masked_fill(empty, keys)
    # 0 for a kept key, -inf for a hidden one, whose exp is exactly 0
    # (batch, 1 or queries, keys)
    bias = torch.where(hide, -math.inf, 0.0).to(X.dtype)
    # Adding the bias hides the same keys as X.masked_fill(hide, -math.inf), and costs
    # less: the backward pass hands the gradient through an addition unchanged.
    weights = torch.softmax(X + bias, dim=-1)
    if checks.values_checked():
        # Inside a model that checked the lengths once on the way in: reading a value
        # back from a GPU would make the host wait for it, so zero empty rows anyway.
        weights = torch.where(empty, 0.0, weights)
    elif empty.any():  # asks the lengths only, not the queries x keys weights
        weights = weights.masked_fill(empty, 0.0)
    return weights


class DotProductAttention(nn.Module):
    """Scaled dot-product attention softmax(Q K^T / sqrt(d)) V with padding masks.

    The weights of the last call stay in attention_weights. With need_weights=False
    (as an argument, or the attribute that fast_attention sets) the fused kernel of
    fused_attention computes the same output and keeps no weights
    (attention_weights is None).
    """

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: Tensor | None = None
        self.need_weights = True

    def project_keys(self, keys: Tensor) -> Tensor:
        """The keys as the scores use them: the dot product takes them as they are
        (AdditiveAttention.project_keys multiplies them by W_k)."""
        return keys

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None, *,
                need_weights: bool | None = None,
                keys_projected: bool = False) -> Tensor:
        """queries (batch, n, d), keys (batch, m, d), values (batch, m, v)
        -> (batch, n, v). keys_projected changes nothing here (there is no
        projection to skip); it lets the two attentions be called alike."""
        checks.check_qkv(queries, keys, values, same_size=True)
        if not (self.need_weights if need_weights is None else need_weights):
            # the fast path (chapter 11, sec-fast-path)
            self.attention_weights = None
            p = self.dropout.p if self.training else 0.0
            return d2l.fused_attention(queries[:, None], keys[:, None],
                                       values[:, None], valid_lens, p)[:, 0]
        d = queries.shape[-1]
        # Scaling the n queries costs n * d operations; scaling the scores would cost
        # n * m.
        # (batch, n, m)
        scores = torch.bmm(queries / math.sqrt(d), keys.transpose(1, 2))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(nn.Module):
    """Additive attention w_v^T tanh(W_q q + W_k k); queries and keys may differ in
    size.

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

    def project_keys(self, keys: Tensor) -> Tensor:
        """keys (batch, m, d_k) -> W_k keys (batch, m, d_h). A key's projection does not
        depend on the query: whoever asks with one query at a time projects the keys
        once and passes keys_projected=True."""
        checks.check_in_features(self.W_k, keys, "keys")
        return self.W_k(keys)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor,
                valid_lens: Tensor | None = None, *,
                keys_projected: bool = False) -> Tensor:
        """queries (batch, n, d_q), keys (batch, m, d_k), values (batch, m, v)
        -> (batch, n, v); with keys_projected=True, keys are project_keys(keys)."""
        checks.check_qkv(queries, keys, values)
        checks.check_in_features(self.W_q, queries, "queries")
        if keys_projected:
            checks.check_in_features(self.w_v, keys, "projected keys")
        q = self.W_q(queries)  # (batch, n, d_h)
        k = keys if keys_projected else self.project_keys(keys)  # (batch, m, d_h)
        # Every query meets every key: broadcast to (batch, n, m, d_h).
        features = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, n, m)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


__all__ = [
    "AdditiveAttention",
    "DotProductAttention",
    "masked_softmax",
]

"""Sinusoidal positional encoding and local (windowed) self-attention (chapter 7).

Generated from book/07_self_attention.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from d2lite import checks


def local_attention_mask(num_steps: int, window: int, device=None) -> Tensor:
    """Boolean (num_steps, num_steps) mask, True where query i may see key j:
    |i - j| <= window."""
    num_steps = checks.check_scalar(num_steps, "num_steps", int, low=0)
    window = checks.check_scalar(window, "window", int, low=0)
    checks.check_bytes(num_steps**2, f"local_attention_mask(num_steps={num_steps})")
    steps = torch.arange(num_steps, device=device)
    return (steps[:, None] - steps[None, :]).abs() <= window


def local_attention(queries: Tensor, keys: Tensor, values: Tensor,
                    window: int) -> Tensor:
    """Self-attention in which position i sees only positions j with |i - j| <= window.

    queries, keys (batch, n, d) and values (batch, n, v) -> (batch, n, v);
    O(n * window * d).
    """
    checks.check_qkv(queries, keys, values, same_size=True)
    if (queries.dim() != 3 or keys.shape != queries.shape
            or values.shape[:2] != queries.shape[:2]):
        raise ValueError(
            f"expected queries and keys (batch, n, d) and values (batch, n, v), got "
            f"{tuple(queries.shape)}, {tuple(keys.shape)}, {tuple(values.shape)}"
        )
    window = checks.check_scalar(window, "window", int, low=0)
    n, d = queries.shape[1], queries.shape[2]
    window = min(window, n - 1)  # a wider window sees nothing more, only more padding
    width = 2 * window + 1
    # Window of query i: padded positions i .. i + 2w,
    # i.e. original positions i - w .. i + w.
    # key_windows (batch, n, d, r), value_windows (batch, n, v, r)
    key_windows = F.pad(keys, (0, 0, window, window)).unfold(1, width, 1)
    value_windows = F.pad(values, (0, 0, window, window)).unfold(1, width, 1)
    scores = torch.einsum("bnd,bndr->bnr", queries, key_windows) / math.sqrt(d)
    shifts = torch.arange(width, device=queries.device) - window  # -w .. w
    # (n, r) of each slot
    position = torch.arange(n, device=queries.device)[:, None] + shifts
    outside = (position < 0) | (position >= n)  # (n, r): slots that are only padding
    weights = torch.softmax(scores.masked_fill(outside, float("-inf")), dim=-1)
    return torch.einsum("bnr,bnvr->bnv", weights, value_windows)


class PositionalEncoding(nn.Module):
    """Add sinusoidal position encodings: X (batch, n, num_hiddens) ->
    dropout(X + P[:, :n]).

    Unlike d2l, P is a buffer (it moves with .to(device)) computed in float64 before
    rounding, and an odd num_hiddens is refused.
    """

    def __init__(self, num_hiddens: int, dropout: float = 0.0,
                 max_len: int = 1000) -> None:
        super().__init__()
        num_hiddens = checks.check_positive(num_hiddens, "num_hiddens")
        max_len = checks.check_positive(max_len, "max_len")
        checks.check_bytes(max_len * num_hiddens * 8,
                           f"PositionalEncoding(max_len={max_len})")
        if num_hiddens % 2 != 0:
            raise ValueError(
                f"num_hiddens must be even (sine/cosine pairs), got {num_hiddens}"
            )
        self.num_hiddens, self.max_len = num_hiddens, max_len
        self.dropout = nn.Dropout(dropout)
        position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        omega = 10000.0 ** (
            -torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens
        )
        angles = position * omega  # (max_len, num_hiddens / 2)
        P = torch.empty(1, max_len, num_hiddens, dtype=torch.float64)
        P[0, :, 0::2], P[0, :, 1::2] = torch.sin(angles), torch.cos(angles)
        self.register_buffer("P", P.float(), persistent=False)

    def forward(self, X: Tensor) -> Tensor:
        """X (batch, n, num_hiddens) with n <= max_len -> same shape."""
        checks.check_features(X, size=self.num_hiddens)
        if X.dim() != 3 or X.shape[-1] != self.num_hiddens or X.shape[1] > self.max_len:
            raise ValueError(
                f"expected shape (batch, n <= {self.max_len}, {self.num_hiddens}), "
                f"got {tuple(X.shape)}"
            )
        return self.dropout(X + self.P[:, : X.shape[1]].to(X.dtype))


__all__ = [
    "PositionalEncoding",
    "local_attention",
    "local_attention_mask",
]

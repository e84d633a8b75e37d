"""Unit tests for d2lite.positional: sinusoidal positional encoding and local attention."""

import math

import pytest
import torch

import d2lite as d2l


def _formula(max_len: int, num_hiddens: int) -> torch.Tensor:
    """The encoding written entry by entry from its definition (float64)."""
    P = torch.empty(max_len, num_hiddens, dtype=torch.float64)
    for i in range(max_len):
        for col in range(num_hiddens):
            angle = i / 10000 ** (2 * (col // 2) / num_hiddens)
            P[i, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return P


@pytest.mark.parametrize("num_hiddens", [2, 6, 32])
def test_P_matches_the_formula(num_hiddens):
    pe = d2l.PositionalEncoding(num_hiddens, dropout=0.0, max_len=200)
    assert pe.P.shape == (1, 200, num_hiddens) and pe.P.dtype == torch.float32
    torch.testing.assert_close(pe.P[0].double(), _formula(200, num_hiddens), atol=1e-7, rtol=0)


def test_default_max_len_and_sin_cos_columns():
    pe = d2l.PositionalEncoding(16, 0.0)
    assert pe.P.shape == (1, 1000, 16)
    assert torch.all(pe.P[0, 0, 0::2] == 0) and torch.all(pe.P[0, 0, 1::2] == 1)  # sin 0, cos 0
    assert pe.P.abs().max() <= 1


@pytest.mark.parametrize("delta", [1, 2, 7, 50, 333, 900])
def test_offset_is_a_fixed_rotation(delta):
    d = 32
    P = d2l.PositionalEncoding(d, 0.0).P[0].double()
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    c, s = torch.cos(delta * omega), torch.sin(delta * omega)
    sin_part, cos_part = P[:-delta, 0::2], P[:-delta, 1::2]
    torch.testing.assert_close(P[delta:, 0::2], c * sin_part + s * cos_part, atol=1e-6, rtol=0)
    torch.testing.assert_close(P[delta:, 1::2], -s * sin_part + c * cos_part, atol=1e-6, rtol=0)


def test_dot_product_depends_only_on_the_offset():
    P = d2l.PositionalEncoding(32, 0.0, max_len=300).P[0].double()
    for delta in (1, 5, 40):
        dots = (P[:-delta] * P[delta:]).sum(dim=1)
        torch.testing.assert_close(dots, dots[:1].expand_as(dots), atol=1e-5, rtol=0)


def test_forward_adds_P_and_keeps_dtype():
    pe = d2l.PositionalEncoding(8, dropout=0.0, max_len=20)
    X = torch.randn(3, 5, 8, dtype=torch.float64)
    Y = pe(X)
    assert Y.dtype == torch.float64 and Y.shape == X.shape
    torch.testing.assert_close(Y - X, pe.P[:, :5].double().expand(3, -1, -1))
    assert "P" not in pe.state_dict()  # a constant, rebuilt from the arguments


def test_dropout_only_in_training():
    pe = d2l.PositionalEncoding(8, dropout=0.5, max_len=20)
    X = torch.ones(2, 10, 8)
    pe.eval()
    torch.testing.assert_close(pe(X), X + pe.P[:, :10])
    pe.train()
    torch.manual_seed(0)
    assert (pe(X) == 0).any()


@pytest.mark.parametrize(
    "args",
    [(7, 0.0), (0, 0.0), (-4, 0.0), (8.0, 0.0), (8, 0.0, 0), (8, 0.0, 2.5)],
)
def test_bad_constructor_arguments(args):
    with pytest.raises(ValueError, match="num_hiddens|max_len"):
        d2l.PositionalEncoding(*args)


def test_bad_inputs():
    pe = d2l.PositionalEncoding(8, 0.0, max_len=10)
    with pytest.raises(ValueError, match=r"X must have shape \(batch, steps, 8\), got shape \(2,"):
        pe(torch.zeros(2, 5, 6))
    with pytest.raises(ValueError, match=r"got \(2, 11, 8\)"):
        pe(torch.zeros(2, 11, 8))
    with pytest.raises(ValueError, match=r"got shape \(5, 8\)"):
        pe(torch.zeros(5, 8))


def test_local_attention_mask():
    mask = d2l.local_attention_mask(6, 1)
    assert mask.dtype == torch.bool and mask.shape == (6, 6)
    expected = torch.tensor([[abs(i - j) <= 1 for j in range(6)] for i in range(6)])
    assert torch.equal(mask, expected)
    assert torch.equal(d2l.local_attention_mask(4, 0), torch.eye(4, dtype=torch.bool))
    assert d2l.local_attention_mask(5, 10).all()


def _masked_reference(q, k, v, window):
    mask = d2l.local_attention_mask(q.shape[1], window)
    scores = (q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights, mask


@pytest.mark.parametrize("window", [0, 1, 3, 9, 20])
def test_local_attention_equals_masked_full_attention(window):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 10, 4), torch.randn(2, 10, 4), torch.randn(2, 10, 3)
    expected, weights, mask = _masked_reference(q, k, v, window)
    assert torch.all(weights[:, ~mask] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 10))
    torch.testing.assert_close(d2l.local_attention(q, k, v, window), expected, atol=1e-6, rtol=0)


def test_local_attention_with_window_0_returns_the_values():
    v = torch.randn(1, 5, 2)
    q = k = torch.randn(1, 5, 3)
    torch.testing.assert_close(d2l.local_attention(q, k, v, 0), v)


def test_local_attention_cost_is_linear_in_n():
    from torch.utils.flop_counter import FlopCounterMode

    counts = []
    for n in (64, 128, 256):
        X = torch.randn(1, n, 8)
        with FlopCounterMode(display=False) as counter:
            d2l.local_attention(X, X, X, 2)
        counts.append(counter.get_total_flops())
    assert counts == [4 * 5 * n * 8 for n in (64, 128, 256)]


def test_local_attention_bad_inputs():
    X = torch.randn(2, 5, 4)
    with pytest.raises(ValueError, match="window must be a non-negative int"):
        d2l.local_attention(X, X, X, -1)
    with pytest.raises(ValueError, match=r"keys \(2, 6, 4\), got values \(2, 5, 4\)"):
        d2l.local_attention(X, torch.randn(2, 6, 4), X, 1)
    with pytest.raises(ValueError, match="values"):
        d2l.local_attention(X, X, torch.randn(2, 4, 4), 1)
    with pytest.raises(ValueError, match="num_steps must be a non-negative int"):
        d2l.local_attention_mask(-1, 2)
    with pytest.raises(ValueError, match="window must be a non-negative int"):
        d2l.local_attention_mask(3, 1.5)

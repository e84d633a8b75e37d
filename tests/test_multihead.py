"""Unit tests for d2lite.multihead: head reshaping and MultiHeadAttention."""

import math

import pytest
import torch
from torch import nn

import d2lite as d2l


def _mha(num_hiddens=24, num_heads=4, size=None, bias=False, seed=0):
    torch.manual_seed(seed)
    size = size or num_hiddens
    return d2l.MultiHeadAttention(
        num_hiddens, num_heads, 0.0, bias=bias, query_size=size, key_size=size, value_size=size
    )


def _loop_reference(mha, queries, keys, values, key_mask=None):
    """Multi-head attention written head by head, with its own softmax and masking."""
    width = mha.W_q.out_features // mha.num_heads
    heads = []
    for i in range(mha.num_heads):
        rows = slice(i * width, (i + 1) * width)

        def project(layer, x, rows=rows):
            out = x @ layer.weight[rows].T
            return out if layer.bias is None else out + layer.bias[rows]

        q, k, v = project(mha.W_q, queries), project(mha.W_k, keys), project(mha.W_v, values)
        scores = q @ k.transpose(1, 2) / math.sqrt(width)
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask, float("-inf"))
        heads.append(torch.softmax(scores, dim=-1) @ v)
    return mha.W_o(torch.cat(heads, dim=-1))


def test_transpose_qkv_puts_head_i_in_feature_block_i():
    batch, steps, heads, width = 3, 2, 4, 5
    X = torch.arange(heads).repeat_interleave(width).expand(batch, steps, -1).float()
    Y = d2l.transpose_qkv(X, heads)
    assert Y.shape == (batch * heads, steps, width)
    for j in range(batch * heads):
        assert torch.all(Y[j] == j % heads)


def test_transpose_output_undoes_transpose_qkv():
    X = torch.randn(2, 7, 12)
    for heads in (1, 2, 3, 4, 6, 12):
        assert torch.equal(d2l.transpose_output(d2l.transpose_qkv(X, heads), heads), X)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("num_heads", [1, 2, 3, 6])
def test_reshaping_equals_loop_over_heads(num_heads, bias):
    mha = _mha(num_hiddens=12, num_heads=num_heads, size=12, bias=bias)
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 12), torch.randn(2, 5, 12), torch.randn(2, 5, 12)
    valid_lens = torch.tensor([2, 5])
    key_mask = (torch.arange(5) < valid_lens[:, None])[:, None, :]  # (batch, 1, keys)
    with torch.no_grad():
        torch.testing.assert_close(mha(q, k, v), _loop_reference(mha, q, k, v), atol=1e-6, rtol=0)
        torch.testing.assert_close(
            mha(q, k, v, valid_lens), _loop_reference(mha, q, k, v, key_mask), atol=1e-6, rtol=0
        )


def test_per_query_valid_lens_are_repeated_per_head():
    mha = _mha(num_hiddens=8, num_heads=2, size=8)
    torch.manual_seed(2)
    X = torch.randn(2, 4, 8)
    valid_lens = torch.tensor([[1, 2, 3, 4], [4, 3, 2, 1]])  # e.g. a causal-style mask
    key_mask = torch.arange(4) < valid_lens[:, :, None]  # (batch, queries, keys)
    with torch.no_grad():
        out = mha(X, X, X, valid_lens)
        torch.testing.assert_close(out, _loop_reference(mha, X, X, X, key_mask), atol=1e-6, rtol=0)
    weights = mha.attention.attention_weights.reshape(2, 2, 4, 4)
    assert torch.all(weights[~key_mask[:, None].expand(-1, 2, -1, -1)] == 0)


@pytest.mark.parametrize("padding", [False, True])
def test_equals_torch_multihead_attention(padding):
    num_hiddens, num_heads, batch, n, m = 32, 4, 3, 5, 7
    ours = _mha(num_hiddens, num_heads, seed=3)
    theirs = nn.MultiheadAttention(
        num_hiddens, num_heads, dropout=0.0, bias=False, batch_first=True
    )
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
    torch.manual_seed(4)
    q, k, v = (torch.randn(batch, s, num_hiddens) for s in (n, m, m))
    valid_lens = torch.tensor([2, 7, 4]) if padding else None
    ignore = torch.arange(m) >= valid_lens[:, None] if padding else None
    with torch.no_grad():
        out = ours(q, k, v, valid_lens)
        expected, avg_weights = theirs(q, k, v, key_padding_mask=ignore)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)
    ours_avg = ours.attention.attention_weights.reshape(batch, num_heads, n, m).mean(dim=1)
    torch.testing.assert_close(ours_avg, avg_weights, atol=1e-5, rtol=0)


def test_equals_torch_with_biases_and_other_key_sizes():
    num_hiddens, num_heads, d_q, d_k, d_v = 16, 2, 5, 7, 3
    torch.manual_seed(5)
    ours = d2l.MultiHeadAttention(
        num_hiddens, num_heads, 0.0, bias=True, query_size=num_hiddens, key_size=d_k, value_size=d_v
    )
    theirs = nn.MultiheadAttention(
        num_hiddens, num_heads, bias=True, batch_first=True, kdim=d_k, vdim=d_v
    )
    with torch.no_grad():
        theirs.q_proj_weight.copy_(ours.W_q.weight)
        theirs.k_proj_weight.copy_(ours.W_k.weight)
        theirs.v_proj_weight.copy_(ours.W_v.weight)
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)
        q, k, v = torch.randn(2, 4, num_hiddens), torch.randn(2, 6, d_k), torch.randn(2, 6, d_v)
        torch.testing.assert_close(ours(q, k, v), theirs(q, k, v)[0], atol=1e-5, rtol=0)
    # torch's kdim/vdim cannot give queries another size; query_size can:
    X = torch.randn(1, 2, d_q)
    assert _mha(num_hiddens, num_heads, size=d_q)(X, X, X).shape == (1, 2, num_hiddens)


def test_shapes_and_attention_weights():
    mha = d2l.MultiHeadAttention(20, 5, 0.0, query_size=3, key_size=4, value_size=6)
    out = mha(
        torch.randn(2, 7, 3), torch.randn(2, 9, 4), torch.randn(2, 9, 6), torch.tensor([3, 9])
    )
    assert out.shape == (2, 7, 20)
    weights = mha.attention.attention_weights
    assert weights.shape == (2 * 5, 7, 9)
    assert torch.all(weights[:5, :, 3:] == 0) and torch.all(weights[5:] > 0)


def test_lazy_projections_infer_input_sizes():
    mha = d2l.MultiHeadAttention(8, 2, 0.0)
    out = mha(torch.randn(1, 3, 5), torch.randn(1, 4, 6), torch.randn(1, 4, 7))
    assert out.shape == (1, 3, 8)
    assert (mha.W_q.in_features, mha.W_k.in_features, mha.W_v.in_features) == (5, 6, 7)


def test_dropout_acts_only_in_training():
    mha = d2l.MultiHeadAttention(8, 2, dropout=0.5, query_size=8, key_size=8, value_size=8)
    X = torch.randn(2, 5, 8)
    mha.eval()
    torch.testing.assert_close(mha(X, X, X), mha(X, X, X))
    mha.train()
    torch.manual_seed(0)
    a = mha(X, X, X)
    torch.manual_seed(1)
    assert not torch.allclose(a, mha(X, X, X))


def test_gradients_reach_every_projection():
    mha = _mha(num_hiddens=8, num_heads=2, size=8)
    X = torch.randn(2, 3, 8)
    mha(X, X, X).sum().backward()
    for layer in (mha.W_q, mha.W_k, mha.W_v, mha.W_o):
        assert layer.weight.grad is not None and layer.weight.grad.abs().sum() > 0


def test_num_hiddens_not_divisible_by_num_heads():
    pattern = r"num_hiddens must be divisible by num_heads=4 .*, got num_hiddens=10"
    with pytest.raises(ValueError, match=pattern):
        d2l.MultiHeadAttention(10, 4, 0.0)


@pytest.mark.parametrize(
    "num_hiddens, num_heads", [(0, 1), (8, 0), (-8, 2), (8.0, 2), (8, True), (8, 2.0)]
)
def test_bad_sizes(num_hiddens, num_heads):
    with pytest.raises(ValueError, match="positive int"):
        d2l.MultiHeadAttention(num_hiddens, num_heads, 0.0)


def test_bad_inputs():
    mha = _mha(num_hiddens=8, num_heads=2, size=8)
    X = torch.randn(2, 3, 8)
    pattern = r"queries must have 8 features \(last axis\), got shape \(2, 3, 5\)"
    with pytest.raises(ValueError, match=pattern):
        mha(torch.randn(2, 3, 5), X, X)
    with pytest.raises(ValueError, match=r"keys must have shape \(batch, m, d_k\)"):
        mha(X, torch.randn(3, 8), X)
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\) or \(2, 3\)"):
        mha(X, X, X, torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="one row per key"):
        mha(X, X, torch.randn(2, 4, 8))
    with pytest.raises(ValueError, match="one batch size"):
        mha(X, torch.randn(3, 3, 8), torch.randn(3, 3, 8))
    with pytest.raises(ValueError, match="divisible by num_heads=4"):
        d2l.transpose_qkv(torch.randn(2, 3, 6), 4)
    with pytest.raises(ValueError, match="divisible by num_heads=4"):
        d2l.transpose_output(torch.randn(6, 3, 2), 4)
    with pytest.raises(ValueError, match=r"got \(2, 6\)"):
        d2l.transpose_qkv(torch.randn(2, 6), 2)

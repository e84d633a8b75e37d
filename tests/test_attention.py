"""Unit tests for d2lite.attention: masked softmax, dot-product and additive attention."""

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import d2lite as d2l


def _key_mask(valid_lens: torch.Tensor, queries: int, keys: int) -> torch.Tensor:
    """Boolean mask (batch, queries, keys), True where a key may be attended to."""
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    return (torch.arange(keys) < lens).expand(-1, queries, -1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("per_query", [False, True])
def test_dot_product_matches_torch_sdpa(dtype, per_query):
    torch.manual_seed(0)
    batch, n, m, d, v = 3, 5, 7, 8, 6
    q, k = torch.randn(batch, n, d, dtype=dtype), torch.randn(batch, m, d, dtype=dtype)
    values = torch.randn(batch, m, v, dtype=dtype)
    if per_query:
        valid_lens = torch.randint(1, m + 1, (batch, n))
    else:
        valid_lens = torch.tensor([2, 7, 4])
    attention = d2l.DotProductAttention(dropout=0.0)
    out = attention(q, k, values, valid_lens)
    mask = _key_mask(valid_lens, n, m)
    expected = F.scaled_dot_product_attention(q, k, values, attn_mask=mask)
    assert out.shape == (batch, n, v)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    # Without valid_lens it is plain attention.
    torch.testing.assert_close(
        attention(q, k, values), F.scaled_dot_product_attention(q, k, values), atol=1e-6, rtol=0
    )


def test_values_may_have_another_feature_size():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 9)
    attention = d2l.DotProductAttention()
    assert attention(q, k, v).shape == (2, 3, 9)
    assert attention.attention_weights.shape == (2, 3, 5)


def test_masked_positions_are_exactly_zero_and_rows_sum_to_one():
    torch.manual_seed(1)
    X = torch.randn(2, 4, 6) * 50  # large scores: the masked ones must still be exactly 0
    valid_lens = torch.tensor([[1, 2, 3, 6], [6, 5, 4, 2]])
    P = d2l.masked_softmax(X, valid_lens)
    mask = _key_mask(valid_lens, 4, 6)
    assert torch.all(P[~mask] == 0)
    # On the valid keys: the softmax of their scores alone (a softmax is never negative, so
    # a ">= 0" check could not fail; this one can).
    torch.testing.assert_close(P, torch.softmax(X.masked_fill(~mask, -torch.inf), dim=-1))
    torch.testing.assert_close(P.sum(-1), torch.ones(2, 4), atol=1e-6, rtol=0)
    # (batch,) lengths: the same for every query of an example.
    P = d2l.masked_softmax(X, torch.tensor([3, 1]))
    assert torch.all(P[0, :, 3:] == 0) and torch.all(P[1, :, 1:] == 0)
    torch.testing.assert_close(P[1, :, 0], torch.ones(4))


def test_masked_softmax_without_lengths_is_softmax():
    X = torch.randn(2, 3, 4)
    torch.testing.assert_close(d2l.masked_softmax(X, None), torch.softmax(X, dim=-1))


def test_zero_valid_length_gives_zeros_not_nan():
    X = torch.randn(2, 3, 4, requires_grad=True)
    P = d2l.masked_softmax(X, torch.tensor([0, 4]))
    assert not torch.isnan(P).any()
    assert torch.all(P[0] == 0)
    torch.testing.assert_close(P[1].sum(-1), torch.ones(3))
    (P * torch.randn_like(P)).sum().backward()
    assert not torch.isnan(X.grad).any()
    assert torch.all(X.grad[0] == 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize(
    "lens", [[2, 6, 0], [[1, 0, 3, 6], [6, 5, 4, 2], [0, 0, 1, 2]]], ids=["batch", "per_query"]
)
def test_masked_softmax_is_the_softmax_of_the_kept_scores_bit_for_bit(dtype, lens):
    """Kept rows equal softmax(X with hidden scores set to -inf) exactly (adding 0 changes no
    score); hidden keys and rows of valid length 0 are exactly 0, in the input's dtype."""
    torch.manual_seed(2)
    X = (torch.randn(3, 4, 6) * 30).to(dtype)
    before = X.clone()
    valid_lens = torch.tensor(lens)
    P = d2l.masked_softmax(X, valid_lens)
    assert P.dtype == dtype and torch.equal(X, before)  # the scores are left as they were
    mask = _key_mask(valid_lens, 4, 6)
    empty = ~mask.any(-1)  # (batch, queries): rows of valid length 0
    assert empty.any() and (~empty).any()
    assert torch.all(P[~mask] == 0) and torch.all(P[empty] == 0)
    assert not torch.isnan(P).any()
    reference = torch.softmax(X.masked_fill(~mask, -torch.inf), dim=-1)
    assert torch.equal(P[~empty], reference[~empty])


@pytest.mark.parametrize("lens", [[3, 0], [[1, 0, 4], [5, 2, 0]]], ids=["batch", "per_query"])
def test_masked_softmax_gradients(lens):
    """gradcheck in float64, and exact zeros: no gradient reaches a hidden score or a row of
    valid length 0."""
    torch.manual_seed(3)
    X = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    valid_lens = torch.tensor(lens)
    assert torch.autograd.gradcheck(lambda x: d2l.masked_softmax(x, valid_lens), (X,))
    (d2l.masked_softmax(X, valid_lens) * torch.randn(2, 3, 5, dtype=torch.float64)).sum().backward()
    mask = _key_mask(valid_lens, 3, 5)
    assert torch.all(X.grad[~mask] == 0)
    assert torch.all(X.grad[~mask.any(-1)] == 0)
    # the kept scores do get gradients (a row of one key has weight 1 whatever its score)
    assert torch.all(X.grad[mask & (mask.sum(-1, keepdim=True) > 1)] != 0)


class _CountScoreSizedResults(TorchDispatchMode):
    """Counts the operations, forward and backward, whose result is a new tensor of the
    scores' shape: each is one pass that writes the whole (batch, queries, keys) matrix."""

    def __init__(self, shape):
        super().__init__()
        self.shape, self.names = tuple(shape), []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {a.data_ptr() for a in args if isinstance(a, torch.Tensor)}
        if (isinstance(out, torch.Tensor) and tuple(out.shape) == self.shape
                and out.data_ptr() not in inputs):  # fmt: skip
            self.names.append(func.overloadpacket.__name__)
        return out


@pytest.mark.parametrize(
    "lens, most", [([2, 5], 3), ([0, 5], 5)], ids=["no_empty_row", "an_empty_row"]
)
def test_masked_softmax_passes_over_the_scores(lens, most):
    """The taught attention path's cost: with (batch,) lengths, forward and backward write
    the scores' matrix 3 times (the addition of the mask, the softmax, its backward); only when
    a row has valid length 0 does the overwrite and its backward add two more."""
    X = torch.randn(2, 3, 5, requires_grad=True)
    grad, valid_lens = torch.randn(2, 3, 5), torch.tensor(lens)
    with _CountScoreSizedResults(X.shape) as count:
        d2l.masked_softmax(X, valid_lens).backward(grad)
    # the count sees both passes of the softmax, so it would see any other pass too
    assert {"_softmax", "_softmax_backward_data"} <= set(count.names), count.names
    assert len(count.names) <= most, count.names


def test_lengths_beyond_the_keys_raise():
    X = torch.randn(2, 3, 4)
    torch.testing.assert_close(
        d2l.masked_softmax(X, torch.tensor([4, 4])), torch.softmax(X, dim=-1)
    )
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[0, 4\] for 4 keys"):
        d2l.masked_softmax(X, torch.tensor([4, 100]))
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[0, 4\]"):
        d2l.masked_softmax(X, torch.tensor([-1, 2]))


def test_attention_weights_attribute():
    q, k, v = torch.randn(2, 1, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 2)
    attention = d2l.DotProductAttention()
    assert attention.attention_weights is None
    attention(q, k, v, torch.tensor([1, 3]))
    w = attention.attention_weights
    assert w.shape == (2, 1, 3)
    torch.testing.assert_close(w[0, 0], torch.tensor([1.0, 0.0, 0.0]))


def test_dropout_changes_training_output_only():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    attention = d2l.DotProductAttention(dropout=0.5)
    attention.eval()
    torch.testing.assert_close(attention(q, k, v), attention(q, k, v))
    attention.train()
    assert not torch.allclose(attention(q, k, v), attention(q, k, v))


def test_dot_product_gradcheck():
    torch.manual_seed(0)
    q = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    attention = d2l.DotProductAttention()
    lens = torch.tensor([[1, 3, 5], [2, 0, 4]])
    assert torch.autograd.gradcheck(lambda a, b, c: attention(a, b, c, lens), (q, k, v))


def test_additive_attention_d2l_shapes():
    torch.manual_seed(0)
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.normal(0, 1, (2, 10, 2))
    values = torch.normal(0, 1, (2, 10, 4))
    valid_lens = torch.tensor([2, 6])
    attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1)
    attention.eval()
    out = attention(queries, keys, values, valid_lens)
    assert out.shape == (2, 1, 4)
    w = attention.attention_weights
    assert w.shape == (2, 1, 10)
    assert torch.all(w[0, 0, 2:] == 0) and torch.all(w[1, 0, 6:] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 1))
    torch.testing.assert_close(out, torch.bmm(w, values))


def test_additive_attention_formula_with_explicit_sizes():
    torch.manual_seed(0)
    attention = d2l.AdditiveAttention(num_hiddens=5, query_size=3, key_size=2)
    q, k, v = torch.randn(1, 2, 3), torch.randn(1, 4, 2), torch.randn(1, 4, 6)
    out = attention(q, k, v)
    Wq, Wk, wv = attention.W_q.weight, attention.W_k.weight, attention.w_v.weight[0]
    scores = torch.empty(2, 4)
    for i in range(2):
        for j in range(4):
            scores[i, j] = wv @ torch.tanh(Wq @ q[0, i] + Wk @ k[0, j])
    torch.testing.assert_close(out[0], torch.softmax(scores, -1) @ v[0])


def test_additive_gradcheck():
    torch.manual_seed(0)
    attention = d2l.AdditiveAttention(num_hiddens=4, query_size=3, key_size=2).double()
    q = torch.randn(2, 2, 3, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 4, 2, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    lens = torch.tensor([3, 1])
    assert torch.autograd.gradcheck(lambda a, b, c: attention(a, b, c, lens), (q, k, v))


def test_additive_keys_projected_once_give_the_same_output_and_gradients():
    torch.manual_seed(0)
    attention = d2l.AdditiveAttention(num_hiddens=4, query_size=3, key_size=2).double()
    q = torch.randn(2, 1, 3, dtype=torch.float64)
    k = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 5, 3, dtype=torch.float64)
    lens = torch.tensor([3, 5])
    out = attention(q, k, v, lens)
    (grad_k,) = torch.autograd.grad(out.sum(), k)
    keys = attention.project_keys(k)
    assert keys.shape == (2, 5, 4)
    once = attention(q, keys, v, lens, keys_projected=True)
    (grad_once,) = torch.autograd.grad(once.sum(), k)
    torch.testing.assert_close(once, out)
    torch.testing.assert_close(grad_once, grad_k)
    # projected keys must be num_hiddens wide; raw keys passed as projected are not
    with pytest.raises(ValueError, match=r"projected keys must have 4 features"):
        attention(q, k, v, lens, keys_projected=True)


def test_dot_product_takes_keys_as_they_are():
    attention = d2l.DotProductAttention()
    q, k, v = torch.randn(2, 1, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 3)
    assert attention.project_keys(k) is k
    torch.testing.assert_close(attention(q, attention.project_keys(k), v, keys_projected=True),
                               attention(q, k, v))


@pytest.mark.parametrize("make", [d2l.DotProductAttention, lambda: d2l.AdditiveAttention(4)])
def test_bad_inputs_name_the_shapes(make):
    attention = make()
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    one_row = r"values must have one row per key: keys \(2, 5, 4\), got values \(2, 6, 6\)"
    with pytest.raises(ValueError, match=one_row):
        attention(q, k, torch.randn(2, 6, 6))
    with pytest.raises(ValueError, match=r"one batch size, got .*\(3, 5, 4\)"):
        attention(q, torch.randn(3, 5, 4), v)
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\) or \(2, 3\), "
                       r"got shape \(1,\)"):
        attention(q, k, v, torch.tensor([1]))
    with pytest.raises(ValueError, match=r"\(2,\) or \(2, 3\), got shape \(2, 5\)"):
        attention(q, k, v, torch.ones(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        attention(q, k, v, torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match=r"values must have shape \(batch, m, d_v\), "
                       r"got shape \(2, 5\)"):
        attention(q, k, torch.randn(2, 5))


def test_dot_product_needs_equal_query_and_key_sizes():
    attention = d2l.DotProductAttention()
    size = r"keys must have the queries' feature size 4, got keys \(2, 5, 3\)"
    with pytest.raises(ValueError, match=size):
        attention(torch.randn(2, 3, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 6))


def test_additive_explicit_sizes_are_checked():
    attention = d2l.AdditiveAttention(4, query_size=3, key_size=2)
    pattern = r"keys must have 2 features \(last axis\), got shape \(1, 4, 5\)"
    with pytest.raises(ValueError, match=pattern):
        attention(torch.randn(1, 2, 3), torch.randn(1, 4, 5), torch.randn(1, 4, 1))
    with pytest.raises(ValueError, match="num_hiddens"):
        d2l.AdditiveAttention(0)


def test_masked_softmax_bad_shapes():
    pattern = r"X must have shape \(batch, queries, keys\), got shape \(2, 3\)"
    with pytest.raises(ValueError, match=pattern):
        d2l.masked_softmax(torch.randn(2, 3), torch.tensor([1, 2]))
    pattern = r"valid_lens must have shape \(2,\) or \(2, 3\), got shape \(4,\)"
    with pytest.raises(ValueError, match=pattern):
        d2l.masked_softmax(torch.randn(2, 3, 4), torch.tensor([1, 2, 3, 4]))

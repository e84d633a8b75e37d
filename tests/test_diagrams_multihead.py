"""Chapter 6's diagrams print the shapes multi-head attention produces, one band per head."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.diagrams.multihead import draw_head_split, draw_multihead, head_role
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)

CONFIGS = [  # num_hiddens, num_heads, (query, key, value sizes), batch, queries, keys
    (24, 3, (10, 7, 7), 2, 4, 6),
    (16, 8, (None, None, None), 1, 5, 3),
    (12, 2, (5, 9, 4), 3, 2, 2),
]


@pytest.mark.parametrize(("hidden", "heads", "sizes", "batch", "n", "m"), CONFIGS)
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_multihead_prints_the_shapes_the_module_produces(hidden, heads, sizes, batch, n, m, lang):
    torch.manual_seed(0)
    mha = d2l.MultiHeadAttention(hidden, heads, query_size=sizes[0], key_size=sizes[1],
                                 value_size=sizes[2])
    d_q, d_k, d_v = (s or hidden for s in sizes)
    queries, keys, values = torch.randn(batch, n, d_q), torch.randn(batch, m, d_k), \
        torch.randn(batch, m, d_v)
    state = torch.get_rng_state()
    d = d2l.diagrams.draw(mha, batch=batch, queries=n, keys=m, t=_t(lang))
    assert torch.equal(torch.get_rng_state(), state)  # the figure draws no random number
    with torch.no_grad():
        out = mha(queries, keys, values)
        Q, K, V = mha.W_q(queries), mha.W_k(keys), mha.W_v(values)
        heads_out = mha.attention(d2l.transpose_qkv(Q, heads), d2l.transpose_qkv(K, heads),
                                  d2l.transpose_qkv(V, heads))
    per_head = heads_out.reshape(batch, heads, n, -1)[:, 0].shape
    expected = {"queries": queries.shape, "keys": keys.shape, "values": values.shape,
                "Q": Q.shape, "K": K.shape, "V": V.shape, "concat": (batch, n, hidden),
                "output": out.shape, **{f"head{i + 1}": per_head for i in range(heads)}}
    assert d.shapes == {k: tuple(v) for k, v in expected.items()}
    _check_drawn(d)
    # one band per head in each of Q, K, V and the concatenation, in the head's color
    for strip in ("Q_", "K_", "V_", "cat_"):
        bands = [d.parts[f"{strip}{i + 1}"] for i in range(heads)]
        assert [b.role for b in bands] == [head_role(i) for i in range(heads)]
        assert f"{strip}{heads + 1}" not in d.parts
    # head i gets slice i of Q, K and V, nothing else
    for s in range(3):
        for i in range(heads):
            assert f"slice{s}_{i + 1}" in d.parts


def test_changing_num_heads_changes_the_figure():
    torch.manual_seed(0)
    two = draw_multihead(d2l.MultiHeadAttention(24, 2, query_size=4, key_size=4, value_size=4))
    six = draw_multihead(d2l.MultiHeadAttention(24, 6, query_size=4, key_size=4, value_size=4))
    assert sum(k.startswith("head") for k in two.shapes) == 2
    assert sum(k.startswith("head") for k in six.shapes) == 6
    assert two.shapes["head1"] == (2, 4, 12) and six.shapes["head1"] == (2, 4, 4)


def test_a_wrong_shape_or_module_fails():
    torch.manual_seed(0)
    mha = d2l.MultiHeadAttention(24, 3, query_size=10, key_size=7, value_size=7)
    d = draw_multihead(mha)
    assert d.shapes["head1"] != (2, 4, 24)  # one head is not the whole width
    with pytest.raises(ValueError, match="num_heads must be 1 to 8"):
        draw_multihead(d2l.MultiHeadAttention(24, 12))
    with pytest.raises(TypeError, match="multi-head attention module"):
        draw_multihead(d2l.DotProductAttention())
    with pytest.raises(ValueError, match="batch must be a positive int"):
        draw_multihead(mha, batch=0)
    mha.num_heads = 5  # 24 features do not split into 5 heads
    with pytest.raises(ValueError, match="num_heads=5"):
        draw_multihead(mha)

    class OneHead(d2l.MultiHeadAttention):  # says 3 heads, attends with one
        def forward(self, queries, keys, values, valid_lens=None):
            return self.W_o(self.attention(self.W_q(queries), self.W_k(keys),
                                           self.W_v(values)))

    with pytest.raises(ValueError, match="expected batch \\* heads = 6"):
        draw_multihead(OneHead(24, 3, query_size=10, key_size=7, value_size=7))


@pytest.mark.parametrize(("heads", "batch", "steps", "width"), [(3, 2, 3, 2), (4, 1, 5, 6),
                                                                (2, 2, 1, 3)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_head_split_draws_where_transpose_qkv_puts_each_head(heads, batch, steps, width, lang):
    d = draw_head_split(heads, batch=batch, steps=steps, width=width, t=_t(lang))
    X = torch.zeros(batch, steps, heads * width)
    assert d.shapes == {"features": tuple(X.shape),
                        "heads_as_batch": tuple(d2l.transpose_qkv(X, heads).shape)}
    # row j of the bigger batch holds head j % h of example j // h
    assert d.owner == [(j // heads, j % heads) for j in range(batch * heads)]
    assert [d.parts[f"y{j}"].role for j in range(batch * heads)] == \
        [head_role(j % heads) for j in range(batch * heads)]
    _check_drawn(d)


def test_head_split_fails_on_a_wrong_reshape():
    def wrong_split(X, h):  # forgets the permute: mixes heads and positions
        b, n, f = X.shape
        return X.reshape(b * h, n, f // h)

    def wrong_merge(X, h):
        b, n, p = X.shape
        return X.reshape(b // h, n, p * h)

    with pytest.raises(ValueError, match="mixed heads"):
        draw_head_split(3, split=wrong_split, merge=wrong_merge)
    with pytest.raises(ValueError, match="does not undo"):
        draw_head_split(3, merge=lambda X, h: d2l.transpose_output(X.roll(1, 0), h))
    with pytest.raises(ValueError, match="at most 4 heads"):
        draw_head_split(5)

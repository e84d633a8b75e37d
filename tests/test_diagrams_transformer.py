"""Chapter 8's diagrams (d2lite.diagrams.transformer): the encoder–decoder, the decoder's masks
and post- vs pre-norm print what the modules they are given really produce."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.diagrams.core import causal_mask, padding_mask
from d2lite.diagrams.transformer import (
    draw_masks,
    draw_norm_placement,
    draw_transformer,
    mask_weights,
)
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)

CONFIGS = [(32, 64, 4, 2), (24, 48, 8, 1), (16, 32, 2, 3)]


def _models(hiddens, ffn, heads, blks, vocab=50):
    enc = d2l.TransformerEncoder(vocab, hiddens, ffn, heads, blks, 0.0)
    dec = d2l.TransformerDecoder(vocab + 7, hiddens, ffn, heads, blks, 0.0)
    return enc.eval(), dec.eval()


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_transformer_prints_the_shapes_the_modules_produce(config, lang):
    enc, dec = _models(*config)
    d = draw_transformer(enc, dec, batch=3, src_steps=6, tgt_steps=4, t=_t(lang))
    src, tgt = torch.zeros(3, 6, dtype=torch.long), torch.zeros(3, 4, dtype=torch.long)
    with torch.no_grad():
        memory = enc(src)
        logits, _ = dec(tgt, dec.init_state(memory, None))
    hiddens, blks = config[0], config[3]
    assert d.shapes == {"src": (3, 6), "enc_in": (3, 6, hiddens), "memory": tuple(memory.shape),
                        "tgt": (3, 4), "dec_in": (3, 4, hiddens),
                        "logits": tuple(logits.shape)}  # fmt: skip
    assert d.shapes["logits"] == (3, 4, 57)
    _check_drawn(d)
    title = f"블록 × {blks}" if lang == "ko" else f"block × {blks}"
    assert d.labels().count(title) == 2  # the real number of blocks, encoder and decoder
    assert "K, V" in d.labels()


def test_transformer_leaves_the_models_and_the_rng_alone():
    enc, dec = _models(32, 64, 4, 2)
    before = [p.clone() for p in [*enc.parameters(), *dec.parameters()]]
    torch.manual_seed(3)
    draw_transformer(enc, dec)
    after_draw = torch.rand(3)
    torch.manual_seed(3)
    assert torch.equal(torch.rand(3), after_draw)
    assert all(torch.equal(a, b) for a, b in zip(before, [*enc.parameters(), *dec.parameters()]))


def test_transformer_rejects_wrong_models_and_sizes():
    enc, dec = _models(32, 64, 4, 2)
    with pytest.raises(TypeError, match="decoder"):
        draw_transformer(enc, torch.nn.Linear(3, 3))
    with pytest.raises(ValueError, match="batch"):
        draw_transformer(enc, dec, batch=0)
    small_dec = d2l.TransformerDecoder(50, 16, 32, 2, 2, 0.0)  # reads width 16, gets 32
    with pytest.raises(ValueError):
        draw_transformer(enc, small_dec)
    # a wrong shape is caught: another config prints other shapes
    other = draw_transformer(*_models(24, 48, 8, 1))
    assert other.shapes != draw_transformer(enc, dec).shapes


@pytest.mark.parametrize("tgt,src,valid", [(4, 5, 3), (3, 6, 6), (5, 4, 1)])
def test_masks_are_the_decoders_own(tgt, src, valid):
    _, dec = _models(16, 32, 2, 2)
    self_w, cross_w = mask_weights(dec, src_steps=src, tgt_steps=tgt, valid_len=valid)
    assert ((self_w > 0) == causal_mask(tgt)).all()
    assert ((cross_w > 0) == padding_mask(tgt, src, valid)).all()
    assert abs(self_w.sum(-1) - 1).max() < 1e-5 and abs(cross_w.sum(-1) - 1).max() < 1e-5
    for lang in ("ko", "en"):
        d = draw_masks(dec, src_steps=src, tgt_steps=tgt, valid_len=valid, t=_t(lang))
        assert (d.parts["causal"].visible == causal_mask(tgt)).all()
        assert (d.parts["padding"].visible == padding_mask(tgt, src, valid)).all()
        assert d.parts["padding"].shape == (tgt, src)
        _check_drawn(d)


def test_masks_reject_impossible_lengths_and_too_large_grids():
    _, dec = _models(16, 32, 2, 1)
    with pytest.raises(ValueError, match="valid_len"):
        mask_weights(dec, src_steps=3, valid_len=4)
    with pytest.raises(ValueError, match="tgt_steps"):
        mask_weights(dec, tgt_steps=0)
    with pytest.raises(ValueError):  # two 12-column grids do not fit side by side
        draw_masks(dec, src_steps=12, tgt_steps=12, valid_len=5)


class _PreNorm(torch.nn.Module):
    def __init__(self, d, ffn, heads):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attention = d2l.MultiHeadAttention(d, heads, 0.0, False, d, d, d)
        self.ffn = d2l.PositionWiseFFN(ffn, d, num_inputs=d)

    def forward(self, X, valid_lens=None):
        Y = self.ln1(X)
        X = X + self.attention(Y, Y, Y, valid_lens)
        return X + self.ffn(self.ln2(X))


@pytest.mark.parametrize("d_model,heads", [(32, 4), (20, 5), (8, 1)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_norm_placement_shapes_and_order(d_model, heads, lang):
    post = d2l.TransformerEncoderBlock(d_model, 2 * d_model, heads, 0.0)
    pre = _PreNorm(d_model, 2 * d_model, heads)
    d = draw_norm_placement(post, pre, batch=3, steps=7, t=_t(lang))
    X = torch.zeros(3, 7, d_model)
    with torch.no_grad():
        post_out, pre_out = post.eval()(X, None), pre(X)
    assert d.shapes == {"post_in": (3, 7, d_model), "post_out": tuple(post_out.shape),
                        "pre_in": (3, 7, d_model), "pre_out": tuple(pre_out.shape)}  # fmt: skip
    _check_drawn(d)
    x = {name: p.center[0] for name, p in d.parts.items()}
    # post-norm: the first LN comes after the first add; pre-norm: before the attention
    assert x["post_add1"] < x["post_ln2"] and x["post_attn0"] < x["post_add1"]
    assert x["pre_ln0"] < x["pre_attn1"] < x["pre_add2"]
    assert x["pre_add5"] > x["pre_ffn4"]  # pre-norm ends on an add, no LN after it


def test_norm_placement_rejects_swapped_blocks():
    post = d2l.TransformerEncoderBlock(16, 32, 2, 0.0)
    with pytest.raises(TypeError, match="pre"):
        draw_norm_placement(_PreNorm(16, 32, 2), post)


def test_models_called_with_gradients_can_be_drawn():
    enc, dec = _models(16, 32, 2, 2)
    enc.train()
    memory = enc(torch.randint(0, 50, (2, 5)))  # with gradients: weights are not graph leaves
    dec.train()(torch.randint(0, 57, (2, 3)), dec.init_state(memory, None))
    kept = enc.blks[0].attention.attention.attention_weights
    assert not kept.is_leaf
    assert draw_transformer(enc, dec).shapes["memory"] == (2, 5, 16)
    assert draw_masks(dec).parts["causal"].shape == (4, 4)
    assert enc.blks[0].attention.attention.attention_weights is kept

"""Chapter 5's diagram: one Bahdanau decoder step prints the shapes the decoder produces."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.bahdanau import Seq2SeqAttentionDecoder
from d2lite.diagrams import bahdanau as db
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)


@pytest.mark.parametrize(("vocab", "embed", "hiddens", "layers", "src", "batch"),
                         [(10, 8, 16, 2, 7, 4), (30, 32, 64, 1, 4, 1), (5, 3, 6, 3, 2, 2)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_step_prints_the_decoders_own_shapes(vocab, embed, hiddens, layers, src, batch, lang):
    encoder = d2l.Seq2SeqEncoder(vocab, embed, hiddens, layers)
    decoder = Seq2SeqAttentionDecoder(vocab, embed, hiddens, layers)
    X = torch.zeros(batch, src, dtype=torch.long)
    enc_outputs, enc_state = encoder(X)
    logits, (_, state, _) = decoder(X[:, :1], decoder.init_state((enc_outputs, enc_state)))
    rng = torch.get_rng_state()
    d = d2l.diagrams.draw(decoder, src_steps=src, batch=batch, t=_t(lang))
    assert torch.equal(rng, torch.get_rng_state())
    assert decoder.attention_weights.shape == (batch, 1, src)  # the figure ran a copy
    assert d.shapes == {
        "query": (batch, 1, hiddens), "keys": (batch, src, hiddens),
        "values": tuple(enc_outputs.shape), "weights": (batch, 1, src),
        "context": (batch, 1, hiddens), "embedding": (batch, 1, embed),
        "rnn_input": (batch, 1, hiddens + embed), "state": tuple(state.shape),
        "logits": tuple(logits.shape),
    }
    _check_drawn(d)


def test_a_wrong_decoder_or_shape_fails():
    with pytest.raises(TypeError, match="lacks"):
        db.draw_bahdanau_step(torch.nn.GRU(3, 4))
    with pytest.raises(ValueError, match="src_steps must be a positive int"):
        db.draw_bahdanau_step(Seq2SeqAttentionDecoder(5, 3, 6, 1), src_steps=0)
    d = db.draw_bahdanau_step(Seq2SeqAttentionDecoder(5, 3, 6, 1))
    d.shapes["context"] = (1, 1, 7)
    with pytest.raises(AssertionError):
        _check_drawn(d)

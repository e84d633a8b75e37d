"""Chapter 10's diagrams (d2lite.diagrams.lm): the BPE merge rows are the tokenizer's own
encoding steps, the GPT's printed shapes are the model's, the sampling rows are the steps of
sample_next_token, and only palette colors are drawn."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.diagrams import lm as dlm
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)

PROVERB = "낮말은 새가 듣고 밤말은 쥐가 듣는다 낮말은 새가 듣고 밤말은 쥐가 듣는다"


@pytest.fixture(scope="module")
def tokenizers():
    return {unit: d2l.BPETokenizer.train(PROVERB, 320, unit=unit)
            for unit in ("byte", "jamo", "syllable")}  # fmt: skip


@pytest.mark.parametrize("word", ["밤말", "듣고", "쥐가"])
def test_merge_steps_are_the_tokenizers_own(tokenizers, word):
    for tok in tokenizers.values():
        steps = dlm.bpe_merge_steps(tok, word)
        assert steps[0] == tok._base_ids(word)
        assert steps[-1] == tok.encode(word)  # the last row is what encode gives
        assert all(len(b) < len(a) for a, b in zip(steps, steps[1:]))  # each row merges
    d = dlm.draw_bpe_merges(tokenizers, word, t=_t("ko"))
    for unit, tok in tokenizers.items():
        steps = dlm.bpe_merge_steps(tok, word)
        last = [d.parts[f"{unit}_{len(steps) - 1}_{k}"].label for k in range(len(steps[-1]))]
        assert "".join(last).replace("-", "") == "".join(dlm.token_label(tok, i).replace("-", "")
                                                        for i in tok.encode(word))
        assert f"{unit}_{len(steps)}_0" not in d.parts  # no row past the last merge
    _check_drawn(d)


def test_pieces_show_bytes_in_hex_and_jamo_as_letters(tokenizers):
    byte = tokenizers["byte"]
    assert [dlm.token_label(byte, i) for i in dlm.bpe_merge_steps(byte, "쥐가")[0]] == [
        f"{b:02X}" for b in "쥐가".encode()]  # fmt: skip
    jamo = tokenizers["jamo"]
    base = [dlm.token_label(jamo, i) for i in dlm.bpe_merge_steps(jamo, "말은")[0]]
    assert base == ["ㅁ", "ㅏ", "-ㄹ", "ㅇ", "ㅡ", "-ㄴ"]  # finals marked apart from initials
    with pytest.raises(ValueError, match="word must be one chunk"):
        dlm.bpe_merge_steps(byte, "두 어절")
    with pytest.raises(TypeError, match="tok must be a d2l.BPETokenizer"):
        dlm.bpe_merge_steps("byte", "말")


@pytest.mark.parametrize("heads,blocks,hidden,steps", [(4, 2, 48, 4), (2, 1, 32, 3),
                                                       (8, 3, 64, 5)])
def test_gpt_diagram_prints_the_models_shapes(heads, blocks, hidden, steps):
    with torch.random.fork_rng(devices=[]):
        net = d2l.GPT(vocab_size=97, num_hiddens=hidden, num_heads=heads, num_blks=blocks,
                      max_len=16)
    state = torch.random.get_rng_state()
    d = dlm.draw_gpt(net, batch=2, steps=steps, t=_t("en"))
    assert torch.equal(state, torch.random.get_rng_state())  # the RNG is untouched
    tokens = torch.zeros(2, steps, dtype=torch.long)
    assert d.shapes["logits"] == tuple(net(tokens).shape) == (2, steps, 97)
    assert d.shapes["X"] == d.shapes["blocks"] == (2, steps, hidden)
    assert d.shapes["qkv"] == (2, heads, steps, hidden // heads)
    assert d.shapes["weights"] == (2 * heads, steps, steps)
    assert d.parts["mask"].shape == (steps, steps)
    assert f"{blocks} blocks" in "\n".join(d.labels())
    assert d2l.diagrams.draw(net, steps=steps).shapes == dlm.draw_gpt(net, steps=steps).shapes
    _check_drawn(d)
    _check_drawn(dlm.draw_gpt(net, steps=steps, t=_t("ko")))


def test_gpt_diagram_rejects_what_it_cannot_draw():
    net = d2l.GPT(vocab_size=11, num_hiddens=8, num_heads=2, num_blks=1, max_len=3)
    with pytest.raises(ValueError, match="steps must be at most min"):
        dlm.draw_gpt(net, steps=4)
    with pytest.raises(TypeError, match="net must be a d2l.GPT"):
        dlm.draw_gpt(torch.nn.Linear(2, 2))
    d = dlm.draw_gpt(net, steps=3)
    d.shapes["X"] = (1, 3, 9)  # a wrong shape is caught: it is not what is printed
    with pytest.raises(AssertionError):
        _check_drawn(d)


@pytest.mark.parametrize("temperature,top_k,top_p", [(0.8, 5, 0.8), (1.0, None, 0.5),
                                                     (1.5, 3, None)])
def test_sampling_rows_are_sample_next_tokens_steps(temperature, top_k, top_p):
    z = torch.randn(40, generator=d2l.generator(4)) * 2
    stages = dlm.sampling_steps(z, temperature=temperature, top_k=top_k, top_p=top_p)
    assert torch.allclose(stages["softmax"], torch.softmax(z / temperature, -1)[stages["order"]])
    final = stages["top_p" if top_p is not None else "top_k"]
    kept = set(stages["order"][final > 0].tolist())
    drawn = {int(d2l.sample_next_token(z, temperature=temperature, top_k=top_k, top_p=top_p,
                                       generator=d2l.generator(s))) for s in range(200)}
    assert drawn == kept  # exactly the tokens the real sampler can draw
    gen = d2l.generator(7)
    before = gen.get_state()
    d = dlm.draw_sampling(z, temperature=temperature, top_k=top_k, top_p=top_p,
                          generator=gen, t=_t("ko"))  # fmt: skip
    assert torch.equal(before, gen.get_state())  # the generator given does not advance
    pick = int(d2l.sample_next_token(z, temperature=temperature, top_k=top_k, top_p=top_p,
                                     generator=d2l.generator(7)))  # fmt: skip
    assert d.parts["sample"].label == str(pick)
    shown = d.parts[("top_p" if top_p is not None else "top_k")].visible[0]
    assert shown.tolist() == [i in kept for i in stages["order"][:7].tolist()]
    _check_drawn(d)


def test_sampling_checks_its_arguments_like_the_sampler():
    z = torch.randn(10)
    with pytest.raises(ValueError, match="temperature"):
        dlm.draw_sampling(z, temperature=0)
    with pytest.raises(ValueError, match="logits must be a 1-D float tensor"):
        dlm.sampling_steps(z[None])
    with pytest.raises(ValueError, match="columns must be an int in"):
        dlm.draw_sampling(z, columns=12)

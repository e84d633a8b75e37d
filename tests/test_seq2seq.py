"""Encoder, plain decoder, masked loss, greedy decoding and BLEU (d2lite.seq2seq)."""

import math

import pytest
import torch
from torch.nn import functional as F

import d2lite as d2l


@pytest.fixture
def net():
    torch.manual_seed(0)
    enc = d2l.Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    dec = d2l.Seq2SeqDecoder(vocab_size=12, embed_size=8, num_hiddens=16, num_layers=2)
    return d2l.Seq2Seq(enc, dec)


def test_encoder_shapes(net):
    X = torch.zeros((4, 7), dtype=torch.long)
    outputs, state = net.encoder(X)
    assert outputs.shape == (4, 7, 16)
    assert state.shape == (2, 4, 16)


def test_encoder_skips_padding():
    """With valid lengths, the final state is the state after the last real token."""
    torch.manual_seed(0)
    enc = d2l.Seq2SeqEncoder(10, 8, 16, 2)
    X = torch.randint(1, 10, (3, 6))
    valid = torch.tensor([6, 3, 1])
    outputs, state = enc(X, valid)
    for i, n in enumerate(valid.tolist()):
        out_i, state_i = enc(X[i : i + 1, :n])
        assert torch.allclose(state[:, i], state_i[:, 0], atol=1e-6)
        assert torch.allclose(outputs[i, :n], out_i[0], atol=1e-6)
        assert (outputs[i, n:] == 0).all()


def test_plain_decoder_shapes(net):
    X = torch.zeros((4, 7), dtype=torch.long)
    state = net.decoder.init_state(net.encoder(X))
    Y, new_state = net.decoder(X, state)
    assert Y.shape == (4, 7, 12)
    assert new_state[0].shape == (4, 16) and new_state[1].shape == (2, 4, 16)
    assert net(X, X).shape == (4, 7, 12)


def test_bad_inputs_raise(net):
    with pytest.raises(ValueError, match=r"\(batch, steps\)"):
        net.encoder(torch.zeros(4, dtype=torch.long))
    pattern = r"integer token ids, got shape \(4, 7\), dtype torch.float32"
    with pytest.raises(ValueError, match=pattern):
        net.encoder(torch.zeros((4, 7)))  # floats, not token ids: the dtype is named
    with pytest.raises(ValueError, match=r"X must hold at least one sequence of one step"):
        net.encoder(torch.zeros((4, 0), dtype=torch.long))
    tokens = torch.randint(0, 10, (2, 7))
    # Any integer dtype, and integral float lengths, give the same result as int64.
    expected = net.encoder(tokens, torch.tensor([7, 3]))[0]
    assert torch.equal(net.encoder(tokens.int(), torch.tensor([7, 3]))[0], expected)
    assert torch.equal(net.encoder(tokens, torch.tensor([7.0, 3.0]))[0], expected)
    with pytest.raises(ValueError, match=r"valid_lens must hold whole numbers"):
        net.encoder(tokens, torch.tensor([7.0, 2.5]))
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(4,\)"):
        net.encoder(torch.zeros((4, 7), dtype=torch.long), torch.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[1, 7\]"):
        net.encoder(torch.zeros((2, 7), dtype=torch.long), torch.tensor([0, 8]))
    state = net.decoder.init_state(net.encoder(torch.zeros((4, 7), dtype=torch.long)))
    with pytest.raises(ValueError, match=r"context must have shape \(3, 16\)"):
        net.decoder(torch.zeros((3, 5), dtype=torch.long), state)
    for abstract in (d2l.Encoder(), d2l.Decoder()):
        with pytest.raises(NotImplementedError):
            abstract(torch.zeros((1, 1), dtype=torch.long), None)


def test_masked_cross_entropy_ignores_padding():
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 5)
    labels = torch.randint(0, 5, (2, 4))
    valid = torch.tensor([4, 2])
    loss = d2l.masked_cross_entropy(logits, labels, valid)
    # Hand computation over the six real tokens.
    expected = (
        sum(
            F.cross_entropy(logits[b, t : t + 1], labels[b, t : t + 1])
            for b, n in enumerate(valid.tolist())
            for t in range(n)
        )
        / 6
    )
    assert torch.allclose(loss, expected)
    # Anything at padded positions changes nothing.
    logits2, labels2 = logits.clone(), labels.clone()
    logits2[1, 2:] = 100 * torch.randn(2, 5)
    labels2[1, 2:] = (labels[1, 2:] + 1) % 5
    assert torch.allclose(d2l.masked_cross_entropy(logits2, labels2, valid), loss)
    # ... while a real position does.
    logits2[1, 1] += 10 * torch.randn(5)
    assert not torch.allclose(d2l.masked_cross_entropy(logits2, labels2, valid), loss)


def test_masked_softmax_ce_loss_per_sequence():
    loss = d2l.MaskedSoftmaxCELoss()
    pred = torch.zeros(3, 4, 10)  # uniform: every token costs log 10
    label = torch.ones((3, 4), dtype=torch.long)
    out = loss(pred, label, torch.tensor([4, 2, 0]))
    assert out.shape == (3,)
    assert torch.allclose(out, torch.tensor([1.0, 0.5, 0.0]) * math.log(10))


def test_masked_loss_shape_errors():
    with pytest.raises(ValueError, match=r"labels must have shape \(2, 4\)"):
        d2l.masked_cross_entropy(torch.zeros(2, 4, 5), torch.zeros(2, 3, dtype=torch.long),
                                 torch.tensor([1, 1]))  # fmt: skip
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\)"):
        d2l.masked_cross_entropy(torch.zeros(2, 4, 5), torch.zeros(2, 4, dtype=torch.long),
                                 torch.tensor([1]))  # fmt: skip
    with pytest.raises(ValueError, match="batch, steps, vocab"):
        d2l.MaskedSoftmaxCELoss()(torch.zeros(2, 4), torch.zeros(2, 4), torch.tensor([1, 1]))
    with pytest.raises(ValueError, match="all zero"):
        d2l.masked_cross_entropy(torch.zeros(2, 4, 5), torch.zeros(2, 4, dtype=torch.long),
                                 torch.tensor([0, 0]))  # fmt: skip


# -- BLEU ------------------------------------------------------------------------------------


def test_bleu_perfect_and_disjoint():
    assert d2l.bleu("나는 집에 간다 .", "나는 집에 간다 .", k=2) == 1.0
    assert d2l.bleu("a b c", "d e f", k=2) == 0.0


def test_bleu_hand_computed():
    # Same length: no penalty; p1 = 3/4, p2 = 2/3.
    assert d2l.bleu("a b c d", "a b c e", k=2) == pytest.approx((3 / 4) ** 0.5 * (2 / 3) ** 0.25)
    # A short prediction: p1 = p2 = 1 but the penalty is exp(1 - 4/2) = e^-1.
    assert d2l.bleu("a b", "a b c d", k=2) == pytest.approx(math.exp(-1))
    # A long prediction is not penalised by the brevity term: p1 = 3/6, p2 = 2/5.
    assert d2l.bleu("a b c x y z", "a b c", k=2) == pytest.approx(0.5**0.5 * 0.4**0.25)
    # Clipping: "a" counts once because the label has it once; no bigram matches.
    assert d2l.bleu("a a a a", "a b", k=1) == pytest.approx(math.exp(1 - 2 / 4) * 0 + 0.25**0.5)
    assert d2l.bleu("a a a a", "a b", k=2) == 0.0
    # k = 3 adds p3 with weight 1/8: "a b c d" vs "a b c e" has p3 = 1/2.
    expected = (3 / 4) ** 0.5 * (2 / 3) ** 0.25 * 0.5**0.125
    assert d2l.bleu("a b c d", "a b c e", k=3) == pytest.approx(expected)
    # Token lists work like strings.
    assert d2l.bleu(["a", "b"], ["a", "b"]) == 1.0


def test_bleu_short_and_bad_inputs():
    assert d2l.bleu("", "a b") == 0.0
    assert d2l.bleu("a", "a b", k=2) == 0.0  # no bigram in a one-word prediction
    with pytest.raises(ValueError, match="k must be"):
        d2l.bleu("a", "a", k=0)
    with pytest.raises(ValueError, match="empty"):
        d2l.bleu("a", "")
    with pytest.raises(ValueError, match="str"):
        d2l.bleu(3, "a")


def test_corpus_bleu_pools_counts():
    preds = ["a b c d", "x y"]
    refs = ["a b c e", "x y"]
    # Pooled: p1 = 5/6, p2 = 3/4, p3 = 1/2 (1 of 2), p4 = 0/1 -> zero without smoothing.
    assert d2l.corpus_bleu(preds, refs, max_n=4) == 0.0
    expected = math.exp((math.log(5 / 6) + math.log(3 / 4) + math.log(1 / 2)) / 3)
    assert d2l.corpus_bleu(preds, refs, max_n=3) == pytest.approx(expected)
    # Brevity is judged on total lengths: 3 predicted words for 5 reference words.
    assert d2l.corpus_bleu(["a b", "c"], ["a b", "c d e"], max_n=1) == pytest.approx(
        math.exp(1 - 5 / 3)
    )
    with pytest.raises(ValueError, match="2 predictions for 1 labels"):
        d2l.corpus_bleu(["a", "b"], ["a"])


# -- greedy decoding -------------------------------------------------------------------------


def test_chrf_hand_computed_and_bounds():
    assert d2l.chrf(["나는 집에 간다 ."], ["나는 집에 간다 ."]) == 1.0
    assert d2l.chrf(["가"], ["나"]) == 0.0
    # order 1 only: 6 of 7 characters match in both directions, so P = R = F = 6/7
    assert math.isclose(d2l.chrf(["나는 집에 갔다 ."], ["나는 집에 간다 ."], char_order=1), 6 / 7)
    # spaces do not count: a re-spaced sentence is a perfect match
    assert d2l.chrf(["나는집에 간다."], ["나는 집에 간다 ."]) == 1.0
    # a wrong particle costs characters, not the whole word (unigrams: 6 of 7 match)
    pred, label = "나를 집에 간다 .", "나는 집에 간다 ."
    assert math.isclose(d2l.chrf([pred], [label], char_order=1), 6 / 7)
    assert 0 < d2l.chrf([pred], [label]) < 1


def test_chrf_matches_sacrebleu():
    import random

    import sacrebleu  # a test dependency (requirements.txt)

    rng = random.Random(0)
    words = "나는 집에 간다 갔다 친구 도서관에서 책을 읽는다 오늘 빵을 . ? a bc".split()
    for _ in range(300):
        refs = [" ".join(rng.choices(words, k=rng.randint(1, 8))) for _ in range(rng.randint(1, 5))]
        preds = [" ".join(rng.choices(words, k=rng.randint(0, 8))) if rng.random() < 0.7 else r
                 for r in refs]
        ours = 100 * d2l.chrf(preds, refs)
        assert math.isclose(ours, sacrebleu.corpus_chrf(preds, [refs]).score, abs_tol=1e-9)


def test_chrf_bad_inputs():
    with pytest.raises(ValueError, match="2 predictions for 1 labels"):
        d2l.chrf(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="at least one"):
        d2l.chrf([], [])
    with pytest.raises(ValueError, match="preds must be strings"):
        d2l.chrf([["a"]], ["a"])
    with pytest.raises(ValueError, match="beta"):
        d2l.chrf(["a"], ["a"], beta=0)
    with pytest.raises(ValueError, match="char_order"):
        d2l.chrf(["a"], ["a"], char_order=True)


def test_predict_and_translate_agree(net):
    src_vocab = d2l.Vocab("i go home .".split())
    tgt_vocab = d2l.Vocab("나 는 집 에 간다 . 학교 가".split())
    text, attn = d2l.predict_seq2seq(net, "I go home .", src_vocab, tgt_vocab, 6, d2l.cpu())
    assert isinstance(text, str)
    assert attn.shape == (0, 6)  # the plain decoder has no attention weights
    text2, tokens, _ = d2l.predict_seq2seq(net, "I go home .", src_vocab, tgt_vocab, 6,
                                           return_tokens=True)  # fmt: skip
    assert text2 == text and len(tokens) <= 6 and "<eos>" not in tokens
    assert d2l.detokenize_ko(tokens) == text
    many = d2l.translate(net, ["I go home .", "go", "home home ."], src_vocab, tgt_vocab, 6)
    assert many[0] == text
    for s, t in zip(["go", "home home ."], many[1:]):
        assert d2l.predict_seq2seq(net, s, src_vocab, tgt_vocab, 6)[0] == t
    with pytest.raises(ValueError, match="str"):
        d2l.predict_seq2seq(net, ["I", "go"], src_vocab, tgt_vocab, 6)
    with pytest.raises(ValueError, match="list of str"):
        d2l.translate(net, "I go home .", src_vocab, tgt_vocab, 6)


class _OneHotAttentionDecoder(d2l.AttentionDecoder):
    """Always emits token 4, attending to the source position equal to the step."""

    def __init__(self, vocab_size):
        super().__init__()
        self.vocab_size = vocab_size
        self._weights = []
        self.bias = torch.nn.Parameter(torch.zeros(1))

    def init_state(self, enc_all_outputs, valid_lens):
        return {"t": 0, "keys": enc_all_outputs[0].shape[1]}

    def forward(self, X, state):
        w = torch.zeros(X.shape[0], 1, state["keys"])
        w[:, 0, min(state["t"], state["keys"] - 1)] = 1.0
        self._weights = [w]
        logits = torch.zeros(X.shape[0], X.shape[1], self.vocab_size)
        logits[..., 4 if state["t"] < 3 else 2] = 1.0  # three tokens, then <eos>
        return logits, {"t": state["t"] + 1, "keys": state["keys"]}

    @property
    def attention_weights(self):
        return self._weights


def test_predict_collects_attention_weights():
    enc = d2l.Seq2SeqEncoder(10, 4, 8, 1)
    net = d2l.Seq2Seq(enc, _OneHotAttentionDecoder(6))
    src_vocab = d2l.Vocab("a b c".split())
    tgt_vocab = d2l.Vocab(["x"])  # index 4
    text, tokens, attn = d2l.predict_seq2seq(
        net, "a b c", src_vocab, tgt_vocab, 5, save_attention_weights=True, return_tokens=True
    )
    assert tokens == ["x", "x", "x"] and text == "x x x"
    assert attn.shape == (3, 5)
    assert torch.equal(attn, torch.eye(3, 5))


class _PassEncoder(d2l.Encoder):
    def forward(self, X, valid_lens=None):
        return X, valid_lens


class _CopyDecoder(d2l.Decoder):
    """Emits the source tokens (source and target share the vocabulary), then <eos>."""

    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.zeros(1))

    def init_state(self, enc_all_outputs, valid_lens):
        return enc_all_outputs[0], 0

    def forward(self, X, state):
        src, t = state
        tok = src[:, t] if t < src.shape[1] else torch.full_like(src[:, 0], 2)
        return F.one_hot(tok, 8).float().unsqueeze(1), (src, t + 1)


def test_evaluate_bleu_of_a_perfect_copy():
    net = d2l.EncoderDecoder(_PassEncoder(), _CopyDecoder())
    vocab = d2l.Vocab("a b c".split())
    pairs = [("a b", "a b"), ("c a b", "c a b")]
    assert d2l.evaluate_bleu(net, pairs, vocab, vocab, 6, d2l.cpu()) == 1.0
    assert d2l.evaluate_bleu(net, [("a b", "a b c")], vocab, vocab, 6) == pytest.approx(
        math.exp(1 - 3 / 2)
    )
    with pytest.raises(ValueError, match="no pairs"):
        d2l.evaluate_bleu(net, [], vocab, vocab, 6)


def test_bahdanau_predict_returns_weights_over_source_positions(predict_source_weights):
    torch.manual_seed(0)
    src_vocab = d2l.Vocab("i go home .".split())
    tgt_vocab = d2l.Vocab("나 는 집 에 간다 .".split())
    net = d2l.Seq2Seq(d2l.Seq2SeqEncoder(len(src_vocab), 8, 16, 2),
                      d2l.Seq2SeqAttentionDecoder(len(tgt_vocab), 8, 16, 2))  # fmt: skip
    attn = predict_source_weights(net, src_vocab, tgt_vocab, 7, real=5)  # "i go home . <eos>"
    assert torch.allclose(attn[-1], net.decoder.attention_weights[0, -1])


class _WrongShapeAttentionDecoder(_OneHotAttentionDecoder):
    @property
    def attention_weights(self):
        return torch.ones(1, 2, 1, 5)  # (batch, blocks, queries, keys): not (batch, steps, keys)


def test_predict_refuses_weights_of_the_wrong_shape():
    net = d2l.Seq2Seq(d2l.Seq2SeqEncoder(10, 4, 8, 1), _WrongShapeAttentionDecoder(6))
    vocab = d2l.Vocab(["x"])
    with pytest.raises(NotImplementedError, match="source_attention_weights"):
        d2l.predict_seq2seq(net, "x", vocab, vocab, 5, save_attention_weights=True)

"""Regression tests for silent wrong results found by a probe of bad and unusual inputs (issue 23).

Each case once ran without complaint and returned something wrong; now it raises a clear
``ValueError`` naming the argument, or does what the documentation promises.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from torch import nn

import d2lite as d2l
from d2lite import checks

# -- one scalar validator ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [8, np.int64(8), np.int32(8), torch.tensor(8).item()])
def test_integers_of_any_kind_are_accepted(value):
    assert checks.check_scalar(value, "n", int, low=1) == 8
    assert type(checks.check_scalar(value, "n", int, low=1)) is int


@pytest.mark.parametrize("value, match", [
    (True, "n must be a positive int, got bool True"),
    (2.0, "n must be a positive int, got float 2.0"),
    ("3", "n must be a positive int, got str '3'"),
    (0, "n must be a positive int, got int 0"),
])
def test_what_is_not_a_positive_int_is_named(value, match):
    with pytest.raises(ValueError, match=match):
        checks.check_scalar(value, "n", int, low=1)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.1, 1.5, True, "0.5"])
def test_floats_must_be_finite_and_in_range(value):
    with pytest.raises(ValueError, match=r"p must be a finite real number in \[0, 1\]"):
        checks.check_scalar(value, "p", float, low=0, high=1)


def test_open_bounds_exclude_their_ends():
    assert checks.check_scalar(np.float32(0.5), "lr", float, low=0, low_open=True) == 0.5
    with pytest.raises(ValueError, match="lr must be a finite real number > 0, got int 0"):
        checks.check_scalar(0, "lr", float, low=0, low_open=True)


# -- the training loop ---------------------------------------------------------------------------


def _tiny_classifier_data():
    X = torch.randn(32, 4, generator=d2l.generator(0))
    y = (X[:, 0] > 0).long()
    return d2l.load_array([X, y], 16, seed=0)


@pytest.mark.parametrize("clip_grad", [-1, 0, float("nan")])
def test_clip_grad_that_would_ascend_or_freeze_is_refused(clip_grad):
    net = nn.Linear(4, 2)
    with pytest.raises(ValueError, match="clip_grad must be a finite real number > 0"):
        d2l.train_classifier(net, _tiny_classifier_data(), None, 1, 0.1, device=d2l.cpu(),
                             clip_grad=clip_grad, plot=False)  # fmt: skip


@pytest.mark.parametrize("kwargs, name", [
    (dict(num_epochs=True), "num_epochs"), (dict(num_epochs=0), "num_epochs"),
    (dict(lr=0.0), "lr"), (dict(lr=float("inf")), "lr"), (dict(weight_decay=-1.0), "weight_decay"),
    (dict(max_seconds=0), "max_seconds"),
])
def test_fit_names_its_bad_numbers(kwargs, name):
    args = dict(num_epochs=1, lr=0.1) | kwargs
    with pytest.raises(ValueError, match=f"^{name} must be"):
        d2l.train_classifier(nn.Linear(4, 2), _tiny_classifier_data(), None, args["num_epochs"],
                             args["lr"], device=d2l.cpu(), plot=False,
                             **{k: v for k, v in args.items() if k not in ("num_epochs", "lr")})


def test_numpy_integers_are_counts_too():
    history = d2l.train_classifier(nn.Linear(4, 2), _tiny_classifier_data(), None, np.int64(2),
                                   0.1, device=d2l.cpu(), plot=False)  # fmt: skip
    assert len(history["loss"]) == 2


# -- text, corpus and decoding -------------------------------------------------------------------


def test_a_lone_reserved_token_string_is_not_split_into_characters():
    with pytest.raises(ValueError, match="reserved_tokens must be a list of str tokens"):
        d2l.Vocab(["a", "b"], reserved_tokens="<sep>")
    assert "<sep>" in d2l.Vocab(["a"], reserved_tokens=["<sep>"]).idx_to_token


def test_an_impossible_corpus_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(ValueError, match="num_train=1000000 is more than the at most"):
        d2l.make_enko_corpus(num_train=10**6)
    assert time.perf_counter() - start < 5  # refused before sampling, not after minutes


def test_the_loss_leaves_out_ignored_labels_and_refuses_foreign_ids():
    logits = torch.randn(2, 3, 5, generator=d2l.generator(0))
    labels = torch.tensor([[1, 2, 3], [4, 0, 1]])
    lens = torch.tensor([3, 3])
    ignored = labels.clone()
    ignored[0, 2] = -100
    by_hand = nn.functional.cross_entropy(logits.reshape(-1, 5), ignored.reshape(-1))
    torch.testing.assert_close(d2l.masked_cross_entropy(logits, ignored, lens), by_hand)
    bad = labels.clone()
    bad[1, 1] = 5
    with pytest.raises(ValueError, match=r"labels must be token ids in \[0, 5\)"):
        d2l.masked_cross_entropy(logits, bad, lens)


def _tiny_seq2seq():
    src = d2l.Vocab([["go", "home"]])
    tgt = d2l.Vocab([["집", "에", "가다"]])
    enc = d2l.Seq2SeqEncoder(len(src), 8, 8, 1)
    dec = d2l.Seq2SeqDecoder(len(tgt), 8, 8, 1)
    return d2l.EncoderDecoder(enc, dec), src, tgt


def test_decoding_puts_the_network_back_in_the_mode_it_was_in():
    net, src, tgt = _tiny_seq2seq()
    net.train()
    d2l.predict_seq2seq(net, "go home", src, tgt, 5)
    assert net.training
    d2l.translate(net, ["go home"], src, tgt, 5)
    assert net.training
    net.eval()
    d2l.predict_seq2seq(net, "go home", src, tgt, 5)
    assert not net.training


@pytest.mark.parametrize("batch_size", [-1, 0, True])
def test_translate_refuses_a_batch_size_that_would_return_nothing(batch_size):
    net, src, tgt = _tiny_seq2seq()
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        d2l.translate(net, ["go home"], src, tgt, 5, batch_size=batch_size)


def test_the_bilingual_decorator_keeps_its_alt_text(monkeypatch):
    shown = []
    monkeypatch.setattr(d2l.plotting, "_display",
                        lambda images, captions, alts, diagram=False: shown.append(alts))
    import matplotlib.pyplot as plt

    @d2l.bilingual(caption=("캡션", "caption"), alt=("대체 글", "alt text"))
    def _(t):
        plt.figure(figsize=(2, 2))

    assert shown and shown[0]["en"] == "alt text" and shown[0]["ko"] == "대체 글"


# -- absurd sizes fail before allocating; counts are counts ----------------------------------


@pytest.mark.parametrize("make", [
    lambda: d2l.PositionalEncoding(16, max_len=10**9),
    lambda: d2l.local_attention_mask(10**6, 2),
    lambda: d2l.RotaryEmbedding(64, max_len=10**9),
])
def test_absurd_sizes_are_refused_with_the_size_they_would_need(make):
    with pytest.raises(ValueError, match=r"would need [\d,.]+ GiB"):
        make()


def test_a_window_wider_than_the_sequence_allocates_nothing_more():
    q = torch.randn(2, 5, 4, generator=d2l.generator(0))
    torch.testing.assert_close(d2l.local_attention(q, q, q, 10**9), d2l.local_attention(q, q, q, 4))


@pytest.mark.parametrize("kwargs, name", [(dict(num_blks=-1), "num_blks"),
                                          (dict(num_blks=True), "num_blks"),
                                          (dict(num_classes=0), "num_classes")])
def test_a_vit_without_blocks_or_classes_is_refused(kwargs, name):
    args = dict(img_size=8, patch_size=4, num_hiddens=16, mlp_num_hiddens=32, num_heads=2,
                num_blks=1, emb_dropout=0.0, blk_dropout=0.0) | kwargs
    with pytest.raises(ValueError, match=f"{name} must be a positive int"):
        d2l.ViT(**args)


def test_numpy_integers_build_models():
    assert d2l.PositionalEncoding(np.int64(8), max_len=np.int64(4)).P.shape == (1, 4, 8)
    assert d2l.GroupedQueryAttention(np.int64(8), np.int64(2), np.int64(1)).num_heads == 2


@pytest.mark.parametrize("resize", [0, 2.5, True, (3,), "ab", (28, -1)])
def test_fashion_mnist_resize_is_checked_before_any_download(resize, tmp_path):
    with pytest.raises(ValueError, match="resize must be a positive int"):
        d2l.load_data_fashion_mnist(8, resize=resize, root=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing was fetched


def test_more_bad_inputs_get_clear_errors():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match="one dtype"):
        d2l.DotProductAttention()(q.double(), k, v)
    with pytest.raises(ValueError, match="i must be a non-negative int, got int -1"):
        d2l.try_gpu(-1)
    with pytest.raises(ValueError, match="got a str"):
        d2l.chrf("ab", "ab")  # characters would silently become sentences
    with pytest.raises(ValueError, match="got a str"):
        d2l.corpus_bleu("a b", "a b")


# -- the last mile (issue 47): silent results ------------------------------------------------------


@pytest.mark.parametrize("dropout", [-1, -0.1, 1.5, float("nan"), "0.1"])
def test_fused_attention_refuses_a_dropout_outside_0_1(dropout):
    q = torch.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match=r"^dropout must be a finite real number in \[0, 1\]"):
        d2l.fused_attention(q, q, q, dropout=dropout)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_grad_clipping_names_the_parameters_with_non_finite_gradients(bad):
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    for p in net.parameters():
        p.grad = torch.ones_like(p)
    net[1].weight.grad[0, 1] = bad
    before = [p.grad.clone() for p in net.parameters()]
    with pytest.raises(ValueError, match=r"gradient of 1\.weight holds NaN or inf"):
        d2l.grad_clipping(net, 1.0)
    # nothing was scaled: every gradient is as it was
    for p, old in zip(net.parameters(), before):
        torch.testing.assert_close(p.grad, old, rtol=0, atol=0, equal_nan=True)
    with pytest.raises(ValueError, match=r"gradient of parameter 0 holds NaN or inf"):
        d2l.grad_clipping([net[1].weight], 1.0)


@pytest.mark.parametrize("net", [5, "net", [1.0, 2.0], None])
def test_grad_clipping_says_what_net_can_be(net):
    with pytest.raises(ValueError, match="^net must be an nn.Module, an object with a params list"):
        d2l.grad_clipping(net, 1.0)


def test_a_minus_100_label_counts_neither_in_the_loss_nor_in_the_epochs_mean():
    logits = torch.randn(1, 3, 5, generator=d2l.generator(0))
    labels = torch.tensor([[1, -100, 2]])
    loss = d2l.masked_cross_entropy(logits, labels, torch.tensor([3]))
    kept = d2l.masked_cross_entropy(logits[:, [0, 2]], labels[:, [0, 2]], torch.tensor([2]))
    assert loss.item() == pytest.approx(kept.item())
    # the training loop weighs each batch's mean by the tokens it averaged over
    vocab = d2l.Vocab([["a", "b"]])
    batch_loss = d2l.seq2seq_batch_loss(vocab)

    class Echo(nn.Module):
        def forward(self, X, dec_input, X_valid_len):
            return logits

    _, weight = batch_loss(Echo(), (labels, torch.tensor([3]), labels, torch.tensor([3])))
    assert weight == 2.0


# -- the last mile: what PyTorch would have said instead -------------------------------------------


def test_a_decoder_state_with_too_few_cache_slots_is_named():
    enc = d2l.TransformerEncoder(10, 8, 16, 2, 2, 0.0)
    X, lens = torch.randint(0, 10, (2, 4), generator=d2l.generator(0)), torch.tensor([4, 3])
    state = d2l.TransformerDecoder(10, 8, 16, 2, 2, 0.0).init_state(enc(X, lens), lens)
    with pytest.raises(ValueError, match=r"state\[2\] must be a cache list with one slot per "
                                         r"block \(3\), got 2 slots"):
        d2l.TransformerDecoder(10, 8, 16, 2, 3, 0.0)(X, state)
    with pytest.raises(ValueError, match=r"state must be the list \[enc_outputs"):
        d2l.TransformerDecoder(10, 8, 16, 2, 2, 0.0)(X, state[:2])


@pytest.mark.parametrize("decoder", [
    lambda: d2l.Seq2SeqDecoder(10, 8, 16, 1), lambda: d2l.Seq2SeqAttentionDecoder(10, 8, 16, 1),
])
def test_an_encoder_with_more_layers_than_its_decoder_is_named(decoder):
    enc = d2l.Seq2SeqEncoder(10, 8, 16, 2)
    X, lens = torch.randint(0, 10, (2, 4), generator=d2l.generator(0)), torch.tensor([4, 3])
    dec = decoder()
    with pytest.raises(ValueError, match=r"the encoder's final state must have shape "
                                         r"\(num_layers, batch, num_hiddens\) = \(1, 2, 16\)"):
        dec(X, dec.init_state(enc(X, lens), lens))


@pytest.mark.parametrize("make, name", [
    (lambda: d2l.PatchEmbedding(8, 2, num_hiddens=0), "num_hiddens"),
    (lambda: d2l.PatchEmbedding(8, 2, num_hiddens=-1), "num_hiddens"),
    (lambda: d2l.PatchEmbedding(8, 2, 8, in_channels=0), "in_channels"),
    (lambda: d2l.TransformerEncoder(10, -1, 16, 2, 2, 0.0), "num_hiddens"),
    (lambda: d2l.TransformerDecoder(10, 0, 16, 2, 2, 0.0), "num_hiddens"),
    (lambda: d2l.AddNorm(0, 0.0), "norm_shape"),
    (lambda: d2l.AddNorm([8, -1], 0.0), "norm_shape"),
    (lambda: d2l.ViTBlock(8, 0, 16, 2, 0.0), "norm_shape"),
    (lambda: d2l.PositionWiseFFN(16, 8, num_inputs=0), "num_inputs"),
    (lambda: d2l.ViTMLP(16, 8, num_inputs=-1), "num_inputs"),
    (lambda: d2l.GPTBlock(-1, 2, 0.0), "num_hiddens"),
])
def test_sizes_that_are_not_positive_are_named(make, name):
    with pytest.raises(ValueError, match=f"^{name} must be a positive int"):
        make()


@pytest.mark.parametrize("call, name", [
    (lambda: d2l.Vocab(5), "tokens"),
    (lambda: d2l.Vocab("abc"), "tokens"),
    (lambda: d2l.set_figsize(5), "figsize"),
    (lambda: d2l.set_figsize((3, "2")), "figsize"),
    (lambda: d2l.compose_syllable(1.5, 0), "initial"),
    (lambda: d2l.compose_syllable(0, 0, 2.0), "final"),
    (lambda: d2l.fit(5, [], 1, 0.1, lambda net, batch: None, plot=False), "net"),
    (lambda: d2l.fit(nn.Linear(2, 1), [], 1, 0.1, None, plot=False), "batch_loss"),
])
def test_arguments_of_the_wrong_kind_are_named(call, name):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        call()


def _float32_models():
    d2l.set_seed(0)
    X3 = torch.randn(2, 3, 8)
    mha = d2l.MultiHeadAttention(8, 2, 0.0, False, 8, 8, 8)
    return [
        ("queries", lambda x: mha(x, x, x, None), X3),
        ("queries", lambda x: d2l.AdditiveAttention(8, 0.0, 8, 8)(x, x, x), X3),
        ("queries", lambda x: d2l.TransformerEncoderBlock(8, 16, 2, 0.0)(x, None), X3),
        ("X", d2l.PositionWiseFFN(16, 8, num_inputs=8), X3),
        ("X", lambda x: d2l.AddNorm(8, 0.0)(x, x), X3),
        ("X", d2l.ViTBlock(8, 8, 16, 2, 0.0), X3),
        ("X", d2l.ViT(8, 2, 8, 16, 2, 1, 0.0, 0.0, num_classes=3), torch.randn(2, 1, 8, 8)),
        ("X", d2l.PatchEmbedding(8, 2, 8), torch.randn(2, 1, 8, 8)),  # lazy channels
        ("inputs", d2l.RNNScratch(4, 8), torch.randn(5, 2, 4)),
        ("inputs", d2l.LSTMScratch(4, 8), torch.randn(5, 2, 4)),
    ]


@pytest.mark.parametrize("index", range(10))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_a_float32_model_names_the_dtype_it_expects(index, dtype):
    name, model, X = _float32_models()[index]
    if isinstance(model, nn.Module):
        model = model.forward
    model(X)  # float32 works
    pattern = f"^{name} must have the model's dtype torch.float32, got .*dtype {dtype}"
    with pytest.raises(ValueError, match=pattern):
        model(X.to(dtype))


def test_integer_token_ids_of_any_width_are_fine():
    enc = d2l.TransformerEncoder(10, 8, 16, 2, 1, 0.0)
    X, lens = torch.randint(0, 10, (2, 4), generator=d2l.generator(0)), torch.tensor([4, 3])
    assert torch.equal(enc(X, lens), enc(X.to(torch.int32), lens.to(torch.int16)))

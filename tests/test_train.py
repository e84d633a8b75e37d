"""The shared training loop (d2lite.train): seq2seq and classification smoke tests."""

import matplotlib.pyplot as plt
import pytest
import torch
from torch import nn

import d2lite as d2l


def _tiny_translation():
    d2l.set_seed(0)
    it, src_vocab, tgt_vocab = d2l.load_data_enko(32, 10, num_train=64, max_adjuncts=0)
    enc = d2l.Seq2SeqEncoder(len(src_vocab), 16, 32, 1)
    dec = d2l.Seq2SeqDecoder(len(tgt_vocab), 16, 32, 1)
    return d2l.Seq2Seq(enc, dec), it, src_vocab, tgt_vocab


def test_train_seq2seq_lowers_the_loss_and_returns_history():
    net, it, _, tgt_vocab = _tiny_translation()
    calls = []

    def evaluate(model):
        calls.append(model.training)
        return {"valid_loss": 1.0}

    history = d2l.train_seq2seq(net, it, 0.01, 8, tgt_vocab, d2l.cpu(), evaluate=evaluate,
                                plot=False)  # fmt: skip
    assert history["epoch"] == list(range(1, 9))
    assert len(history["loss"]) == len(history["seconds"]) == 8
    assert history["valid_loss"] == [1.0] * 8
    assert calls == [False] * 8  # evaluation runs in eval mode
    assert history["loss"][-1] < 0.7 * history["loss"][0]
    assert all(b >= a for a, b in zip(history["seconds"], history["seconds"][1:]))
    assert not net.training


def test_training_is_deterministic():
    losses = []
    for _ in range(2):
        net, it, _, tgt_vocab = _tiny_translation()
        losses.append(d2l.train_seq2seq(net, it, 0.01, 2, tgt_vocab, d2l.cpu(), plot=False)["loss"])
    assert losses[0] == losses[1]


def test_max_seconds_stops_early():
    net, it, _, tgt_vocab = _tiny_translation()
    history = d2l.train_seq2seq(net, it, 0.01, 1000, tgt_vocab, d2l.cpu(), max_seconds=1e-9,
                                plot=False)  # fmt: skip
    assert history["epoch"] == [1]


def test_gradient_clipping_is_applied():
    """With clip_grad, no parameter update is larger than lr * clip for plain SGD."""
    net, it, _, tgt_vocab = _tiny_translation()
    before = [p.detach().clone() for p in net.parameters()]
    first = next(iter(it))
    d2l.fit(net, [first], 1, 1.0, d2l.seq2seq_batch_loss(tgt_vocab), d2l.cpu(),
            optimizer="sgd", clip_grad=1e-3, plot=False)  # fmt: skip
    with torch.no_grad():
        step = torch.sqrt(sum(((p - b) ** 2).sum() for p, b in zip(net.parameters(), before)))
    assert 0 < float(step) <= 1e-3 * (1 + 1e-4)


def test_fit_draws_one_figure_per_language():
    net, it, _, tgt_vocab = _tiny_translation()
    plt.close("all")
    history = d2l.train_seq2seq(net, it, 0.01, 2, tgt_vocab, d2l.cpu(), plot=True)
    assert plt.get_fignums() == []  # bilingual draws, shows and closes its figures
    d2l.plot_history(history, title=("손실", "loss"))
    with pytest.raises(ValueError, match="no curves"):
        d2l.plot_history({"epoch": [], "loss": []})


def test_fit_bad_arguments():
    net, it, _, tgt_vocab = _tiny_translation()
    loss = d2l.seq2seq_batch_loss(tgt_vocab)
    with pytest.raises(ValueError, match="num_epochs"):
        d2l.fit(net, it, 0, 0.1, loss, plot=False)
    with pytest.raises(ValueError, match="lr"):
        d2l.fit(net, it, 1, 0.0, loss, plot=False)
    with pytest.raises(ValueError, match="max_seconds"):
        d2l.fit(net, it, 1, 0.1, loss, max_seconds=0, plot=False)
    with pytest.raises(ValueError, match="optimizer"):
        d2l.fit(net, it, 1, 0.1, loss, optimizer="lbfgs", plot=False)
    with pytest.raises(ValueError, match="no batches"):
        d2l.fit(net, [], 1, 0.1, loss, plot=False)


def test_train_classifier_learns_a_separable_problem():
    d2l.set_seed(0)
    X = torch.randn(256, 2)
    y = (X[:, 0] + X[:, 1] > 0).long()
    train_iter = d2l.load_array((X, y), 32)
    test_iter = d2l.load_array((X[:64], y[:64]), 64, is_train=False)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    history = d2l.train_classifier(net, train_iter, test_iter, 10, 0.05, d2l.cpu(), plot=False)
    assert history["test_acc"][-1] >= 0.9
    assert d2l.accuracy(net, test_iter) == history["test_acc"][-1]
    with pytest.raises(ValueError, match="logits"):
        d2l.accuracy(nn.Sequential(nn.Linear(2, 1), nn.Flatten(0)), test_iter)  # (batch,) logits


def test_nobody_watches_outside_a_notebook():
    assert not d2l.is_watched()

"""Unit tests for chapter 2's exported code (d2lite.bptt)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import d2lite as d2l

# -- gradient clipping ---------------------------------------------------------------------


def _set_grads(params, values):
    for p, v in zip(params, values):
        p.grad = torch.as_tensor(v, dtype=p.dtype).reshape(p.shape).clone()


def test_grad_clipping_rescales_the_joint_norm_and_keeps_the_direction():
    net = nn.Linear(2, 1)  # weight (1, 2), bias (1,)
    _set_grads([net.weight, net.bias], [[3.0, 0.0], [4.0]])  # joint norm 5
    norm = d2l.grad_clipping(net, 1.0)
    assert norm == pytest.approx(5.0)
    assert torch.allclose(net.weight.grad, torch.tensor([[0.6, 0.0]]))
    assert torch.allclose(net.bias.grad, torch.tensor([0.8]))


def test_grad_clipping_leaves_small_gradients_alone():
    net = nn.Linear(2, 1)
    _set_grads([net.weight, net.bias], [[0.3, 0.0], [0.4]])
    assert d2l.grad_clipping(net, 1.0) == pytest.approx(0.5)
    assert torch.equal(net.weight.grad, torch.tensor([[0.3, 0.0]]))
    assert torch.equal(net.bias.grad, torch.tensor([0.4]))


def test_grad_clipping_accepts_a_list_of_params_and_a_d2l_style_model():
    a = nn.Parameter(torch.zeros(2))
    b = nn.Parameter(torch.zeros(3))
    c = nn.Parameter(torch.zeros(1))  # no gradient: skipped
    _set_grads([a, b], [[6.0, 0.0], [0.0, 8.0, 0.0]])
    assert d2l.grad_clipping([a, b, c], 2.0) == pytest.approx(10.0)
    assert torch.allclose(a.grad, torch.tensor([1.2, 0.0]))
    assert torch.allclose(b.grad, torch.tensor([0.0, 1.6, 0.0]))
    assert c.grad is None

    class Scratch:  # d2l's from-scratch models keep their tensors in .params
        params = [a, b]

    _set_grads([a, b], [[6.0, 0.0], [0.0, 8.0, 0.0]])
    d2l.grad_clipping(Scratch(), 5.0)
    joint = torch.sqrt(a.grad.pow(2).sum() + b.grad.pow(2).sum())
    assert joint.item() == pytest.approx(5.0)


def test_grad_clipping_without_gradients_returns_zero():
    assert d2l.grad_clipping(nn.Linear(2, 2), 1.0) == 0.0


@pytest.mark.parametrize("theta", [0, -1.0, float("nan"), True, "1", None])
def test_grad_clipping_rejects_bad_thresholds(theta):
    with pytest.raises(ValueError, match="theta must be a finite real number > 0"):
        d2l.grad_clipping(nn.Linear(2, 2), theta)


# -- LSTM from scratch ---------------------------------------------------------------------


def _pair(seed=0, num_inputs=3, num_hiddens=5):
    d2l.set_seed(seed)
    ref = nn.LSTM(num_inputs, num_hiddens)
    lstm = d2l.LSTMScratch(num_inputs, num_hiddens).copy_from(ref)
    return lstm, ref


def test_lstm_scratch_matches_torch_lstm_with_copied_weights():
    lstm, ref = _pair()
    X, H0, C0 = torch.randn(7, 2, 3), torch.randn(2, 5), torch.randn(2, 5)
    outputs, (H, C) = lstm(X, (H0, C0))
    ref_outputs, (ref_H, ref_C) = ref(X, (H0.unsqueeze(0), C0.unsqueeze(0)))
    d2l.check_shape(outputs, (7, 2, 5))
    assert torch.allclose(outputs, ref_outputs, atol=1e-6)
    assert torch.allclose(H, ref_H[0], atol=1e-6)
    assert torch.allclose(C, ref_C[0], atol=1e-6)


def test_lstm_scratch_default_state_is_zero_and_gradients_match():
    lstm, ref = _pair(seed=1)
    X = torch.randn(4, 3, 3)
    outputs, _ = lstm(X)
    ref_outputs, _ = ref(X)
    assert torch.allclose(outputs, ref_outputs, atol=1e-6)
    outputs.sum().backward()
    ref_outputs.sum().backward()
    h = 5
    # the input-gate block of PyTorch's stacked weights is the transpose of our W_xi
    assert torch.allclose(lstm.W_xi.grad, ref.weight_ih_l0.grad[:h].T, atol=1e-5)
    assert torch.allclose(lstm.W_hc.grad, ref.weight_hh_l0.grad[2 * h : 3 * h].T, atol=1e-5)
    assert torch.allclose(lstm.b_o.grad, ref.bias_ih_l0.grad[3 * h :], atol=1e-5)


def test_lstm_scratch_forget_bias_and_sizes():
    lstm = d2l.LSTMScratch(4, 6, sigma=0.0, forget_bias=math.log(100))
    assert torch.allclose(lstm.b_f, torch.full((6,), math.log(100)))
    assert torch.equal(lstm.b_i, torch.zeros(6)) and torch.equal(lstm.W_hf, torch.zeros(6, 6))
    # with zero weights, the cell keeps sigma(b_f) of C at every step and writes nothing new
    C0 = torch.ones(1, 6)
    _, (_, C) = lstm(torch.zeros(10, 1, 4), (torch.zeros(1, 6), C0))
    assert torch.allclose(C, C0 * (100 / 101) ** 10, atol=1e-6)
    assert sum(p.numel() for p in lstm.parameters()) == 4 * (4 * 6 + 6 * 6 + 6)


@pytest.mark.parametrize(
    "inputs, H_C, message",
    [
        (torch.zeros(4, 3), None, r"inputs must have shape \(steps, batch, 3\), got shape \(4"),
        (torch.zeros(4, 2, 6), None, r"\(steps, batch, 3\), got shape \(4, 2, 6\)"),
        (torch.zeros(4, 2, 3), (torch.zeros(3, 5), torch.zeros(2, 5)),
         r"H must have shape \(2, 5\), got shape \(3, 5\)"),
        (torch.zeros(4, 2, 3), (torch.zeros(2, 5), torch.zeros(2, 4)),
         r"C must have shape \(2, 5\), got shape \(2, 4\)"),
    ],
)
def test_lstm_scratch_rejects_bad_shapes(inputs, H_C, message):
    with pytest.raises(ValueError, match=message):
        d2l.LSTMScratch(3, 5)(inputs, H_C)


def test_lstm_scratch_rejects_bad_sizes_and_mismatched_torch_lstms():
    with pytest.raises(ValueError, match="num_hiddens must be a positive int, got int 0"):
        d2l.LSTMScratch(3, 0)
    lstm = d2l.LSTMScratch(3, 5)
    for other in (nn.LSTM(3, 4), nn.LSTM(3, 5, num_layers=2), nn.LSTM(3, 5, bidirectional=True),
                  nn.LSTM(3, 5, bias=False)):
        expected = r"expected nn.LSTM\(.*\) = \(3, 5, 1, False, 0, True\)"
        with pytest.raises(ValueError, match=expected):
            lstm.copy_from(other)


# -- truncation helpers --------------------------------------------------------------------


def test_truncation_multipliers_shapes_and_values():
    full = d2l.truncation_multipliers(6, "full")
    assert full.shape == (6,) and torch.equal(full, torch.ones(6))
    regular = d2l.truncation_multipliers(11, "regular", tau=4)
    assert regular.tolist() == [1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    batched = d2l.truncation_multipliers(11, "regular", tau=4, batch_size=3)
    assert batched.shape == (11, 3) and torch.equal(batched, regular.unsqueeze(1).expand(11, 3))
    rand = d2l.truncation_multipliers(
        50, "randomized", pi=0.25, batch_size=400, generator=torch.Generator().manual_seed(0)
    )
    assert rand.shape == (50, 400)
    assert set(rand.unique().tolist()) == {0.0, 4.0}
    assert abs(rand.mean().item() - 1.0) < 0.05  # E[xi] = 1
    assert abs((rand > 0).float().mean().item() - 0.25) < 0.02  # P(keep) = pi
    again = d2l.truncation_multipliers(
        50, "randomized", pi=0.25, batch_size=400, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(rand, again)  # a seeded generator repeats exactly
    assert torch.equal(d2l.truncation_multipliers(5, "randomized", pi=1.0), torch.ones(5))
    # NumPy integers are integers too
    from_numpy = d2l.truncation_multipliers(np.int64(11), "regular", tau=np.int64(4))
    assert torch.equal(from_numpy, regular)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_steps=0, strategy="full"), "num_steps must be a positive int, got int 0"),
        (dict(num_steps=2.5, strategy="full"), "num_steps must be a positive int"),
        (dict(num_steps=5, strategy="sometimes"), "strategy must be 'full', 'regular' or"),
        (dict(num_steps=5, strategy="regular"), "tau must be a positive int, got NoneType None"),
        (dict(num_steps=5, strategy="regular", tau=0), "tau must be a positive int, got int 0"),
        (dict(num_steps=5, strategy="regular", tau=True),
         "tau must be a positive int, got bool True"),
        (dict(num_steps=5, strategy="randomized"),
         r"pi must be a finite real number in \(0, 1\], got NoneType None"),
        (dict(num_steps=5, strategy="randomized", pi=0.0),
         r"pi must be a finite real number in \(0, 1\], got float 0.0"),
        (dict(num_steps=5, strategy="randomized", pi=1.5),
         r"pi must be a finite real number in \(0, 1\], got float 1.5"),
        (dict(num_steps=5, strategy="full", tau=2), "tau belongs to regular truncation"),
        (dict(num_steps=5, strategy="regular", tau=2, pi=0.5), "pi belongs to randomized"),
        (dict(num_steps=5, strategy="full", batch_size=0), "batch_size must be a positive int"),
    ],
)
def test_truncation_multipliers_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        d2l.truncation_multipliers(**kwargs)


def test_scale_grad_is_the_identity_forwards_and_scales_backwards():
    x = torch.randn(3, 2, requires_grad=True)
    y = d2l.scale_grad(x, 0.5)
    assert torch.equal(y, x.detach())
    y.sum().backward()
    assert torch.equal(x.grad, torch.full((3, 2), 0.5))
    x.grad = None
    d2l.scale_grad(x, torch.tensor([1.0, 0.0, 2.0])).sum().backward()  # one factor per example
    assert torch.equal(x.grad, torch.tensor([[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match=r"scale must have shape \(\) or \(3,\), got \(2,\)"):
        d2l.scale_grad(x, torch.ones(2))
    with pytest.raises(ValueError, match=r"got \(3, 1\)"):
        d2l.scale_grad(x, torch.ones(3, 1))


def _tanh_cell(W_xh, W_hh):
    def cell(x, h):
        return torch.tanh(x @ W_xh + h @ W_hh)

    return cell


def _rnn_setup(seed=0, steps=9, batch=2):
    g = torch.Generator().manual_seed(seed)
    W_xh = torch.randn(3, 4, generator=g, dtype=torch.float64)
    W_hh = (0.9 * torch.randn(4, 4, generator=g, dtype=torch.float64) / 2).requires_grad_(True)
    X = torch.randn(steps, batch, 3, generator=g, dtype=torch.float64).requires_grad_(True)
    return W_xh, W_hh, X


def test_bptt_forward_full_equals_the_plain_loop():
    W_xh, W_hh, X = _rnn_setup()
    cell = _tanh_cell(W_xh, W_hh)
    H, last = d2l.bptt_forward(cell, X, torch.zeros(2, 4, dtype=X.dtype),
                               d2l.truncation_multipliers(9, "full"))
    d2l.check_shape(H, (9, 2, 4))
    assert torch.equal(H[-1], last)
    (g_full,) = torch.autograd.grad(H.sum(), W_hh)
    h, states = torch.zeros(2, 4, dtype=X.dtype), []
    for x in X:
        h = cell(x, h)
        states.append(h)
    (g_loop,) = torch.autograd.grad(torch.stack(states).sum(), W_hh)
    assert torch.allclose(g_full, g_loop, rtol=1e-12)


def test_bptt_forward_regular_truncation_stops_the_gradient_at_boundaries():
    W_xh, W_hh, X = _rnn_setup()
    xi = d2l.truncation_multipliers(9, "regular", tau=4)  # segments [0, 4), [4, 8), [8, 9)
    H, last = d2l.bptt_forward(_tanh_cell(W_xh, W_hh), X, torch.zeros(2, 4, dtype=X.dtype), xi)
    (grad_x,) = torch.autograd.grad(H[7].sum(), X)  # a loss at step 7
    norms = grad_x.norm(dim=(1, 2))
    assert torch.all(norms[:4] == 0)  # before its segment: cut
    assert torch.all(norms[4:8] > 0)  # inside its segment: flows
    # the forward values are the same as without truncation
    H_full, _ = d2l.bptt_forward(_tanh_cell(W_xh, W_hh), X, torch.zeros(2, 4, dtype=X.dtype),
                                 d2l.truncation_multipliers(9, "full"))
    assert torch.equal(H, H_full)


def test_bptt_forward_per_example_multipliers_match_separate_runs():
    W_xh, W_hh, X = _rnn_setup(batch=3)
    xi = torch.tensor([[1.0, 1.0, 1.0]] * 3 + [[0.0, 2.0, 1.0]] + [[1.0, 1.0, 1.0]] * 5,
                      dtype=torch.float64)
    cell = _tanh_cell(W_xh, W_hh)
    H, _ = d2l.bptt_forward(cell, X, torch.zeros(3, 4, dtype=X.dtype), xi)
    (grad_x,) = torch.autograd.grad(H[-1].sum(), X)
    for b in range(3):
        Hb, _ = d2l.bptt_forward(cell, X[:, b : b + 1], torch.zeros(1, 4, dtype=X.dtype), xi[:, b])
        (grad_b,) = torch.autograd.grad(Hb[-1].sum(), X)
        assert torch.allclose(grad_x[:, b], grad_b[:, b], rtol=1e-12)
    # example 1 had xi = 2 at step 3, example 0 a cut there: compare with the full gradient
    (g_full,) = torch.autograd.grad(
        d2l.bptt_forward(cell, X, torch.zeros(3, 4, dtype=X.dtype), torch.ones(9))[0][-1].sum(), X
    )
    assert torch.all(grad_x[:3, 0] == 0)
    assert torch.allclose(grad_x[:3, 1], 2 * g_full[:3, 1], rtol=1e-12)
    assert torch.allclose(grad_x[:, 2], g_full[:, 2], rtol=1e-12)


def test_bptt_forward_randomized_truncation_is_unbiased_in_a_linear_scalar_rnn():
    # h_t = w h_{t-1} + x_t with loss h_T: dL/dx_1 = w^(T-1) exactly, and E[prod xi] = 1.
    steps, draws, pi, w = 6, 20000, 0.5, 0.8
    X = torch.ones(steps, draws, 1, dtype=torch.float64, requires_grad=True)
    xi = d2l.truncation_multipliers(steps, "randomized", pi=pi, batch_size=draws,
                                    generator=torch.Generator().manual_seed(0))
    H, last = d2l.bptt_forward(lambda x, h: w * h + x, X, torch.zeros(draws, 1,
                               dtype=torch.float64), xi)
    (grad_x,) = torch.autograd.grad(last.sum(), X)
    estimate = grad_x[0, :, 0]  # one estimate of dL/dx_1 per draw
    values = estimate.unique()
    assert len(values) == 2 and values[0] == 0.0
    assert values[1].item() == pytest.approx(w ** (steps - 1) / pi ** (steps - 1), rel=1e-12)
    stderr = estimate.std().item() / math.sqrt(draws)
    assert abs(estimate.mean().item() - w ** (steps - 1)) < 4 * stderr


@pytest.mark.parametrize(
    "inputs, state, xi, message",
    [
        (torch.zeros(5, 2), torch.zeros(2, 4), torch.ones(5),
         r"inputs must have shape \(steps, batch, features\), none 0, got \(5, 2\)"),
        (torch.zeros(5, 2, 3), torch.zeros(3, 4), torch.ones(5),
         r"state must have shape \(2, num_hiddens\), got \(3, 4\)"),
        (torch.zeros(5, 2, 3), torch.zeros(2, 4), torch.ones(4),
         r"xi must have shape \(5,\) or \(5, 2\), got \(4,\)"),
        (torch.zeros(5, 2, 3), torch.zeros(2, 4), torch.ones(5, 3),
         r"xi must have shape \(5,\) or \(5, 2\), got \(5, 3\)"),
    ],
)
def test_bptt_forward_rejects_bad_shapes(inputs, state, xi, message):
    cell = _tanh_cell(torch.zeros(3, 4), torch.zeros(4, 4))
    with pytest.raises(ValueError, match=message):
        d2l.bptt_forward(cell, inputs, state, xi)


# -- d2lite.budget: training small classifiers side by side ----------------------------------


class _Classifier(nn.Module):
    """A recurrent layer, then a linear layer on its last hidden state (chapter 2's shape)."""

    def __init__(self, recurrent, num_hiddens, num_classes=3):
        super().__init__()
        self.recurrent, self.head = recurrent, nn.Linear(num_hiddens, num_classes)

    def forward(self, X):
        outputs, _ = self.recurrent(X)
        return self.head(outputs[-1])


def _models(kind, count=3, vocab=5, hiddens=6):
    models = []
    for seed in range(count):
        torch.manual_seed(seed)
        layer = {"LSTM": lambda: d2l.LSTMScratch(vocab, hiddens, sigma=0.3, forget_bias=1.0),
                 "RNN": lambda: d2l.RNNScratch(vocab, hiddens, sigma=0.3),
                 "GRU": lambda: nn.GRU(vocab, hiddens)}[kind]()
        models.append(_Classifier(layer, hiddens))
    return models


def _batch(generator, batch_size=4, steps=7, vocab=5):
    tokens = torch.randint(0, vocab, (steps, batch_size), generator=generator)
    return nn.functional.one_hot(tokens, vocab).float(), tokens[0] % 3


@pytest.mark.parametrize("kind", ["LSTM", "RNN", "GRU"])
def test_run_side_by_side_computes_what_each_model_computes(kind):
    models = _models(kind)
    X, _ = _batch(torch.Generator().manual_seed(0))
    params = d2l.stack_parameters(models)
    assert params["head.weight"].shape == (3, 3, 6)
    with torch.no_grad():
        together = d2l.run_side_by_side(kind, params, X.unsqueeze(1).expand(-1, 3, -1, -1))
        alone = torch.stack([m(X) for m in models])
    assert together.shape == (3, 4, 3)
    assert torch.allclose(together, alone, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_train_side_by_side_is_training_each_model_alone(kind):
    val = _batch(torch.Generator().manual_seed(99), batch_size=16)
    together = _models(kind, count=2)
    steps, acc = d2l.train_side_by_side(
        kind, together, _batch, [torch.Generator().manual_seed(s) for s in (10, 11)], 6, val,
        eval_every=3, lr=0.05, theta=0.5)
    assert steps.tolist() == [3, 6] and acc.shape == (2, 2)
    for i, model in enumerate(_models(kind, count=2)):
        _, acc_alone = d2l.train_side_by_side(
            kind, [model], _batch, [torch.Generator().manual_seed(10 + i)], 6, val,
            eval_every=3, lr=0.05, theta=0.5)
        for (name, p), q in zip(model.named_parameters(), together[i].parameters()):
            assert torch.allclose(p, q, atol=1e-5), name
        assert np.allclose(acc_alone[0], acc[i])


def test_train_side_by_side_clips_each_model_on_its_own():
    # a huge learning signal and theta: every Adam step has size about lr regardless, so check
    # the clipping through plain equivalence with a manual step of one model
    model = _models("RNN", count=1)[0]
    reference = _models("RNN", count=1)[0]
    gen = torch.Generator().manual_seed(3)
    X, y = _batch(torch.Generator().manual_seed(3))
    d2l.train_side_by_side("RNN", [model], _batch, [gen], 1, (X, y), eval_every=1, lr=0.1,
                           theta=1e-3)
    optimizer = torch.optim.Adam(reference.parameters(), lr=0.1)
    nn.functional.cross_entropy(reference(X), y).backward()
    d2l.grad_clipping(reference, 1e-3)
    optimizer.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert torch.allclose(p, q, atol=1e-6)


def test_inputs_part_is_one_product_per_model():
    X = torch.randn(4, 2, 3, 5)
    W, b = torch.randn(2, 5, 6), torch.randn(2, 1, 6)
    out = d2l.inputs_part(X, W, b)
    assert out.shape == (4, 2, 3, 6)
    assert torch.allclose(out[1, 0], X[1, 0] @ W[0] + b[0], atol=1e-6)


@pytest.mark.parametrize(
    "thunk, message",
    [
        (lambda: d2l.run_side_by_side("CNN", {}, torch.zeros(2, 1, 1, 1)),
         r"kind must be one of \('LSTM', 'RNN', 'GRU'\), got 'CNN'"),
        (lambda: d2l.run_side_by_side("RNN", {"recurrent.W_xh": 0}, torch.zeros(2, 1, 1, 1)),
         r"params of kind 'RNN' lack \['recurrent.W_hh'"),
        (lambda: d2l.run_side_by_side("RNN", d2l.stack_parameters(_models("RNN")),
                                      torch.zeros(7, 2, 4, 5)),
         r"X must have shape \(steps, 3, batch, features\), got shape \(7, 2, 4, 5\)"),
        (lambda: d2l.run_side_by_side("RNN", d2l.stack_parameters(_models("RNN")),
                                      torch.zeros(7, 4, 5)),
         r"X must have shape \(steps, 3, batch, features\)"),
        (lambda: d2l.inputs_part(torch.zeros(4, 2, 3, 5), torch.zeros(2, 4, 6),
                                 torch.zeros(2, 1, 6)),
         r"W must have shape \(2, 5, outputs\), got \(2, 4, 6\)"),
        (lambda: d2l.inputs_part(torch.zeros(4, 2, 3, 5), torch.zeros(2, 5, 6),
                                 torch.zeros(2, 6)),
         r"b must have shape \(2, 1, 6\), got \(2, 6\)"),
        (lambda: d2l.inputs_part(torch.zeros(4, 2, 3, 5, dtype=torch.long),
                                 torch.zeros(2, 5, 6), torch.zeros(2, 1, 6)),
         r"X must be a float tensor"),
        (lambda: d2l.stack_parameters([]), r"models must be a non-empty sequence"),
        (lambda: d2l.stack_parameters([nn.Linear(2, 3), nn.Linear(3, 3)]),
         r"models must have equal parameter names and shapes"),
        (lambda: d2l.train_side_by_side("RNN", _models("RNN"), _batch, [], 5,
                                        _batch(torch.Generator()), eval_every=5),
         r"generators must hold one generator per model \(3\), got 0"),
        (lambda: d2l.train_side_by_side("RNN", _models("RNN"), _batch,
                                        [torch.Generator()] * 3, 0, _batch(torch.Generator())),
         r"num_updates must be a positive int, got int 0"),
        (lambda: d2l.train_side_by_side("RNN", _models("RNN"), _batch,
                                        [torch.Generator()] * 3, 5, _batch(torch.Generator()),
                                        eval_every=5, lr=0),
         r"lr must be a finite real number > 0, got int 0"),
        (lambda: d2l.train_side_by_side("RNN", _models("RNN"), _batch,
                                        [torch.Generator()] * 3, 5,
                                        (torch.zeros(7, 4, 5), torch.zeros(3)), eval_every=5),
         r"val must be \(X \(steps, n, features\), y \(n,\)\)"),
        (lambda: d2l.train_side_by_side("RNN", _models("RNN"), _batch,
                                        [torch.Generator()] * 3, 5, _batch(torch.Generator())),
         r"eval_every must be an int in \[1, 5\], got int 10"),
    ],
)
def test_budget_rejects_bad_inputs(thunk, message):
    with pytest.raises(ValueError, match=message):
        thunk()

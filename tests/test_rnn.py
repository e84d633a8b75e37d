"""Unit tests for chapter 1's exported code (d2lite.rnn)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import d2lite as d2l


def test_rnn_scratch_matches_torch_rnn_with_copied_weights():
    d2l.set_seed(0)
    rnn = d2l.RNNScratch(3, 5, sigma=0.7)
    ref = nn.RNN(3, 5)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(rnn.W_xh.T)
        ref.weight_hh_l0.copy_(rnn.W_hh.T)
        ref.bias_ih_l0.copy_(rnn.b_h)
        ref.bias_hh_l0.zero_()
    X, H0 = torch.randn(7, 2, 3), torch.randn(2, 5)
    outputs, state = rnn(X, H0)
    ref_outputs, ref_state = ref(X, H0.unsqueeze(0))
    assert torch.allclose(outputs, ref_outputs, atol=1e-6)
    assert torch.allclose(state, ref_state[0], atol=1e-6)


@pytest.mark.parametrize(
    "inputs, state, message",
    [
        (torch.zeros(4, 3), None, r"inputs must have shape \(steps, batch, 3\), got shape \(4"),
        (torch.zeros(4, 2, 6), None, r"\(steps, batch, 3\), got shape \(4, 2, 6\)"),
        (torch.zeros(4, 2, 3), torch.zeros(3, 5), r"state must have shape \(2, 5\), got shape \(3"),
    ],
)
def test_rnn_scratch_rejects_bad_shapes(inputs, state, message):
    with pytest.raises(ValueError, match=message):
        d2l.RNNScratch(3, 5)(inputs, state)


def test_rnn_scratch_rejects_bad_sizes():
    with pytest.raises(ValueError, match="num_inputs must be a positive int, got int 0"):
        d2l.RNNScratch(0, 5)


def test_birnn_doubles_features_and_reads_both_ways():
    d2l.set_seed(1)
    birnn = d2l.BiRNNScratch(3, 4, sigma=0.5)
    X = torch.randn(6, 2, 3)
    out = birnn(X)
    d2l.check_shape(out, (6, 2, 8))
    assert birnn.num_hiddens == 8
    # changing the last input changes the backward half at the first step, not the forward half
    X2 = X.clone()
    X2[-1] += 1.0
    out2 = birnn(X2)
    assert torch.allclose(out[0, :, :4], out2[0, :, :4])
    assert not torch.allclose(out[0, :, 4:], out2[0, :, 4:])


def test_input_gradient_norms_shape_and_causality():
    d2l.set_seed(2)
    rnn = d2l.RNNScratch(2, 3, sigma=0.5).double()
    norms = d2l.input_gradient_norms(rnn, torch.randn(5, 1, 2, dtype=torch.float64))
    d2l.check_shape(norms, (5,))
    assert torch.all(norms > 0)
    with pytest.raises(ValueError, match=r"\(steps, 1, features\), got \(5, 2, 2\)"):
        d2l.input_gradient_norms(rnn, torch.randn(5, 2, 2, dtype=torch.float64))

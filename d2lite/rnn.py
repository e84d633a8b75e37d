"""Chapter 1: an RNN written from scratch, its bidirectional form, input-gradient norms.

Generated from book/01_rnn.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import torch
from torch import nn

from d2lite import checks


class RNNScratch(nn.Module):
    """A tanh RNN layer written out step by step.

    forward(inputs, state=None): inputs (steps, batch, num_inputs),
    state (batch, num_hiddens) -> outputs (steps, batch, num_hiddens) and the last
    state (batch, num_hiddens).
    Unlike d2l, which returns a Python list, the outputs are stacked into one tensor.
    """

    def __init__(self, num_inputs: int, num_hiddens: int, sigma: float = 0.01):
        super().__init__()
        checks.check_positive(num_inputs, "num_inputs")
        checks.check_positive(num_hiddens, "num_hiddens")
        self.num_inputs, self.num_hiddens = num_inputs, num_hiddens
        self.W_xh = nn.Parameter(torch.randn(num_inputs, num_hiddens) * sigma)
        self.W_hh = nn.Parameter(torch.randn(num_hiddens, num_hiddens) * sigma)
        self.b_h = nn.Parameter(torch.zeros(num_hiddens))

    def forward(self, inputs: torch.Tensor, state: torch.Tensor | None = None):
        checks.check_rnn_inputs(inputs, self.num_inputs, module=self)
        batch = inputs.shape[1]
        if state is None:
            state = inputs.new_zeros(batch, self.num_hiddens)
        else:
            checks.check_state(state, (batch, self.num_hiddens))
        outputs = []
        for x in inputs:  # one time step at a time: this loop is what attention removes
            state = torch.tanh(x @ self.W_xh + state @ self.W_hh + self.b_h)
            outputs.append(state)
        return torch.stack(outputs), state


class BiRNNScratch(nn.Module):
    """Two RNNScratch layers, one reading forwards and one backwards, concatenated.

    forward(inputs): inputs (steps, batch, num_inputs)
    -> outputs (steps, batch, 2 * num_hiddens).
    """

    def __init__(self, num_inputs: int, num_hiddens: int, sigma: float = 0.01):
        super().__init__()
        self.f_rnn = RNNScratch(num_inputs, num_hiddens, sigma)
        self.b_rnn = RNNScratch(num_inputs, num_hiddens, sigma)
        self.num_hiddens = 2 * num_hiddens

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        f_outputs, _ = self.f_rnn(inputs)
        b_outputs, _ = self.b_rnn(inputs.flip(0))
        # flip the backward outputs back, so position t pairs with position t
        return torch.cat([f_outputs, b_outputs.flip(0)], dim=-1)


def input_gradient_norms(rnn: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """Frobenius norms of the Jacobians d h_T / d x_t of an RNN's last state.

    rnn maps (steps, 1, num_inputs) to (outputs, last_state (1, num_hiddens));
    inputs has shape (steps, 1, num_inputs). Returns (steps,): entry k belongs to
    distance T - t = k.
    """
    if inputs.dim() != 3 or inputs.shape[1] != 1:
        raise ValueError("inputs must have shape (steps, 1, features), "
                         f"got {tuple(inputs.shape)}")
    inputs = inputs.detach().clone().requires_grad_(True)
    _, last = rnn(inputs)
    rows = [
        torch.autograd.grad(last[0, j], inputs, retain_graph=True)[0][:, 0, :]
        for j in range(last.shape[-1])
    ]
    jacobian = torch.stack(rows)  # (num_hiddens, steps, num_inputs)
    return jacobian.pow(2).sum(dim=(0, 2)).sqrt().flip(0)


__all__ = [
    "BiRNNScratch",
    "RNNScratch",
    "input_gradient_norms",
]

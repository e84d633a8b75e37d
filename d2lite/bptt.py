"""Chapter 2: full and truncated BPTT, gradient clipping and an LSTM from scratch.

Generated from book/02_bptt_lstm.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

from collections.abc import Callable, Iterable

import torch
from torch import Tensor, nn

from d2lite import checks


class _ScaleGrad(torch.autograd.Function):
    """Identity on the way forward; the gradient is multiplied by ``scale`` on the way
    back."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(scale)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        (scale,) = ctx.saved_tensors
        # a per-example scale of shape (batch,) multiplies row b of the gradient by
        # scale[b]
        return (grad * scale.reshape(scale.shape + (1,) * (grad.dim() - scale.dim())),
                None)


def scale_grad(x: Tensor, scale: float | Tensor) -> Tensor:
    """Return x unchanged but multiply the gradient flowing back through it by scale.

    x: (batch, ...); scale: a number, or a tensor of shape (batch,) with one factor per
    example.
    """
    scale = torch.as_tensor(scale, dtype=x.dtype, device=x.device)
    if scale.dim() > 1 or (
        scale.dim() == 1 and (x.dim() == 0 or scale.shape[0] != x.shape[0])
    ):
        expected = f"() or ({x.shape[0]},)" if x.dim() else "()"
        raise ValueError(f"scale must have shape {expected}, got {tuple(scale.shape)}")
    return _ScaleGrad.apply(x, scale)


def truncation_multipliers(
    num_steps: int,
    strategy: str,
    tau: int | None = None,
    pi: float | None = None,
    batch_size: int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """The factors xi_t of full, regular or randomized truncation, shape (num_steps,).

    With batch_size the shape is (num_steps, batch_size), one independent draw per
    example. Entry t (steps counted from 0, so the formula's xi_{t+1}) multiplies the
    gradient flowing from step t back into the state before it: 'full' keeps every one
    (1); 'regular' cuts (0) at entries tau, 2 tau, ..., segments of tau steps;
    'randomized' draws 1/pi with probability pi and 0 otherwise, so that E[xi_t] = 1.
    """
    num_steps = checks.check_scalar(num_steps, "num_steps", int, low=1)
    if batch_size is not None:
        batch_size = checks.check_scalar(batch_size, "batch_size", int, low=1)
    if strategy not in ("full", "regular", "randomized"):
        raise ValueError("strategy must be 'full', 'regular' or 'randomized', "
                         f"got {strategy!r}")
    if tau is not None and strategy != "regular":
        raise ValueError(f"tau belongs to regular truncation, not to {strategy!r}")
    if pi is not None and strategy != "randomized":
        raise ValueError(f"pi belongs to randomized truncation, not to {strategy!r}")
    shape = ((int(num_steps),) if batch_size is None
             else (int(num_steps), int(batch_size)))
    if strategy == "full":
        return torch.ones(shape)
    if strategy == "regular":
        # regular truncation needs one
        tau = checks.check_scalar(tau, "tau", int, low=1)
        xi = torch.ones(shape)
        xi[int(tau) :: int(tau)] = 0.0  # new segments start at entries tau, 2 tau, ...
        return xi
    # randomized needs one
    pi = checks.check_scalar(pi, "pi", float, low=0, high=1, low_open=True)
    keep = torch.rand(shape, generator=generator) < pi
    return keep.to(torch.get_default_dtype()) / pi


def bptt_forward(
    cell: Callable[[Tensor, Tensor], Tensor], inputs: Tensor, state: Tensor, xi: Tensor
) -> tuple[Tensor, Tensor]:
    """Run cell over inputs, scaling the gradient between steps by xi (full or
    truncated BPTT).

    cell(x (batch, num_inputs), state (batch, num_hiddens))
    -> new state (batch, num_hiddens); inputs: (steps, batch, num_inputs);
    xi: (steps,) or (steps, batch).
    Returns the states after every step (steps, batch, num_hiddens) and the last state.
    """
    if inputs.dim() != 3 or 0 in inputs.shape:
        raise ValueError(
            "inputs must have shape (steps, batch, features), none 0, "
            f"got {tuple(inputs.shape)}"
        )
    steps, batch = inputs.shape[:2]
    if state.dim() < 1 or state.shape[0] != batch:
        raise ValueError(f"state must have shape ({batch}, num_hiddens), "
                         f"got {tuple(state.shape)}")
    if tuple(xi.shape) not in ((steps,), (steps, batch)):
        raise ValueError(
            f"xi must have shape ({steps},) or ({steps}, {batch}), "
            f"got {tuple(xi.shape)}"
        )
    xi = xi.to(device=inputs.device, dtype=inputs.dtype)
    outputs = []
    for t in range(steps):
        if bool((xi[t] == 0).all()):
            state = state.detach()  # cut here: nothing flows back past this point
        elif not bool((xi[t] == 1).all()):
            state = scale_grad(state, xi[t])
        state = cell(inputs[t], state)
        outputs.append(state)
    return torch.stack(outputs), state


def grad_clipping(net: nn.Module | Iterable[nn.Parameter], theta: float) -> float:
    """Scale all gradients in place so that their joint L2 norm is at most theta.

    net: an nn.Module, an iterable of parameters, or an object with a ``params`` list.
    Parameters without a gradient are skipped. Unlike d2l's, it returns the norm before
    clipping and raises ValueError for a theta that is not positive or for gradients
    that hold NaN or inf (naming the parameters).
    """
    theta = checks.check_scalar(theta, "theta", float, low=0, low_open=True)
    params = checks.check_params(net)  # (name, parameter) pairs
    grads = [(name, p.grad) for name, p in params
             if p.requires_grad and p.grad is not None]
    if not grads:
        return 0.0
    norm = torch.sqrt(sum(torch.sum(g.detach() ** 2) for _, g in grads))
    value = norm.item()
    checks.check_finite_grads(value, grads)
    if value > theta:
        for _, g in grads:
            g.mul_(theta / norm)
    return value


class LSTMScratch(nn.Module):
    """An LSTM layer written gate by gate.

    forward(inputs, H_C=None): inputs (steps, batch, num_inputs), H_C a pair (H, C) of
    (batch, num_hiddens) -> outputs (steps, batch, num_hiddens) and the last (H, C).
    Weights start as N(0, sigma^2), biases as 0 except the forget gate's, which is
    forget_bias. Unlike d2l's, the outputs are stacked into one tensor instead of a
    list, and forget_bias and copy_from are additions.
    """

    def __init__(
        self,
        num_inputs: int,
        num_hiddens: int,
        sigma: float = 0.01,
        forget_bias: float = 0.0,
    ):
        super().__init__()
        checks.check_positive(num_inputs, "num_inputs")
        checks.check_positive(num_hiddens, "num_hiddens")
        self.num_inputs, self.num_hiddens = num_inputs, num_hiddens

        def triple(bias: float = 0.0):
            return (nn.Parameter(torch.randn(num_inputs, num_hiddens) * sigma),
                    nn.Parameter(torch.randn(num_hiddens, num_hiddens) * sigma),
                    nn.Parameter(torch.full((num_hiddens,), float(bias))))

        self.W_xi, self.W_hi, self.b_i = triple()  # input gate
        self.W_xf, self.W_hf, self.b_f = triple(forget_bias)  # forget gate
        self.W_xo, self.W_ho, self.b_o = triple()  # output gate
        self.W_xc, self.W_hc, self.b_c = triple()  # candidate memory

    def forward(self, inputs: Tensor, H_C: tuple[Tensor, Tensor] | None = None):
        checks.check_rnn_inputs(inputs, self.num_inputs, module=self)
        batch = inputs.shape[1]
        if H_C is None:
            H = inputs.new_zeros(batch, self.num_hiddens)
            C = inputs.new_zeros(batch, self.num_hiddens)
        else:
            H, C = H_C
            checks.check_state(H, (batch, self.num_hiddens), "H")
            checks.check_state(C, (batch, self.num_hiddens), "C")
        outputs = []
        for X in inputs:
            I = torch.sigmoid(X @ self.W_xi + H @ self.W_hi + self.b_i)
            F = torch.sigmoid(X @ self.W_xf + H @ self.W_hf + self.b_f)
            O = torch.sigmoid(X @ self.W_xo + H @ self.W_ho + self.b_o)
            C_tilde = torch.tanh(X @ self.W_xc + H @ self.W_hc + self.b_c)
            C = F * C + I * C_tilde  # the additive memory path
            H = O * torch.tanh(C)
            outputs.append(H)
        return torch.stack(outputs), (H, C)

    @torch.no_grad()
    def copy_from(self, lstm: nn.LSTM) -> "LSTMScratch":
        """Copy the weights of a one-layer, one-way torch.nn.LSTM of equal sizes;
        returns self."""
        expected = (self.num_inputs, self.num_hiddens, 1, False, 0, True)
        got = (lstm.input_size, lstm.hidden_size, lstm.num_layers, lstm.bidirectional,
               lstm.proj_size, lstm.bias)
        if got != expected:
            raise ValueError(
                "expected nn.LSTM(input_size, hidden_size, num_layers, bidirectional, "
                f"proj_size, bias) = {expected}, got {got}"
            )
        # PyTorch stacks the gates as (input, forget, candidate, output),
        # each (hiddens, inputs)
        W_x = lstm.weight_ih_l0.chunk(4)
        W_h = lstm.weight_hh_l0.chunk(4)
        b = (lstm.bias_ih_l0 + lstm.bias_hh_l0).chunk(4)
        for k, gate in enumerate("ifco"):
            getattr(self, f"W_x{gate}").copy_(W_x[k].T)
            getattr(self, f"W_h{gate}").copy_(W_h[k].T)
            getattr(self, f"b_{gate}").copy_(b[k])
        return self


__all__ = [
    "LSTMScratch",
    "bptt_forward",
    "grad_clipping",
    "scale_grad",
    "truncation_multipliers",
]

"""Train several small recurrent classifiers side by side, as if each were trained alone.

Chapter 2 trains five copies of a small classifier that differ only in their seed: a recurrent
layer, then a linear layer on its last hidden state. Run one at a time, such tiny models spend
most of their time in the fixed cost of every PyTorch operation. Stacked along a leading *model
axis* ``S``, all of them cost about as much as one. Each model keeps its own minibatches, its own
Adam state and its own gradient clipping, so the result is what training them one by one gives,
up to rounding. This is time-budget engineering, not part of the lesson.

A model is any ``nn.Module`` with a ``recurrent`` layer and a ``head`` (an ``nn.Linear`` on the
last hidden state). ``kind`` names the layer by its parameter names:

* ``"LSTM"``: :class:`d2lite.LSTMScratch` (``W_xi``, ``W_hi``, ``b_i``, ... for the gates i, f,
  o and the candidate c);
* ``"RNN"``: :class:`d2lite.RNNScratch` (``W_xh``, ``W_hh``, ``b_h``);
* ``"GRU"``: a one-layer ``torch.nn.GRU`` (``weight_ih_l0``, ... with its reset gate applied
  after the product, as PyTorch computes it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from . import checks

__all__ = ["inputs_part", "run_side_by_side", "stack_parameters", "train_side_by_side"]

KINDS = ("LSTM", "RNN", "GRU")

_NEEDED = {
    "LSTM": [f"recurrent.{w}{g}" for g in "ifoc" for w in ("W_x", "W_h", "b_")],
    "RNN": ["recurrent.W_xh", "recurrent.W_hh", "recurrent.b_h"],
    "GRU": [f"recurrent.{n}_l0" for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")],
}


def _check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


def stack_parameters(models: Sequence[nn.Module]) -> dict[str, Tensor]:
    """The parameters of equally shaped models stacked along a new first axis.

    models: S modules with the same parameter names and shapes -> {name: (S, *shape)}. The
    stacked tensors share no memory with the models (they are detached copies).
    """
    if isinstance(models, nn.Module) or len(models) == 0:
        raise ValueError(f"models must be a non-empty sequence of modules, got {models!r}")
    shapes = [{n: tuple(p.shape) for n, p in m.named_parameters()} for m in models]
    for i, other in enumerate(shapes[1:], start=1):
        if other != shapes[0]:
            raise ValueError(
                f"models must have equal parameter names and shapes: model 0 has {shapes[0]}, "
                f"model {i} has {other}"
            )
    return {
        name: torch.stack([dict(m.named_parameters())[name].detach() for m in models]).clone()
        for name in shapes[0]
    }


def inputs_part(X: Tensor, W: Tensor, b: Tensor) -> Tensor:
    """``X @ W + b`` for every step and every model in one product.

    X: (steps, S, batch, inputs); W: (S, inputs, outputs); b: (S, 1, outputs)
    -> (steps, S, batch, outputs).
    """
    checks._check_float(X, "X", 4, "(steps, S, batch, inputs)")
    T, S, B, n = X.shape
    if W.dim() != 3 or W.shape[:2] != (S, n):
        raise ValueError(f"W must have shape ({S}, {n}, outputs), got {tuple(W.shape)}")
    if tuple(b.shape) != (S, 1, W.shape[2]):
        raise ValueError(f"b must have shape ({S}, 1, {W.shape[2]}), got {tuple(b.shape)}")
    XW = torch.baddbmm(b, X.transpose(0, 1).reshape(S, T * B, n), W)
    return XW.reshape(S, T, B, -1).transpose(0, 1)


def run_side_by_side(kind: str, params: dict[str, Tensor], X: Tensor) -> Tensor:
    """Logits of S models at once, each reading its own batch.

    kind: "LSTM", "RNN" or "GRU"; params: the models' parameters stacked as by
    :func:`stack_parameters`, {name: (S, ...)}; X: (steps, S, batch, features)
    -> logits (S, batch, classes).
    """
    _check_kind(kind)
    missing = [n for n in _NEEDED[kind] + ["head.weight", "head.bias"] if n not in params]
    if missing:
        raise ValueError(f"params of kind {kind!r} lack {missing}")
    num_models = params["head.weight"].shape[0]
    layout = f"(steps, {num_models}, batch, features)"
    checks._check_float(X, "X", 4, layout)
    if X.shape[1] != num_models:
        raise ValueError(f"X must have shape {layout}, got shape {tuple(X.shape)}")
    S, B = X.shape[1], X.shape[2]
    if kind == "LSTM":  # LSTMScratch's equations, the four blocks in one product
        W_x = torch.cat([params[f"recurrent.W_x{g}"] for g in "ifoc"], -1)
        W_h = torch.cat([params[f"recurrent.W_h{g}"] for g in "ifoc"], -1)
        b = torch.cat([params[f"recurrent.b_{g}"] for g in "ifoc"], -1).unsqueeze(1)
        h = W_h.shape[1]
        H, C = X.new_zeros(S, B, h), X.new_zeros(S, B, h)
        for XW in inputs_part(X, W_x, b):  # the inputs' part of every step at once
            Z = torch.baddbmm(XW, H, W_h)  # XW + H @ W_h in one operation
            I, F, O = torch.sigmoid(Z[..., : 3 * h]).split(h, -1)
            C = torch.addcmul(F * C, I, torch.tanh(Z[..., 3 * h :]))  # F * C + I * C~
            H = O * torch.tanh(C)
    elif kind == "RNN":  # RNNScratch's equation
        H = X.new_zeros(S, B, params["recurrent.W_hh"].shape[-1])
        for XW in inputs_part(X, params["recurrent.W_xh"], params["recurrent.b_h"].unsqueeze(1)):
            H = torch.tanh(torch.baddbmm(XW, H, params["recurrent.W_hh"]))
    else:  # nn.GRU's equations (reset gate after the product), its blocks stacked as r, z, h~
        W_x = params["recurrent.weight_ih_l0"].transpose(1, 2)
        W_h = params["recurrent.weight_hh_l0"].transpose(1, 2)
        b_h = params["recurrent.bias_hh_l0"].unsqueeze(1)
        h = W_h.shape[1]
        H = X.new_zeros(S, B, h)
        for XW in inputs_part(X, W_x, params["recurrent.bias_ih_l0"].unsqueeze(1)):
            HW = torch.baddbmm(b_h, H, W_h)
            R, Z = torch.sigmoid(XW[..., : 2 * h] + HW[..., : 2 * h]).split(h, -1)
            H = Z * H + (1 - Z) * torch.tanh(XW[..., 2 * h :] + R * HW[..., 2 * h :])
    return H @ params["head.weight"].transpose(1, 2) + params["head.bias"].unsqueeze(1)


def train_side_by_side(
    kind: str,
    models: Sequence[nn.Module],
    make_batch: Callable[[torch.Generator], tuple[Tensor, Tensor]],
    generators: Sequence[torch.Generator],
    num_updates: int,
    val: tuple[Tensor, Tensor],
    *,
    eval_every: int = 10,
    lr: float = 0.002,
    theta: float = 1.0,
    device: torch.device | str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Train S equally shaped classifiers side by side, each as if alone; copy the weights back.

    make_batch(generator) -> (X (steps, batch, features), y (batch,) class ids); model i draws
    its minibatches from generators[i]. Every model has its own Adam state (learning rate lr)
    and its gradient clipped to norm theta on its own. val: (X (steps, n, features), y (n,)),
    the same validation set for all. Returns the updates at which accuracy was measured (E,)
    and the validation accuracies (S, E), every eval_every updates.
    """
    _check_kind(kind)
    num_updates = checks.check_scalar(num_updates, "num_updates", int, low=1)
    eval_every = checks.check_scalar(eval_every, "eval_every", int, low=1, high=num_updates)
    lr = checks.check_scalar(lr, "lr", float, low=0, low_open=True)
    theta = checks.check_scalar(theta, "theta", float, low=0, low_open=True)
    if not callable(make_batch):
        raise ValueError(f"make_batch must be a function of a generator, got {make_batch!r}")
    params = stack_parameters(models)
    if len(generators) != len(models):
        raise ValueError(f"generators must hold one generator per model ({len(models)}), "
                         f"got {len(generators)}")
    X_val, y_val = val
    if X_val.dim() != 3 or tuple(y_val.shape) != (X_val.shape[1],):
        raise ValueError("val must be (X (steps, n, features), y (n,)), got shapes "
                         f"{tuple(X_val.shape)} and {tuple(y_val.shape)}")
    device = torch.device("cpu") if device is None else torch.device(device)
    S = len(models)
    params = {name: p.to(device).requires_grad_(True) for name, p in params.items()}
    optimizer = torch.optim.Adam(params.values(), lr=lr)  # elementwise: one Adam per model
    X_val = X_val.to(device).unsqueeze(1).expand(-1, S, -1, -1)
    y_val = y_val.to(device)
    updates, accuracies = [], []
    for step in range(1, num_updates + 1):
        batches = [make_batch(gen) for gen in generators]
        X = torch.stack([X for X, _ in batches], 1).to(device)  # (steps, S, batch, features)
        y = torch.stack([y for _, y in batches]).to(device)  # (S, batch)
        logits = run_side_by_side(kind, params, X)
        losses = nn.functional.cross_entropy(logits.transpose(1, 2), y, reduction="none")
        optimizer.zero_grad()
        losses.mean(1).sum().backward()  # model i's gradient is that of its own mean loss
        norms = torch.sqrt(sum((p.grad.flatten(1) ** 2).sum(1) for p in params.values()))
        for p in params.values():  # clipping at theta, model by model
            p.grad.mul_((theta / norms).clamp(max=1.0).reshape((-1,) + (1,) * (p.dim() - 1)))
        optimizer.step()
        if step % eval_every == 0:
            with torch.no_grad():
                logits = run_side_by_side(kind, params, X_val)
                accuracies.append((logits.argmax(-1) == y_val).float().mean(1).cpu())
            updates.append(step)
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, p in model.named_parameters():
                p.copy_(params[name][i])
    return np.array(updates), torch.stack(accuracies, 1).numpy()

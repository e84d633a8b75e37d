"""Chapter 2's diagrams: the LSTM cell gate by gate, the GRU cell, and truncated BPTT.

The cells are drawn from a recurrent layer (``nn.LSTM``/``nn.GRU`` or the chapter's
``LSTMScratch``): one step runs on a small batch of zeros and every printed shape (inputs,
states, each gate's output) is the shape that step produced.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .core import Diagram, trace
from .rnn import _check_batch, _run, recurrent_sizes

__all__ = ["LSTM_STEPS", "draw_bptt", "draw_gru_cell", "draw_lstm_steps", "gru_step",
           "lstm_step"]  # fmt: skip

#: The panels of :func:`draw_lstm_steps`, in the order a step computes them.
LSTM_STEPS = ("forget", "input", "cell", "output")


def _one_step_input(rnn: nn.Module, batch: int) -> torch.Tensor:
    num_inputs, _ = recurrent_sizes(rnn)
    shape = (batch, 1, num_inputs) if getattr(rnn, "batch_first", False) else (1, batch, num_inputs)
    return torch.zeros(shape)


def lstm_step(lstm: nn.Module, *, batch: int = 2) -> dict[str, torch.Tensor]:
    """One step of ``lstm`` (``nn.LSTM`` with one layer, or a module with the chapter's
    ``W_x?``/``W_h?``/``b_?`` weights) on zeros, gate by gate: a dict with "X", "H_prev",
    "C_prev", "F", "I", "C_tilde", "O", "C" and "H". The gates are computed from ``lstm``'s
    weights; "C" and "H" are what ``lstm`` itself returned (checked against the gates)."""
    _check_batch(batch)
    num_inputs, num_hiddens = recurrent_sizes(lstm)
    is_torch = isinstance(lstm, nn.LSTM)
    if isinstance(lstm, nn.RNNBase) and not is_torch:
        raise TypeError(f"lstm must be an LSTM, got {type(lstm).__name__}")
    if is_torch and (lstm.num_layers != 1 or lstm.proj_size):
        raise ValueError(
            f"lstm must have one layer and no projection, got num_layers={lstm.num_layers}, "
            f"proj_size={lstm.proj_size}"
        )
    if not is_torch and not all(hasattr(lstm, f"W_x{g}") for g in "ifoc"):
        raise TypeError(
            f"lstm must be nn.LSTM or have weights W_xi, W_xf, W_xo, W_xc, got "
            f"{type(lstm).__name__}"
        )
    X = torch.zeros(batch, num_inputs)
    H0 = torch.zeros(batch, num_hiddens)
    C0 = torch.zeros(batch, num_hiddens)
    with torch.no_grad():
        if is_torch:
            W_x, W_h = lstm.weight_ih_l0.chunk(4), lstm.weight_hh_l0.chunk(4)
            b = ((lstm.bias_ih_l0 + lstm.bias_hh_l0).chunk(4) if lstm.bias
                 else [torch.zeros(num_hiddens)] * 4)  # fmt: skip
            pre = {g: X @ W_x[k].T + H0 @ W_h[k].T + b[k] for k, g in enumerate("ifco")}
        else:
            pre = {g: X @ getattr(lstm, f"W_x{g}") + H0 @ getattr(lstm, f"W_h{g}")
                   + getattr(lstm, f"b_{g}") for g in "ifco"}  # fmt: skip
        gates = {"F": torch.sigmoid(pre["f"]), "I": torch.sigmoid(pre["i"]),
                 "C_tilde": torch.tanh(pre["c"]), "O": torch.sigmoid(pre["o"])}  # fmt: skip
        C = gates["F"] * C0 + gates["I"] * gates["C_tilde"]
        H = gates["O"] * torch.tanh(C)
    tr = trace(lstm, _one_step_input(lstm, batch))
    _, (H_run, C_run) = tr.output
    H_run, C_run = H_run.reshape(H.shape), C_run.reshape(C.shape)  # nn.LSTM: (1, batch, h)
    if not (torch.allclose(H_run, H, atol=1e-6) and torch.allclose(C_run, C, atol=1e-6)):
        raise ValueError("lstm's own step differs from its gates: is it an LSTM?")
    return {"X": X, "H_prev": H0, "C_prev": C0, **gates, "C": C_run, "H": H_run}


def _mul(d: Diagram, x: float, y: float, name: str):
    return d.box(x, y, "×", kind="op", w=0.3, h=0.3, name=name)


def draw_lstm_steps(
    lstm: nn.Module,
    *,
    batch: int = 2,
    steps: tuple[str, ...] = LSTM_STEPS,
    t: Callable[[str, str], str] | None = None,
) -> list[Diagram]:
    """The LSTM cell once per step of its computation, lighting one gate at a time: the
    forget gate, the input gate with the candidate, the cell update, the output gate.

    Every panel prints the shapes of X_t, H_{t-1} and C_{t-1} and of what it computes, from one
    step of ``lstm`` on a batch of ``batch`` (:func:`lstm_step`); ``shapes`` of a panel holds
    "X", "H_prev", "C_prev", "C", "H" and the lit gates ("F", "I", "C_tilde", "O").
    """
    bad = [s for s in steps if s not in LSTM_STEPS]
    if isinstance(steps, str) or not steps or bad:
        raise ValueError(f"steps must be a non-empty tuple drawn from {LSTM_STEPS}, got {steps!r}")
    v = lstm_step(lstm, batch=batch)
    return [_lstm_panel(v, step, LSTM_STEPS.index(step) + 1, t) for step in steps]


def _lstm_panel(v, step: str, number: int, t) -> Diagram:
    titles = {"forget": ("망각 게이트 F: 옛 기억을 얼마나 남길까",
                         "Forget gate F: how much to keep"),
              "input": ("입력 게이트 I와 후보 C̃: 무엇을 얼마나 쓸까",
                        "Input gate I and candidate C̃: what to write"),
              "cell": ("셀 갱신: 곱 하나와 덧셈 하나", "Cell update: one product, one sum"),
              "output": ("출력 게이트 O: 셀에서 얼마나 내보낼까",
                         "Output gate O: how much to expose")}  # fmt: skip
    ko, en = titles[step]
    d = Diagram(6.6, 3.25, t=t, title=(f"{number}. {ko}", f"{number}. {en}"))
    top, gate_y, bus = 2.45, 1.2, 0.4
    shape = lambda k: tuple(v[k].shape)  # noqa: E731
    c_prev = d.tensor(0.5, top, "$C_{t-1}$", shape("C_prev"), role="state", name="C_prev")
    h_prev = d.tensor(0.5, 1.25, "$H_{t-1}$", shape("H_prev"), role="state", name="H_prev")
    x = d.tensor(0.5, 0.35, "$X_t$", shape("X"), role="query", name="X")
    mul_f = _mul(d, 1.7, top, "mul_f")
    add = d.add(3.15, top, name="add")
    c_new = d.tensor(6.05, top, "$C_t$", shape("C"), role="state", name="C")
    lit = {"forget": ["gate_F", "F", "mul_f", "C_prev", "cF"],
           "input": ["gate_I", "gate_Ct", "I", "C_tilde", "mul_i"],
           "cell": ["mul_f", "mul_i", "add", "aMi", "cF", "fA", "aC", "C_prev", "C"],
           "output": ["gate_O", "O", "tanh", "mul_o", "H", "aT", "aH", "aTan"]}[step]
    gates = {"F": (1.7, r"$\sigma$", "F"), "I": (2.35, r"$\sigma$", "I"),
             "Ct": (3.95, "tanh", "C_tilde"), "O": (4.55, r"$\sigma$", "O")}  # fmt: skip
    boxes = {}
    labels = {"F": "$F_t$", "I": "$I_t$", "Ct": r"$\tilde{C}_t$", "O": "$O_t$"}
    for key, (gx, act, _) in gates.items():
        boxes[key] = d.box(gx, gate_y, labels[key], act, role="neutral", name=f"gate_{key}")
    # [H_{t-1}, X_t] feed every gate from below: a bus along y = bus
    join = d.box(1.4, bus, "[ , ]", kind="op", name="concat")
    d.arrow(h_prev, join, via=[(1.4, 1.25)], start="right", end="top")
    d.arrow(x, join)
    for key, (gx, _, _) in gates.items():
        d.arrow(join.anchor("right"), boxes[key], via=[(gx, bus)], end="bottom", lw=1.0)
    mul_i = _mul(d, 3.15, 1.85, "mul_i")
    gate_shape = lambda key: shape(gates[key][2]) if gates[key][2] in lit else None  # noqa: E731
    d.arrow(c_prev, mul_f, name="cF", role="state")
    d.arrow(mul_f, add, name="fA", role="state")
    d.arrow(add, c_new, name="aC", role="state")
    d.arrow(boxes["F"], mul_f, shape=gate_shape("F"), label_side="right", name="F")
    d.arrow(boxes["I"], mul_i, shape=gate_shape("I"), via=[(2.35, 1.85)], end="left",
            label_side="above", name="I")  # fmt: skip
    d.arrow(boxes["Ct"], mul_i, shape=gate_shape("Ct"), via=[(3.95, 1.85)], end="right",
            label_side="above", name="C_tilde")  # fmt: skip
    d.arrow(mul_i, add, name="aMi")
    tanh = d.box(5.57, 1.85, "tanh", kind="op", name="tanh")
    mul_o = _mul(d, 5.57, gate_y, "mul_o")
    h_new = d.tensor(5.57, 0.35, "$H_t$", shape("H"), role="state", name="H")
    d.arrow((5.57, top), tanh, end="top", name="aT")
    d.arrow(tanh, mul_o, name="aTan")
    d.arrow(boxes["O"], mul_o, shape=gate_shape("O"), label_side="above", name="O")
    d.arrow(mul_o, h_new, name="aH")
    d.highlight(*(d.parts[k] for k in lit))
    return d.finish()


def gru_step(gru: nn.GRU, *, batch: int = 2) -> dict[str, torch.Tensor]:
    """One step of a one-layer ``nn.GRU`` on zeros, gate by gate (PyTorch's form, which
    resets H_{t-1} W_hh): "X", "H_prev", "R", "Z", "H_tilde", "H"; "H" is what ``gru`` returned
    (checked against the gates)."""
    _check_batch(batch)
    if not isinstance(gru, nn.GRU):
        raise TypeError(f"gru must be a torch.nn.GRU, got {type(gru).__name__}")
    if gru.num_layers != 1 or gru.bidirectional:
        raise ValueError(
            f"gru must have one layer in one direction, got num_layers={gru.num_layers}, "
            f"bidirectional={gru.bidirectional}"
        )
    num_inputs, num_hiddens = recurrent_sizes(gru)
    X, H0 = torch.zeros(batch, num_inputs), torch.zeros(batch, num_hiddens)
    with torch.no_grad():
        zero = [torch.zeros(num_hiddens)] * 3
        b_x = gru.bias_ih_l0.chunk(3) if gru.bias else zero
        b_h = gru.bias_hh_l0.chunk(3) if gru.bias else zero
        gx = [X @ w.T + b for w, b in zip(gru.weight_ih_l0.chunk(3), b_x)]
        gh = [H0 @ w.T + b for w, b in zip(gru.weight_hh_l0.chunk(3), b_h)]
        R, Z = torch.sigmoid(gx[0] + gh[0]), torch.sigmoid(gx[1] + gh[1])
        H_tilde = torch.tanh(gx[2] + R * gh[2])
        H = Z * H0 + (1 - Z) * H_tilde
    _, H_run = trace(gru, _one_step_input(gru, batch)).output
    H_run = H_run.reshape(H.shape)
    if not torch.allclose(H_run, H, atol=1e-6):
        raise ValueError("gru's own step differs from its gates")
    return {"X": X, "H_prev": H0, "R": R, "Z": Z, "H_tilde": H_tilde, "H": H_run}


def draw_gru_cell(
    gru: nn.GRU,
    *,
    batch: int = 2,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The GRU cell: the reset gate R (which part of H_{t-1} the candidate reads), the update
    gate Z (how much of H_{t-1} passes on as it is), the candidate H̃ and the mix
    H_t = Z ⊙ H_{t-1} + (1 − Z) ⊙ H̃, with the shapes of one step of ``gru`` on a batch of
    ``batch`` (:func:`gru_step`); ``shapes`` holds "X", "H_prev", "R", "Z", "H_tilde", "H"."""
    v = gru_step(gru, batch=batch)
    shape = lambda k: tuple(v[k].shape)  # noqa: E731
    d = Diagram(6.4, 3.3, t=t, title=("GRU 셀", "A GRU cell"))
    top = 2.5
    h_prev = d.tensor(0.5, top, "$H_{t-1}$", shape("H_prev"), role="state", name="H_prev")
    x = d.tensor(0.5, 0.45, "$X_t$", shape("X"), role="query", name="X")
    mul_z = _mul(d, 2.3, top, "mul_z")
    add = d.add(4.4, top, name="add")
    h_new = d.tensor(5.85, top, "$H_t$", shape("H"), role="state", name="H")
    join = d.box(1.4, 1.35, "[ , ]", kind="op", name="concat")
    z = d.box(2.3, 1.75, "$Z_t$", r"$\sigma$", role="neutral", name="gate_Z")
    r = d.box(2.3, 0.95, "$R_t$", r"$\sigma$", role="neutral", name="gate_R")
    mul_r = _mul(d, 3.2, 0.95, "mul_r")
    one_minus = d.box(3.55, 1.75, "1 −", kind="op", name="one_minus")
    mul_c = _mul(d, 4.4, 1.75, "mul_c")
    cand = d.box(4.4, 0.95, r"$\tilde{H}_t$", "tanh", role="neutral", name="gate_H")
    d.arrow(h_prev, mul_z, role="state", name="hz")
    d.arrow(mul_z, add, role="state", name="za")
    d.arrow(add, h_new, role="state", name="ah")
    d.arrow((1.4, top), join, end="top", lw=1.0)
    d.arrow(x.anchor("right", 0.75), join, via=[(1.4, x.anchor("right", 0.75)[1])], end="bottom",
            lw=1.0)  # fmt: skip
    d.arrow(join, z, via=[(1.4, 1.75)], start="top", end="left", lw=1.0)
    d.arrow(join, r, via=[(1.4, 0.95)], start="bottom", end="left", lw=1.0)
    d.arrow(z, mul_z, shape=shape("Z"), label_side="right", name="Z")
    d.arrow(z, one_minus)
    d.arrow(one_minus, mul_c)
    d.arrow(r, mul_r, shape=shape("R"), label_side="below", name="R")
    d.arrow((3.2, top), mul_r, end="top", lw=1.0)
    d.arrow(mul_r, cand)
    d.arrow(x.anchor("right", 0.25), cand, via=[(4.4, x.anchor("right", 0.25)[1])],
            end="bottom", lw=1.0)  # fmt: skip
    d.arrow(cand, mul_c, shape=shape("H_tilde"), label_side="right", name="H_tilde")
    d.arrow(mul_c, add)
    d.highlight(z, r, cand, gray_rest=False)
    return d.finish()


def draw_bptt(
    rnn: nn.Module,
    steps: int = 3,
    *,
    xi=None,
    batch: int = 1,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Backpropagation through time on the unrolled graph of ``rnn``: inputs x_t, states h_t,
    per-step losses l_t and their mean L; the forward pass runs up and to the right, the
    gradient (dashed, highlight color) runs back along the chain of states.

    ``xi`` (the multipliers of the chapter's ``truncation_multipliers``, one per step;
    ``steps`` is then its length) cuts the gradient where ``xi[t] == 0``: the arrow from
    h_{t+1} back to h_t is missing there and the boundary is marked "cut". The shapes of one
    step's x_t and h_t come from running ``rnn`` on a batch of ``batch``: ``shapes`` holds
    "x" and "h".
    """
    _check_batch(batch)
    if xi is not None:
        xi = torch.as_tensor(xi).flatten()
        steps = len(xi)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 7:
        raise ValueError(f"steps must be an int from 1 to 7 (the length of xi), got {steps!r}")
    outputs, _ = _run(rnn, steps, batch)
    num_inputs, _ = recurrent_sizes(rnn)
    cut = [] if xi is None else [i for i in range(1, steps) if float(xi[i]) == 0.0]
    title = (("절단된 BPTT: 구간 경계에서 기울기가 끊긴다",
              "Truncated BPTT: the gradient stops at segment boundaries") if cut else
             ("펼친 계산 그래프와 BPTT", "The unrolled graph and BPTT"))  # fmt: skip
    d = Diagram(6.4, 3.45, t=t, title=title)
    gap = min(1.15, 4.2 / steps)
    xs = [0.4 + gap * (i + 1) for i in range(steps)]
    y_x, y_h, y_l, y_L = 0.35, 1.35, 2.2, 2.85
    h0 = d.box(0.4, y_h, "$h_0$", role="state", w=0.38, name="h0")
    hs, losses = [], []
    for i, x in enumerate(xs):
        xin = d.box(x, y_x, f"$x_{i + 1}$", kind="io", name=f"x{i + 1}")
        h = d.box(x, y_h, f"$h_{i + 1}$", role="state", w=0.38, name=f"h{i + 1}")
        loss = d.box(x, y_l, f"$l_{i + 1}$", kind="op", w=0.42, name=f"l{i + 1}")
        d.arrow(xin, h)
        d.arrow(h, loss)
        hs.append(h)
        losses.append(loss)
    big = d.box(5.75, y_L, "$L$", role="output", w=0.45, name="L")
    for loss in losses:
        d.arrow(loss, big, via=[(loss.center[0], y_L)], start="top", end="left", lw=1.0)
    chain = [h0, *hs]
    for i, (a, b) in enumerate(zip(chain, chain[1:])):
        d.arrow(a.anchor("right", 0.72), b.anchor("left", 0.72), role="state", name=f"f{i}")
        if i in cut:  # the gradient from h_{i+1} does not reach h_i
            d.text((a.x1 + b.x0) / 2, a.y0 - 0.2, ("끊김", "cut"), role="highlight",
                   name=f"cut{i}")  # fmt: skip
            continue
        d.arrow(b.anchor("left", 0.28), a.anchor("right", 0.28), role="highlight", ls="--",
                lw=1.2, name=f"g{i}")  # fmt: skip
    d.tensor(5.75, y_h, "$h_t$", tuple(outputs[0].shape), role="state", name="h")
    d.tensor(5.75, y_x, "$x_t$", (batch, num_inputs), role="query", name="x")
    return d.finish()

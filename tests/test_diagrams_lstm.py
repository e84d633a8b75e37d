"""Chapter 2's diagrams: the LSTM cell panel by panel, the GRU cell and (truncated) BPTT print
the shapes one step of the layer really produces, only in the book's palette."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from torch import nn

import d2lite as d2l
from d2lite.diagrams import core
from d2lite.diagrams import lstm as dl
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)


def _lstms():
    return [nn.LSTM(5, 7), d2l.bptt.LSTMScratch(3, 12, sigma=0.5, forget_bias=1.0),
            nn.LSTM(32, 64)]


@pytest.mark.parametrize("case", range(3))
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_lstm_panels_print_the_shapes_of_one_step(case, batch, lang):
    lstm = _lstms()[case]
    num_inputs, num_hiddens = dl.recurrent_sizes(lstm)
    X = torch.randn(1, batch, num_inputs)
    out, (H, C) = lstm(X)
    state = torch.get_rng_state()
    panels = dl.draw_lstm_steps(lstm, batch=batch, t=_t(lang))
    assert torch.equal(state, torch.get_rng_state())  # the figure drew no random number
    assert len(panels) == 4
    gate = (batch, num_hiddens)
    lit = [{"F"}, {"I", "C_tilde"}, set(), {"O"}]
    for d, gates in zip(panels, lit):
        _check_drawn(d)
        assert d.shapes == {"X": (batch, num_inputs), "H_prev": gate, "C_prev": gate,
                            "C": tuple(C.reshape(batch, -1).shape),
                            "H": tuple(out[-1].shape), **dict.fromkeys(gates, gate)}
    # one gate lit per panel: its box has the highlight ring, the others are gray
    for d, key in zip(panels, ["gate_F", "gate_I", "add", "gate_O"]):
        assert d._focus and key in {p.name for p in d._focus}


def test_lstm_step_is_the_layers_own_step():
    lstm = d2l.bptt.LSTMScratch(4, 6, sigma=0.7, forget_bias=2.0)
    v = dl.lstm_step(lstm, batch=2)
    _, (H, C) = lstm(torch.zeros(1, 2, 4))
    assert torch.allclose(v["H"], H) and torch.allclose(v["C"], C)
    assert torch.allclose(v["F"], torch.sigmoid(lstm.b_f).expand(2, 6))


def test_lstm_panels_refuse_wrong_layers_and_steps():
    with pytest.raises(TypeError, match="lstm must be an LSTM, got GRU"):
        dl.draw_lstm_steps(nn.GRU(3, 4))
    with pytest.raises(ValueError, match="one layer"):
        dl.draw_lstm_steps(nn.LSTM(3, 4, num_layers=2))
    with pytest.raises(ValueError, match="steps must be"):
        dl.draw_lstm_steps(nn.LSTM(3, 4), steps=("forget", "reset"))
    with pytest.raises(ValueError, match="batch must be a positive int"):
        dl.draw_lstm_steps(nn.LSTM(3, 4), batch=0)


def test_a_wrong_shape_fails():
    d = dl.draw_lstm_steps(nn.LSTM(5, 7), steps=("forget",))[0]
    d.shapes["F"] = (2, 8)  # a shape the figure does not print
    with pytest.raises(AssertionError):
        _check_drawn(d)


@pytest.mark.parametrize(("num_inputs", "num_hiddens", "batch"), [(32, 64, 2), (3, 5, 1),
                                                                   (10, 20, 4)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_gru_cell_prints_the_shapes_of_one_step(num_inputs, num_hiddens, batch, lang):
    gru = nn.GRU(num_inputs, num_hiddens)
    _, H = gru(torch.zeros(1, batch, num_inputs))
    d = dl.draw_gru_cell(gru, batch=batch, t=_t(lang))
    gate = tuple(H[-1].shape)
    assert gate == (batch, num_hiddens)
    assert d.shapes == {"X": (batch, num_inputs), "H_prev": gate, "H": gate, "R": gate,
                        "Z": gate, "H_tilde": gate}
    _check_drawn(d)
    v = dl.gru_step(gru, batch=batch)
    assert torch.allclose(v["H"], H[-1], atol=1e-6)
    with pytest.raises(TypeError, match="gru must be a torch.nn.GRU, got LSTM"):
        dl.draw_gru_cell(nn.LSTM(3, 4))


@pytest.mark.parametrize(("num_inputs", "num_hiddens", "tau", "steps"),
                         [(4, 16, 5, 7), (1, 3, 2, 5), (8, 32, None, 3)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_bptt_cuts_where_xi_is_zero(num_inputs, num_hiddens, tau, steps, lang):
    rnn = d2l.RNNScratch(num_inputs, num_hiddens)
    outputs, _ = rnn(torch.zeros(steps, 2, num_inputs))
    if tau is None:
        d = dl.draw_bptt(rnn, steps, batch=2, t=_t(lang))
        cuts = []
    else:
        xi = d2l.truncation_multipliers(steps, "regular", tau=tau)
        d = dl.draw_bptt(rnn, xi=xi, batch=2, t=_t(lang))
        cuts = [i for i in range(1, steps) if xi[i] == 0]
        assert cuts == list(range(tau, steps, tau))
    assert d.shapes == {"h": tuple(outputs[0].shape), "x": (2, num_inputs)}
    gradients = {n for n in d.parts if n.startswith("g")}
    assert gradients == {f"g{i}" for i in range(steps) if i not in cuts}
    assert {n for n in d.parts if n.startswith("cut")} == {f"cut{i}" for i in cuts}
    _check_drawn(d)


def test_bptt_refuses_too_many_steps():
    with pytest.raises(ValueError, match="steps must be an int from 1 to 7"):
        dl.draw_bptt(nn.RNN(2, 3), 8)


def test_every_diagram_fits_the_column():
    for d in [*dl.draw_lstm_steps(nn.LSTM(5, 7)), dl.draw_gru_cell(nn.GRU(3, 4)),
              dl.draw_bptt(nn.RNN(2, 3))]:
        assert d.fig.get_size_inches()[0] <= core.MAX_WIDTH_IN

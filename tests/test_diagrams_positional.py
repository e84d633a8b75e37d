"""Chapter 7's diagrams: path lengths counted on the drawn graphs, and the positional
encoding's column pairs read from the module's table, rotating with the position."""

import math

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.diagrams.positional import (
    connection_graph,
    draw_path_lengths,
    draw_rotating_pairs,
    path_counts,
)
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)


@pytest.mark.parametrize(("n", "k"), [(8, 3), (6, 2), (5, 4), (2, 2)])
def test_path_counts_match_the_table(n, k):
    """RNN: path and sequential steps n; CNN with contiguous kernels: ceil((n-1)/(k-1))
    layers, path and steps; self-attention: 1 and 1."""
    layers = math.ceil((n - 1) / (k - 1))
    assert path_counts("rnn", n, k) == {"path": n, "sequential": n, "layers": 1}
    assert path_counts("cnn", n, k) == {"path": layers, "sequential": layers, "layers": layers}
    assert path_counts("attention", n, k) == {"path": 1, "sequential": 1, "layers": 1}


def test_connection_graphs_have_the_edges_of_each_layer():
    _, edges = connection_graph("attention", 5)
    assert len(edges) == 25
    _, edges = connection_graph("rnn", 5)
    assert len(edges) == 5 + 4
    nodes, edges = connection_graph("cnn", 5, 3)  # 2 layers; position i sees i-2..i
    assert len(nodes) == 3 and len(edges) == 2 * (1 + 2 + 3 + 3 + 3)
    with pytest.raises(ValueError, match="kind must be"):
        connection_graph("transformer", 5)
    with pytest.raises(ValueError, match="k must be an int >= 2"):
        connection_graph("cnn", 5, 1)


@pytest.mark.parametrize(("n", "k"), [(8, 3), (6, 2), (5, 4)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_path_figure_prints_the_counts_and_highlights_the_path(n, k, lang):
    d = draw_path_lengths(n, k, t=_t(lang))
    _check_drawn(d)
    text = "\n".join(d.labels())
    for kind in ("rnn", "cnn", "attention"):
        c = path_counts(kind, n, k)
        assert d.counts[kind] == c
        word = ("경로 길이 {}", "순차 단계 {}") if lang == "ko" else \
            ("path length {}", "sequential steps {}")
        assert word[0].format(c["path"]) in text and word[1].format(c["sequential"]) in text
        path_arrows = [p for name, p in d.parts.items() if name.startswith(f"{kind}_path_")]
        assert len(path_arrows) == c["path"]
        assert all(p.role == "highlight" for p in path_arrows)
    layers = math.ceil((n - 1) / (k - 1))
    cnn_nodes = [name for name, p in d.parts.items()
                 if name.startswith("cnn_") and p.kind == "op"]
    assert len(cnn_nodes) == n * (layers + 1)  # every layer drawn
    # every attention connection drawn: n * n arrows
    assert sum(name.startswith("attention_(") or name.startswith("attention_path_")
               for name in d.parts) == n * n


def test_path_figure_refuses_what_it_cannot_draw():
    with pytest.raises(ValueError, match="n must be at most 8"):
        draw_path_lengths(9, 3)
    with pytest.raises(ValueError, match="at most 5"):
        draw_path_lengths(8, 2)  # 7 layers
    with pytest.raises(ValueError, match="k must be an int >= 2"):
        draw_path_lengths(8, 1)


@pytest.mark.parametrize(("d_model", "pairs", "positions"), [(32, (0, 2, 4), 8),
                                                             (16, (1, 7), 6), (64, (3,), 12)])
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_rotating_pairs_read_the_encodings_table(d_model, pairs, positions, lang):
    pe = d2l.PositionalEncoding(d_model)
    d = d2l.diagrams.draw(pe, pairs, positions=positions, t=_t(lang))
    _check_drawn(d)
    P = pe.P[0, :positions]
    text = "\n".join(d.labels())
    for j, omega, pts in zip(pairs, d.omegas, d.points, strict=True):
        assert omega == pytest.approx(1 / 10000 ** (2 * j / d_model), rel=1e-5)
        assert torch.equal(torch.from_numpy(pts).float(), P[:, 2 * j:2 * j + 2])
        assert f"{omega:.2f} rad" in text
        assert (f"열 {2 * j}, {2 * j + 1}" if lang == "ko" else
                f"columns {2 * j}, {2 * j + 1}") in text
        # one position further is a rotation by omega: every step turns by the same angle
        angles = torch.atan2(torch.from_numpy(pts[:, 0]), torch.from_numpy(pts[:, 1]))
        turn = torch.remainder(angles.diff(), 2 * math.pi)
        assert torch.allclose(turn, torch.full_like(turn, omega), atol=1e-5)


def test_rotating_pairs_follow_the_table_not_a_formula():
    pe = d2l.PositionalEncoding(32)
    pe.P[0, :, 0:2] = torch.stack([torch.sin(2 * torch.arange(1000.)),
                                   torch.cos(2 * torch.arange(1000.))], dim=1)
    d = draw_rotating_pairs(pe, (0,))
    assert d.omegas[0] == pytest.approx(2.0, rel=1e-5)
    with pytest.raises(ValueError, match="pairs must be"):
        draw_rotating_pairs(pe, (16,))
    with pytest.raises(TypeError, match="table P"):
        draw_rotating_pairs(d2l.DotProductAttention())
    with pytest.raises(ValueError, match="positions must be at most 12"):
        draw_rotating_pairs(pe, positions=20)

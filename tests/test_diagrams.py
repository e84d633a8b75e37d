"""The diagram vocabulary (d2lite.diagrams): every part draws, one palette colors everything,
the colors stay readable and apart, and a label that does not fit fails."""

import dataclasses
import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib import patches
from matplotlib import pyplot as plt
from matplotlib.colors import to_hex, to_rgb

import d2lite as d2l
from d2lite import plotting
from d2lite.diagrams import core
from d2lite.diagrams.core import PALETTE, Diagram, causal_mask, contrast, padding_mask, trace


@pytest.fixture(autouse=True)
def _strict_fonts_and_closed_figures(monkeypatch):
    monkeypatch.setenv("D2LITE_STRICT_FONTS", "1")  # as the build runs: a layout problem raises
    plotting.strict_glyphs(True)  # a Hangul label without a glyph is an error
    yield
    plotting.strict_glyphs(False)
    plt.close("all")


def _t(lang):
    return lambda ko, en: ko if lang == "ko" else en


def _every_part(t, palette=PALETTE) -> Diagram:
    d = Diagram(6.8, 3.2, t=t, title=("어휘 전부", "The whole vocabulary"), palette=palette)
    x = d.tensor(0.75, 1.5, ("입력", "input"), (2, 10, 32), role="query", name="x")
    lin = d.box(2.75, 1.5, ("선형층", "linear"), "$W_q$", role="query", name="lin")
    soft = d.box(3.85, 1.5, "softmax", kind="op", name="soft")
    add = d.add(4.65, 1.5, name="add")
    d.arrow(x, lin, shape=(2, 10, 32), name="a1")
    d.arrow(lin, soft)
    d.arrow(soft, add)
    d.residual(lin, add, side="bottom", offset=0.45, name="res")
    d.group([lin, soft, add], ("× N 층", "× N layers"), name="layers")
    d.mask(5.5, 1.05, causal_mask(4), label=("마스크", "mask"), name="m")
    d.cache(5.7, 2.3, 5, label=("캐시", "cache"), name="kv")
    d.text(0.75, 0.55, ("토큰", "tokens"), role="key")
    d.highlight(lin)
    return d.finish()


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_every_part_draws_and_fits_in_each_language(lang):
    d = _every_part(_t(lang))
    assert d.problems() == []
    assert d.shapes == {"x": (2, 10, 32), "a1": (2, 10, 32)}  # the shapes printed
    assert d.parts["m"].shape == (4, 4)
    assert {"x", "lin", "soft", "add", "res", "layers", "m", "kv"} <= set(d.parts)
    labels = d.labels()
    assert ("선형층" if lang == "ko" else "linear") in labels
    assert "(2, 10, 32)" in labels
    buf = io.BytesIO()
    d.fig.savefig(buf, format="png", dpi=100)  # renders every glyph (strict fonts)
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bilingual_draws_a_diagram_in_both_languages(monkeypatch):
    shown = []
    monkeypatch.setattr(plotting, "_display",
                        lambda images, c, a, diagram=False: shown.extend(images))
    d2l.bilingual(lambda t: _every_part(t), caption=("어휘", "vocabulary"))
    assert [lang for lang, _ in shown] == ["ko", "en"]
    widths = [plotting._png_width(png) / 100 for _, png in shown]
    assert all(w <= core.MAX_WIDTH_IN for w in widths), widths


def _colors(d: Diagram) -> set[str]:
    """Every color a diagram drew with (fills, outlines, lines, texts), as hex."""
    out = set()
    for artist in [*d.ax.patches, *d.ax.lines]:
        if isinstance(artist, patches.Patch):
            for rgba in (artist.get_facecolor(), artist.get_edgecolor()):
                if rgba[3] > 0:
                    out.add(to_hex(rgba[:3]))
        else:
            out.add(to_hex(artist.get_color()))
    for txt in d.ax.texts:
        out.add(to_hex(txt.get_color()))
    return out


def test_the_palette_is_the_one_source_of_color():
    palette_colors = {PALETTE.background}
    for role in PALETTE.roles.values():
        palette_colors |= {role.fill, role.edge, role.ink}
    used = _colors(_every_part(_t("en")))
    assert used <= palette_colors, used - palette_colors
    # a different palette changes every color drawn: nothing is hard-coded
    shifted = {}
    for name, role in PALETTE.roles.items():
        shifted[name] = dataclasses.replace(role, fill="#fefefa", edge="#010203", ink="#020304")
    other = dataclasses.replace(PALETTE, **shifted, background="#fffffe")
    assert _colors(_every_part(_t("en"), palette=other)) <= {
        "#fefefa", "#010203", "#020304", "#fffffe"
    }  # fmt: skip
    assert d2l.diagrams.PALETTE is core.PALETTE


def test_highlight_grays_the_rest_and_rings_the_part():
    d = _every_part(_t("en"))
    soft = d.parts["soft"]
    assert to_hex(soft.artists[0].get_edgecolor()) == PALETTE.gray.edge
    assert all(to_hex(t.get_color()) == PALETTE.gray.ink for t in soft.texts)
    lin = d.parts["lin"]
    assert to_hex(lin.artists[0].get_facecolor()) == PALETTE.query.fill
    rings = [p for p in d.ax.patches if to_hex(p.get_edgecolor()) == PALETTE.highlight.edge]
    assert len(rings) == 1
    # grayed labels stay readable on their grayed fills
    assert contrast(PALETTE.gray.ink, PALETTE.gray.fill) >= 4.5


def test_colors_are_readable_on_white_and_on_their_fills():
    white = PALETTE.background
    for name, role in PALETTE.roles.items():
        assert contrast(role.ink, role.fill) >= 4.5, name  # labels drawn on fills
        if name != "gray":  # edges carry colored text (shapes on arrows, group titles)
            assert contrast(role.edge, white) >= 4.5, name
            assert contrast(role.edge, role.fill) >= 3.0, name  # an outline stands out


# Machado, Oliveira and Fernandes (2009): simulated full protanopia, deuteranopia, tritanopia
# as matrices on linear RGB.
_CVD = {
    "normal": np.eye(3),
    "protan": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                        [-0.003882, -0.048116, 1.051998]]),
    "deutan": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                        [-0.011820, 0.042940, 0.968881]]),
    "tritan": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                        [0.004733, 0.691367, 0.303900]]),
}  # fmt: skip


def _lab(rgb_linear: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ np.clip(rgb_linear, 0, 1)  # fmt: skip
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _linear(color: str) -> np.ndarray:
    c = np.array(to_rgb(color))
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


@pytest.mark.parametrize("vision", list(_CVD))
def test_query_key_value_stay_apart_for_color_blind_readers(vision):
    m = _CVD[vision]
    qkv = [PALETTE.query, PALETTE.key, PALETTE.value]
    for i, a in enumerate(qkv):
        for b in qkv[i + 1:]:
            de = np.linalg.norm(_lab(m @ _linear(a.edge)) - _lab(m @ _linear(b.edge)))
            assert de >= 15, (vision, a.name, b.name, de)
            if vision != "tritan":  # the rarest form: the edges and labels carry it
                de = np.linalg.norm(_lab(m @ _linear(a.fill)) - _lab(m @ _linear(b.fill)))
                assert de >= 10, (vision, a.name, b.name, "fill", de)
    # and by lightness alone (grayscale print): value darkest, key lightest
    lightness = [_lab(_linear(r.edge))[0] for r in qkv]
    assert lightness[2] + 5 < lightness[0] < lightness[1] - 5, lightness


def test_a_label_too_long_for_its_box_fails():
    d = Diagram(4, 2)
    d.box(2, 1, "a label far too long for this box", w=0.8)
    with pytest.raises(ValueError, match="does not fit in its frame"):
        d.finish()


def test_overlapping_parts_and_labels_fail():
    d = Diagram(4, 2)
    d.box(1.5, 1, "encoder")
    d.box(1.9, 1, "decoder")
    with pytest.raises(ValueError, match="overlap"):
        d.finish()
    d = Diagram(4, 2)
    a, b = d.box(0.6, 1, "a"), d.box(3.4, 1, "b")
    d.arrow(a, b, "a rather long arrow label that runs into b")
    with pytest.raises(ValueError, match="lies over"):
        d.finish()


def test_clipped_and_small_text_fail():
    d = Diagram(3, 1.5)
    d.box(0.2, 0.75, "clipped on the left")
    with pytest.raises(ValueError, match="cut off by the figure's edge"):
        d.finish()
    d = Diagram(3, 1.5)
    d.text(1.5, 0.75, "tiny", size=6)
    with pytest.raises(ValueError, match=r"6(\.0)? pt, below 9"):
        d.finish()


def test_mask_values_must_fit_their_cells():
    d = Diagram(3, 2)
    vis = padding_mask(2, 4, 3)
    d.mask(1.5, 1, vis, values=np.where(vis, 1 / 3, 0.0), cell=0.42)
    assert d.problems() == []
    d = Diagram(3, 2)
    d.mask(1.5, 1, vis, values=np.where(vis, 1 / 3, 0.0), cell=0.15)
    with pytest.raises(ValueError, match="does not fit"):
        d.finish()


def test_masks_helpers():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False],
                                       [True, True, True]]  # fmt: skip
    assert padding_mask(2, 4, 1).tolist() == [[True, False, False, False]] * 2
    assert core.format_shape((4,)) == "(4,)" and core.format_shape([2, 10, 32]) == "(2, 10, 32)"


@pytest.mark.parametrize(
    ("thunk", "pattern"),
    [
        (lambda: Diagram(8, 2), r"width must be at most 7.0 in .* got 8"),
        (lambda: Diagram(0, 2), r"width must be a positive number of inches, got 0"),
        (lambda: Diagram(3, 2, t="ko"), r"t must be the t\(ko, en\) callback, got str"),
        (lambda: Diagram(3, 2).box(1, 1, "a", kind="blob"), r"kind must be .* got 'blob'"),
        (lambda: Diagram(3, 2).box(1, 1, ["a", "b"]), r"a label must be a str or a .* pair"),
        (lambda: Diagram(3, 2).box(1, 1, "a", role="quary"), r"role must be one of .*'quary'"),
        (lambda: Diagram(3, 2).mask(1, 1, [[1, 0]]), r"visible must be a non-empty 2-D boolean"),
        (lambda: Diagram(3, 2).cache(1, 1, 3, new=4), r"new must be an int in \[0, rows=3\]"),
        (lambda: causal_mask(0), r"n must be a positive int, got 0"),
        (lambda: padding_mask(2, 3, 4), r"valid_len must be an int in \[0, 3\], got 4"),
        (lambda: Diagram(3, 2).group([], "x"), r"parts must be a non-empty sequence"),
        (lambda: Diagram(3, 2).highlight(Diagram(3, 2).box(1, 1, "a")), r"parts of this diagram"),
    ],
)
def test_bad_arguments_raise_clear_errors(thunk, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        thunk()


def test_duplicate_names_fail():
    d = Diagram(3, 2)
    d.box(0.8, 1, "a", name="x")
    with pytest.raises(ValueError, match="name 'x' is already used"):
        d.box(2.2, 1, "b", name="x")


def test_role_cmap_runs_from_white_to_the_role():
    cmap = core.role_cmap("key")
    assert to_hex(cmap(0.0)) == "#ffffff" and to_hex(cmap(1.0)) == PALETTE.key.edge
    with pytest.raises(TypeError, match="role must be a role name or a Role"):
        core.role_cmap(3)


def test_trace_records_shapes_without_touching_the_module_or_the_rng():
    import torch

    att = d2l.DotProductAttention(dropout=0.5)
    att.train()
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 4)
    state = torch.get_rng_state()
    tr = core.trace(att, q, k, v, torch.tensor([2, 5]))
    assert torch.equal(state, torch.get_rng_state())  # the chapter's next draw is unchanged
    assert att.training and att.attention_weights is None  # the copy ran, not the module
    assert tr[""] == (2, 3, 4) and tr["dropout"] == (2, 3, 5)
    assert tr.inputs[""] == ((2, 3, 8), (2, 5, 8), (2, 5, 4), (2,))
    assert tr.calls == {"": 1, "dropout": 1}
    with pytest.raises(KeyError, match="no submodule 'W_q' ran"):
        tr["W_q"]
    with pytest.raises(TypeError, match="module must be a torch.nn.Module, got str"):
        core.trace("attention")


def test_draw_finds_the_drawer_of_the_nearest_class():
    import torch

    class Base(torch.nn.Module):
        pass

    class Child(Base):
        pass

    calls = []
    saved = dict(core.DRAWERS)
    try:
        core.drawer(Base)(lambda m, **kw: calls.append((type(m).__name__, kw)) or "drawn")
        assert core.draw(Child(), t=None) == "drawn"
        assert calls == [("Child", {"t": None})]
        with pytest.raises(TypeError, match="no diagram is registered for Linear"):
            core.draw(torch.nn.Linear(2, 2))
    finally:
        core.DRAWERS.clear()
        core.DRAWERS.update(saved)


# -- chapter diagrams: drawn from the modules they show -----------------------------------------
import torch  # noqa: E402
from torch import nn  # noqa: E402

from d2lite.diagrams import attention as dattention  # noqa: E402
from d2lite.diagrams import rnn as drnn  # noqa: E402


def _check_drawn(d: Diagram) -> None:
    """Every shape the diagram recorded is printed in it, and only palette colors are used."""
    text = "\n".join(d.labels())
    for name, shape in d.shapes.items():
        assert core.format_shape(shape) in text, (name, shape)
    palette_colors = {PALETTE.background}
    for role in PALETTE.roles.values():
        palette_colors |= {role.fill, role.edge, role.ink}
    assert _colors(d) <= palette_colors, _colors(d) - palette_colors
    assert d.problems() == []


@pytest.mark.parametrize(("num_inputs", "num_hiddens", "words", "batch"),
                         [(3, 4, ["I", "go", "home"], 1), (5, 16, ["a", "b"], 3),
                          (2, 7, ["w1", "w2", "w3", "w4", "w5"], 2)])  # fmt: skip
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_unrolled_rnn_prints_the_states_the_layer_produces(num_inputs, num_hiddens, words, batch,
                                                           lang):
    rnn = d2l.RNNScratch(num_inputs, num_hiddens, sigma=0.8)
    outputs, last = rnn(torch.zeros(len(words), batch, num_inputs))
    state = torch.get_rng_state()
    d = drnn.draw_unrolled(rnn, words, batch=batch, t=_t(lang))
    assert torch.equal(state, torch.get_rng_state())
    for i in range(len(words)):
        assert d.shapes[f"h{i + 1}"] == tuple(outputs[i].shape) == (batch, num_hiddens)
        assert d.shapes[f"x{i + 1}"] == (batch, num_inputs)
    assert sum(p.role == "highlight" for p in d.parts.values() if p.kind == "arrow") == len(
        words) - 1  # the road: one recurrent arrow per step  # fmt: skip
    assert "shortcut" in d.parts
    _check_drawn(d)


def test_unrolled_rnn_takes_torch_layers_too():
    gru = nn.GRU(3, 6)
    d = drnn.draw_unrolled(gru, ["I", "go"], batch=2, shortcut=False)
    assert d.shapes["h1"] == (2, 6) and "shortcut" not in d.parts
    with pytest.raises(ValueError, match="rnn must read in one direction"):
        drnn.draw_unrolled(nn.GRU(3, 6, bidirectional=True), ["I"])
    with pytest.raises(TypeError, match="rnn must be a recurrent layer .* got Linear"):
        drnn.draw_unrolled(nn.Linear(3, 6), ["I"])
    with pytest.raises(ValueError, match="words must be a non-empty sequence"):
        drnn.draw_unrolled(gru, "I go")


@pytest.mark.parametrize(("vocab", "hiddens", "source", "target"),
                         [(8, 32, ("I", "go", "home"), ("나는", "집에", "간다")),
                          (5, 12, ("we", "go"), ("우리는", "간다", "집에", "버스로"))])  # fmt: skip
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_seq2seq_prints_the_context_the_encoder_produces(vocab, hiddens, source, target, lang):
    encoder = d2l.RNNScratch(vocab, hiddens)
    outputs, context = encoder(torch.zeros(len(source), 1, vocab))
    d = drnn.draw_seq2seq(encoder, source=source, target=target, t=_t(lang))
    assert d.shapes["c"] == tuple(context.shape) == (1, hiddens)
    assert d.shapes["encoder"] == tuple(outputs.shape) == (len(source), 1, hiddens)
    assert d.shapes["decoder"] == (len(target), 1, hiddens)
    assert {f"h{i + 1}" for i in range(len(source))} | {f"s{i + 1}" for i in range(len(target))} \
        <= set(d.parts)  # fmt: skip
    assert f"{hiddens}" in d.tr(("", "")) + "".join(d.labels())
    _check_drawn(d)


def test_seq2seq_with_torch_layers_and_a_mismatched_decoder():
    d = drnn.draw_seq2seq(nn.GRU(6, 10), nn.GRU(6, 10), batch=4)
    assert d.shapes["c"] == (4, 10) and d.shapes["encoder"] == (3, 4, 10)
    with pytest.raises(ValueError, match=r"hidden size 10 \(it starts from c\), got 9"):
        drnn.draw_seq2seq(nn.GRU(6, 10), nn.GRU(6, 9))


def test_attention_pooling_computes_and_prints_its_weights():
    keys = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.2]])
    query = torch.tensor([0.1, 0.9])
    values = torch.arange(12.0).reshape(3, 4)

    def score(q, k):
        return -((q - k) ** 2).sum(dim=1) / (2 * 0.5**2)

    d = dattention.draw_attention_pooling(query, keys, values, score=score, t=_t("ko"))
    expected = torch.softmax(score(query, keys), dim=0)
    assert torch.equal(d.weights, expected)
    assert d.shapes == {"query": (2,), "keys": (3, 2), "weights": (3,), "values": (3, 4),
                        "output": (4,)}  # fmt: skip
    for i, w in enumerate(expected.tolist()):
        assert f"$\\alpha_{i + 1}$ = {w:.3f}" in d.labels()
    _check_drawn(d)
    # the default score is the scaled dot product
    d = dattention.draw_attention_pooling(query, keys)
    assert torch.allclose(d.weights, torch.softmax(keys @ query / 2**0.5, dim=0))
    with pytest.raises(ValueError, match=r"weights must be non-negative and sum to 1"):
        dattention.draw_attention_pooling(query, keys, weights=torch.tensor([0.5, 0.4, 0.0]))
    with pytest.raises(ValueError, match=r"query must have size 2 \(the keys' size\), got 3"):
        dattention.draw_attention_pooling(torch.ones(3), keys)
    with pytest.raises(ValueError, match=r"score must return one score per key, shape \(3,\)"):
        dattention.draw_attention_pooling(query, keys, score=lambda q, k: k @ q[:, None])


@pytest.mark.parametrize("valid_lens", [torch.tensor([3, 5]), torch.tensor([[1, 3], [2, 4]])])
def test_masked_softmax_figure_hides_exactly_the_keys_beyond_the_length(valid_lens):
    scores = torch.rand(2, 2, 5, generator=torch.Generator().manual_seed(1))
    d = dattention.draw_masked_softmax(scores, valid_lens, t=_t("ko"))
    assert torch.equal(d.weights, d2l.masked_softmax(scores, valid_lens))
    lens = valid_lens.reshape(2, -1).expand(2, 2)
    for b in range(2):
        visible = d.parts[f"weights{b + 1}"].visible
        assert visible.tolist() == (torch.arange(5) < lens[b][:, None]).tolist()
        hatched = [p for p in d.parts[f"weights{b + 1}"].artists if p.get_hatch()]
        assert len(hatched) == int((~torch.tensor(visible)).sum())
    assert d.shapes["weights"] == (2, 2, 5)
    _check_drawn(d)
    with pytest.raises(ValueError, match="softmax gave weight to a key beyond the valid length"):
        dattention.draw_masked_softmax(scores, valid_lens,
                                       softmax=lambda x, v: torch.softmax(x, -1))  # fmt: skip


@pytest.mark.parametrize(("batch", "queries", "keys", "hiddens", "q_size", "k_size", "v_size"),
                         [(2, 1, 10, 8, 20, 2, 4), (3, 2, 6, 16, 5, 7, 3)])  # fmt: skip
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_scoring_side_by_side_prints_the_shapes_the_modules_produce(
    batch, queries, keys, hiddens, q_size, k_size, v_size, lang
):
    additive = d2l.AdditiveAttention(hiddens, query_size=q_size, key_size=k_size)
    dot = d2l.DotProductAttention()
    d = dattention.draw_scoring(additive, dot, batch=batch, queries=queries, keys=keys,
                                query_size=q_size, key_size=k_size, value_size=v_size,
                                t=_t(lang))  # fmt: skip
    # what the modules produce, computed here without the diagram's help
    Q, K, V = torch.zeros(batch, queries, q_size), torch.zeros(batch, keys, k_size), \
        torch.zeros(batch, keys, v_size)  # fmt: skip
    out = additive(Q, K, V)
    assert d.shapes["add.W_q_out"] == tuple(additive.W_q(Q).shape) == (batch, queries, hiddens)
    assert d.shapes["add.W_k_out"] == tuple(additive.W_k(K).shape) == (batch, keys, hiddens)
    assert d.shapes["add.features"] == (batch, queries, keys, hiddens)
    assert d.shapes["add.weights"] == tuple(additive.attention_weights.shape)
    assert d.shapes["add.out"] == tuple(out.shape) == d.shapes["dot.out"]
    dot(torch.zeros(batch, queries, k_size), K, V)
    assert d.shapes["dot.weights"] == tuple(dot.attention_weights.shape)
    assert d.shapes["dot.Q"] == (batch, queries, k_size) and d.shapes["V"] == (batch, keys, v_size)
    assert {"add.W_q", "add.W_k", "add.w_v", "add.tanh", "dot.score"} <= set(d.parts)
    _check_drawn(d)


def test_scoring_needs_an_additive_module():
    with pytest.raises(TypeError, match="additive must be an attention module with W_q, W_k"):
        dattention.draw_scoring(d2l.DotProductAttention(), d2l.DotProductAttention())
    with pytest.raises(ValueError, match="keys must be a positive int, got 0"):
        dattention.draw_scoring(d2l.AdditiveAttention(4), d2l.DotProductAttention(), keys=0)


def test_alt_text_must_name_only_printed_shapes():
    d = Diagram(3, 1.5)
    d.tensor(1.5, 0.75, "X", (2, 10, 32))
    d.finish()
    d.check_alt(("X의 모양은 (2, 10, 32)", "X has shape (2, 10, 32)"))
    with pytest.raises(ValueError, match=r"does not print: \['\(2, 10\)'\]"):
        d.check_alt(("X의 모양 (2, 10, 32)", "X (2, 10)"))
    with pytest.raises(ValueError, match="alt must be a"):
        d.check_alt("X")
    with pytest.raises(ValueError, match="in Korean and in English"):
        d.check_alt(("X has shape (2, 10, 32)", "X has shape (2, 10, 32)"))


# Chapters and the diagram functions they show (issue 45); a chapter joins when it has one.
CHAPTER_DIAGRAMS = {
    "01_rnn": ["draw_unrolled", "draw_seq2seq"],
    "03_attention_pooling": ["draw_attention_pooling"],
    "04_attention_scoring": ["draw_masked_softmax", "draw_scoring"],
}


@pytest.mark.parametrize("stem", sorted(CHAPTER_DIAGRAMS))
def test_chapters_show_their_diagrams_in_both_languages_with_checked_alt_text(stem):
    from pathlib import Path

    import jupytext

    book = Path(__file__).resolve().parent.parent / "book"
    code = [c for c in jupytext.read(book / f"{stem}.md").cells if c.cell_type == "code"]
    for fn in CHAPTER_DIAGRAMS[stem]:
        assert hasattr(d2l.diagrams, fn), fn
        cells = [c for c in code if f"d2l.diagrams.{fn}(" in c.source]
        assert len(cells) == 1, (stem, fn, len(cells))
        source = cells[0].source
        assert "remove-input" in cells[0].metadata.get("tags", []), (stem, fn)
        # drawn in both languages, with alt text that check_alt holds to the figure
        assert "d2l.bilingual(" in source and "t=t" in source, (stem, fn)
        assert "alt=" in source and ".check_alt(" in source, (stem, fn)


def test_draw_finds_the_unrolled_rnn_for_recurrent_layers():
    for rnn in (d2l.RNNScratch(3, 4), nn.GRU(3, 4), nn.LSTM(3, 4)):
        d = d2l.diagrams.draw(rnn, ["I", "go"])
        assert d.shapes["h2"] == (1, 4), type(rnn).__name__


def test_outside_the_build_a_layout_problem_warns_and_the_figure_is_drawn(monkeypatch):
    monkeypatch.delenv("D2LITE_STRICT_FONTS")
    d = Diagram(4, 2)
    d.box(2, 1, "a label far too long for this box", w=0.8)
    with pytest.warns(UserWarning, match="does not fit in its frame"):
        assert d.finish() is d
    with pytest.raises(ValueError, match="does not fit in its frame"):
        d.finish(check=True)


def test_scoring_draws_a_lazy_additive_module_without_initializing_it():
    additive = d2l.AdditiveAttention(6)  # nn.LazyLinear projections, sizes not yet known
    d = dattention.draw_scoring(additive, d2l.DotProductAttention(), query_size=5, key_size=3)
    assert d.shapes["add.W_q_out"] == (2, 1, 6) and d.shapes["add.features"] == (2, 1, 10, 6)
    assert isinstance(additive.W_q, nn.LazyLinear)  # the copy ran, the module is untouched


def test_trace_copies_a_module_called_with_gradients():
    import d2lite as d2l

    attention = d2l.DotProductAttention()
    q = torch.ones(1, 2, 4, requires_grad=True)
    attention(q, torch.ones(1, 3, 4), torch.ones(1, 3, 4))  # keeps weights that are not leaves
    attention.history = [attention.attention_weights]  # also inside a container
    assert not attention.attention_weights.is_leaf
    tr = trace(attention, torch.zeros(1, 2, 4), torch.zeros(1, 5, 4), torch.zeros(1, 5, 4))
    assert tr.shapes[""] == (1, 2, 4)
    assert attention.attention_weights.shape == (1, 2, 3)  # the module is left as it was
    assert not attention.attention_weights.is_leaf

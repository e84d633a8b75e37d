"""Tests for d2lite.plotting: Hangul fonts, strict glyph checking, plots, heatmaps, bilingual."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

import d2lite as d2l  # noqa: E402
from d2lite import plotting  # noqa: E402


def _draw_text(text: str) -> None:
    fig, ax = plt.subplots()
    ax.set_title(text)
    fig.canvas.draw()
    plt.close(fig)


def test_a_korean_font_is_registered_and_used():
    assert plotting.korean_font() == "NanumGothic"
    assert matplotlib.rcParams["font.family"][:2] == ["DejaVu Sans", "NanumGothic"]
    assert matplotlib.rcParams["axes.unicode_minus"] is False


def test_hangul_renders_without_missing_glyphs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _draw_text("어텐션 가중치 (attention weights) −1.5")


def test_strict_glyphs_turns_a_missing_glyph_into_an_error():
    plotting.strict_glyphs(True)
    try:
        with pytest.raises(UserWarning, match="missing from"):
            _draw_text("\u1200\u1201")  # Ethiopic: in neither NanumGothic nor DejaVu Sans
    finally:
        plotting.strict_glyphs(True)


def test_log_axes_and_math_render_next_to_hangul():
    plotting.strict_glyphs(True)
    fig, ax = plt.subplots()
    ax.semilogy([1, 2, 3], [1e-3, 1e-1, 1.0])  # tick labels 10^-3 use math text and U+2212
    ax.set_title("거리 T − t에 따른 기울기")
    ax.set_xlabel("$h_1 - h_2$")
    fig.canvas.draw()
    plt.close(fig)


def test_hangul_inside_math_text_is_reported():
    # a label with $...$ is math text throughout, and math text has no Hangul font: write
    # such labels in Unicode ("거리 T − t") instead
    plotting.strict_glyphs(True)
    with pytest.raises(UserWarning, match="does not have a glyph"):
        _draw_text("거리 $T - t$")
    plt.close("all")


def test_strict_glyphs_catches_a_glyph_missing_in_math_text():
    plotting.strict_glyphs(True)
    with pytest.raises(UserWarning, match="does not have a glyph"):
        _draw_text("$\u1200$")
    plt.close("all")


def test_plot_validates_lengths():
    with pytest.raises(ValueError, match="legend has 1 entries for 2 curves"):
        d2l.plot(torch.arange(3.0), [torch.zeros(3), torch.ones(3)], legend=["a"])
    with pytest.raises(ValueError, match=r"x has shape \(3,\) but y has shape \(4,\)"):
        d2l.plot(torch.arange(3.0), torch.zeros(4))
    plt.close("all")


def test_plot_returns_nothing_for_jupyter_to_echo():
    plt.close("all")
    assert d2l.plot(torch.arange(3.0), torch.ones(3), figsize=(4, 2)) is None
    assert tuple(plt.gcf().get_size_inches()) == (4, 2)
    fig, ax = plt.subplots()
    assert d2l.plot([0, 1], [[0, 1]], axes=ax) is None
    assert len(ax.get_lines()) == 1
    plt.close("all")


def test_show_heatmaps_draws_a_grid_and_checks_dimensions():
    plt.close("all")
    scale = torch.tensor([1.0, 2.0]).reshape(1, 2, 1, 1)
    matrices = torch.eye(5).reshape(1, 1, 5, 5).expand(2, 2, 5, 5) * scale
    result = d2l.show_heatmaps(matrices, "keys", "queries", titles=["a", "b"], figsize=(5, 4))
    assert result is None  # nothing for Jupyter to echo a second time
    fig = plt.gcf()
    assert tuple(fig.get_size_inches()) == (5, 4)  # figsize is the whole figure, as in d2l
    assert len(fig.axes) == 4 + 1  # four heatmaps and the one shared colour bar
    assert {im.get_clim() for ax in fig.axes[:4] for im in ax.get_images()} == {(0.0, 2.0)}
    plt.close(fig)
    d2l.show_heatmaps(matrices, "keys", "queries", shared_scale=False)
    fig = plt.gcf()
    assert len(fig.axes) == 4 + 4  # one colour bar per panel
    clims = [im.get_clim() for ax in fig.axes for im in ax.get_images()]
    assert clims == [(0.0, 1.0), (0.0, 2.0), (0.0, 1.0), (0.0, 2.0)]
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\(rows, cols, queries, keys\), got 2 dimension"):
        d2l.show_heatmaps(torch.eye(3), "keys", "queries")
    with pytest.raises(ValueError, match="got 1 titles for 2 columns"):
        d2l.show_heatmaps(torch.zeros(1, 2, 3, 3), "k", "q", titles=["only one"])
    with pytest.raises(ValueError, match="figsize must be two positive numbers"):
        d2l.show_heatmaps(torch.zeros(1, 1, 3, 3), "k", "q", figsize=(0, 2))
    plt.close("all")


def test_bilingual_draws_once_per_language(monkeypatch):
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,en")
    seen = []

    @d2l.bilingual
    def result(t):
        seen.append(t("가", "A"))
        d2l.plot([0, 1], [[0, 1]], xlabel=t("시간", "time"))
        return len(seen)

    assert seen == ["가", "A"] and result == 2
    assert plt.get_fignums() == []  # every drawn figure was closed after rendering


def test_bilingual_rejects_bad_input(monkeypatch):
    with pytest.raises(ValueError, match="made no Matplotlib figure"):
        d2l.bilingual(lambda t: None)
    with pytest.raises(ValueError, match="needs a drawing function"):
        d2l.bilingual("not callable")
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,fr")
    with pytest.raises(ValueError, match="D2LITE_FIG_LANG"):
        plotting.figure_langs()


def test_bilingual_rejects_a_figure_wider_than_the_column(monkeypatch):
    monkeypatch.setenv("D2LITE_FIG_LANG", "en")
    with pytest.raises(ValueError, match=r"the figure is \d+\.\d in wide; the text column"):
        d2l.bilingual(lambda t: plt.subplots(figsize=(9, 2)))
    assert plt.get_fignums() == []
    d2l.bilingual(lambda t: plt.subplots(figsize=(7, 2)))  # the column width is fine


def test_bilingual_alt_text_per_language(monkeypatch):
    import importlib

    plot_module = importlib.import_module("d2lite.plotting")
    seen = {}
    monkeypatch.setattr(plot_module, "_display",
                        lambda images, captions, alts, diagram=False:
                        seen.update(captions=captions, alts=alts))
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,en")
    d2l.bilingual(lambda t: plt.subplots(figsize=(3, 2)), caption=("캡션", "caption"),
                  alt=("파란 곡선 하나", "one blue curve"))
    assert seen["alts"] == {"ko": "파란 곡선 하나", "en": "one blue curve"}
    d2l.bilingual(lambda t: plt.subplots(figsize=(3, 2)), caption=("캡션", "caption"))
    assert seen["alts"] == {"ko": "캡션", "en": "caption"}  # the caption by default
    with pytest.raises(ValueError, match="alt must be a"):
        d2l.bilingual(lambda t: None, alt=("only one",))


def test_bilingual_marks_a_diagram_of_the_architecture(monkeypatch):
    import importlib

    plot_module = importlib.import_module("d2lite.plotting")
    seen = []
    monkeypatch.setattr(plot_module, "_display",
                        lambda images, captions, alts, diagram=False: seen.append(diagram))
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,en")

    def box(t):
        d = d2l.diagrams.Diagram(3, 1.2, t=t)
        d.box(1.5, 0.6, ("선형층", "linear"))
        return d.finish()

    d2l.bilingual(box, caption=("상자", "a box"))
    d2l.bilingual(lambda t: plt.subplots(figsize=(3, 2)), caption=("곡선", "a curve"))
    assert seen == [True, False]

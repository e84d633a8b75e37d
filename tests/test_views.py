"""d2l.AttentionView: self-contained HTML with escaped labels, argument checks, and a PNG."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

import d2lite as d2l
from d2lite import plotting


def weights(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.softmax(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), -1)


def view_data(html: str) -> dict:
    raw = re.search(r'<script type="application/json" class="av-data">(.*?)</script>', html, re.S)
    return json.loads(raw.group(1).replace("<\\/", "</"))


def test_html_is_self_contained_and_scoped():
    html = d2l.AttentionView(weights(2, 3, 4, 5), list("abcd"), list("vwxyz"))._repr_html_()
    assert html.startswith('<div class="attention-view"') and html.endswith("</div>")
    # nothing fetched: no external script, stylesheet, image or font, no require.js
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", html)
    for word in ("http://", "https://", "require(", "requirejs", "@import", "url(", "fetch("):
        assert word not in html, word
    uid = re.search(r'data-av="([0-9a-f]+)"', html).group(1)
    assert f'[data-av="{uid}"]' in html  # the script finds only its own view
    again = d2l.AttentionView(weights(2, 3, 4, 5), list("abcd"), list("vwxyz"))._repr_html_()
    assert re.search(r'data-av="([0-9a-f]+)"', again).group(1) != uid  # each render its own
    assert html.count("data-query=") == 4 and html.count('data-key="') == 5
    assert html.count('<select data-axis="0"') == 1 and html.count('<select data-axis="1"') == 1
    assert 'class="av-temp"' not in html  # no scores, no slider


def test_token_labels_are_escaped_not_run():
    evil = ["<script>alert(1)</script>", "a&b", '"q"', "</div>"]
    view = d2l.AttentionView(weights(4, 4), evil, evil)
    html = view._repr_html_()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "a&amp;b" in html
    assert html.count("<script") == 2  # the data and the view's own script
    assert html.count("</div>") == html.count("<div")  # "</div>" as a token closes nothing


def test_data_holds_the_weights_and_scores():
    s = torch.randn(2, 3, 4) * 3
    s[0, 0, 3] = float("-inf")
    w = torch.softmax(s / 2, -1)
    view = d2l.AttentionView(w, list("abc"), list("wxyz"), scores=s, temperature=2.0,
                             titles=[("헤드", "head")], caption=("캡션", "caption"))  # fmt: skip
    html = view._repr_html_()
    data = view_data(html)
    assert data["lead"] == [2] and (data["q"], data["k"]) == (3, 4) and data["tau"] == 2.0
    np.testing.assert_allclose(np.array(data["w"]).reshape(2, 3, 4), w.numpy(), atol=1e-6)
    assert data["s"][3] is None  # -inf travels as null
    assert 'class="av-temp"' in html and ">2.00</output>" in html
    assert "캡션" in html and "caption" in html and "헤드" in html


def test_labels_follow_the_language_switch(monkeypatch):
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,en")
    both = d2l.AttentionView(weights(2, 3, 3), list("abc"), list("abc"))._repr_html_()
    assert '<span class="lang-ko" lang="ko">헤드</span>' in both
    assert '<span class="lang-en" lang="en">head</span>' in both
    assert both.count('class="lang-ko"') == both.count('class="lang-en"')
    monkeypatch.setenv("D2LITE_FIG_LANG", "en")
    en = d2l.AttentionView(weights(2, 3, 3), list("abc"), list("abc"))._repr_html_()
    assert "헤드" not in en and "lang-ko" not in en and "head" in en


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": torch.ones(3)}, r"shape \(\.\.\., queries, keys\)"),
        ({"weights": torch.zeros(0, 3)}, "must not be empty"),
        ({"weights": -torch.ones(2, 3)}, "non-negative"),
        ({"weights": torch.full((2, 3), float("nan"))}, "finite"),
        ({"weights": torch.ones(2, 3, dtype=torch.complex64)}, "real"),
        ({"weights": [["a", "b"]]}, "real numbers"),
        ({"queries": ["a"]}, r"one label per query.*got 1"),
        ({"keys": "abc"}, "sequence of 3 token labels"),
        ({"keys": ["a", None, "c"]}, "must be strings"),
        ({"titles": ["layer", "head"]}, "each of the 0 leading axes"),
        ({"caption": 3}, "caption must be a string or a"),
        ({"temperature": 0}, r"temperature must be a finite real number > 0"),
        ({"temperature": float("inf")}, "temperature"),
        ({"digits": 2.5}, "digits must be an int"),
        ({"digits": 9}, r"digits must be an int in \[0, 6\]"),
        ({"scores": torch.zeros(3, 2)}, "scores must have the shape of weights"),
        ({"scores": torch.full((2, 3), float("nan"))}, "finite, or -inf"),
        ({"scores": torch.full((2, 3), float("-inf"))}, "at least one key"),
        ({"scores": torch.tensor([[5.0, 0, 0], [0, 0, 5.0]])}, "softmax"),
    ],
)
def test_bad_arguments_name_what_was_expected(kwargs, message):
    args = {"weights": torch.full((2, 3), 1 / 3), "queries": ["a", "b"], "keys": ["x", "y", "z"]}
    args.update(kwargs)
    w, q, k = args.pop("weights"), args.pop("queries"), args.pop("keys")
    with pytest.raises(ValueError, match=message):
        d2l.AttentionView(w, q, k, **args)


def test_too_many_values_are_refused_before_rendering():
    with pytest.raises(ValueError, match="at most"):
        d2l.AttentionView(np.zeros((64, 64, 64)), ["q"] * 64, ["k"] * 64)


def test_png_is_a_png_with_hangul_labels(monkeypatch):
    monkeypatch.setenv("D2LITE_FIG_LANG", "ko,en")
    view = d2l.AttentionView(weights(2, 4, 3, 5), ["내", "친구", "<eos>"], list("abcde"))
    png = view._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert 100 < width <= 100 * plotting.MAX_WIDTH_IN  # fits the text column at 100 dpi
    html = view._repr_html_()
    assert html.count('src="data:image/png;base64,') == 2  # one per language, for print


def test_numpy_and_lists_work_and_repr_is_short():
    view = d2l.AttentionView(np.eye(3), [1, 2, 3], ["a", "b", "c"])
    assert view.shape == (3, 3) and repr(view) == "AttentionView(shape=(3, 3))"
    assert d2l.AttentionView([[0.5, 0.5]], ["q"], ["a", "b"]).shape == (1, 2)


def test_jupyter_gets_html_and_png_in_one_bundle():
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(d2l.AttentionView(weights(2, 2, 3, 4), list("abc"),
                                                          list("wxyz")))  # fmt: skip
    assert {"text/html", "image/png", "text/plain"} <= set(data)
    assert data["text/html"].startswith('<div class="attention-view"')
    assert data["image/png"][:8] == b"\x89PNG\r\n\x1a\n"

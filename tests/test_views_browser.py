"""d2l.AttentionView in a real browser (headless Chromium, driven as tests/test_site.py drives it).

A small page holding views made by ``AttentionView`` (no website build needed) is served on
127.0.0.1 by tools/website.py's server, with the site's own language-switch stylesheet. The
tests hover, tap and focus tokens and compare the values the page shows with the Python
weights, move the layer/head selectors and the temperature slider, and check that nothing
leaves the page, no console error appears and nothing overflows a 390-px phone.
Run them with ``python -m pytest -m book tests/test_views_browser.py`` (seconds: no site build).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import d2lite as d2l
from tools.core import ROOT
from tools.website import serve

try:  # the website's theme, whose stylesheet the views must live with: never a silent skip
    import pydata_sphinx_theme as pydata
except ImportError as error:
    raise ImportError("tests/test_views_browser.py needs pydata-sphinx-theme (it comes with "
                      "jupyter-book from requirements.txt): run make install") from error

pytestmark = pytest.mark.book

LAYERS, HEADS, Q, K = 2, 3, 4, 6
QUERIES = ["내", "친구는", "<script>window.pwned=1</script>", "<eos>"]
KEYS = ["My", "friend", "reads", "a", "book", "<eos>"]
TAU0 = 2.0


def _weights():
    g = torch.Generator().manual_seed(0)
    heads = torch.softmax(3 * torch.randn(LAYERS, HEADS, Q, K, generator=g), -1)
    scores = 4 * torch.randn(Q, K, generator=g)
    scores[0, -1] = float("-inf")  # a masked key
    return heads, scores


HEADS_W, SCORES = _weights()
TEMP_W = torch.softmax(SCORES / TAU0, -1)


def page_html(lang_mode: str = "ko") -> str:
    heads = d2l.AttentionView(HEADS_W, QUERIES, KEYS, titles=[("층", "layer"), ("헤드", "head")],
                              caption=("여러 헤드", "several heads"))  # fmt: skip
    temp = d2l.AttentionView(TEMP_W, QUERIES, KEYS, scores=SCORES, temperature=TAU0)
    body = heads._repr_html_() + temp._repr_html_()
    return (
        f'<!doctype html><html lang="ko" data-book-lang="{lang_mode}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="lang-switch.css">'
        f"<title>views</title></head><body style='margin:8px'>{body}</body></html>"
    )


@pytest.fixture(scope="module")
def view_server(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("views")
    shutil.copy(ROOT / "_static" / "lang-switch.css", folder / "lang-switch.css")
    for mode in ("ko", "en", "both"):
        (folder / f"{mode}.html").write_text(page_html(mode), encoding="utf-8")
    with serve(folder) as url:
        yield url


def open_views(context, server: str, mode: str = "ko", width: int | None = None):
    page = context.new_page()
    page.errors = []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    if width:
        page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{server}/{mode}.html", wait_until="load")
    page.wait_for_selector(".attention-view[data-ready]")
    return page


def view(page, n: int):
    return page.locator(".attention-view").nth(n)


def readout(page, n: int) -> dict[int, str]:
    """The values the n-th view shows: {key or query index: text}."""
    items = view(page, n).locator(".av-readout .av-item")
    return {
        int(items.nth(i).get_attribute("data-key") or items.nth(i).get_attribute("data-query")):
        items.nth(i).locator(".av-val").inner_text()
        for i in range(items.count())
    }  # fmt: skip


def shown(values) -> dict[int, str]:
    return {i: f"{float(v):.2f}" for i, v in enumerate(values)}


def test_hovering_a_query_shows_its_weights_over_the_keys(context, view_server):
    page = open_views(context, view_server)
    for i in range(Q):
        view(page, 0).locator(f'.av-query[data-query="{i}"]').hover()
        assert readout(page, 0) == shown(HEADS_W[0, 0, i])
        cells = view(page, 0).locator(".av-cell.av-on")
        assert cells.count() == K
        texts = [cells.nth(j).inner_text() for j in range(K)]
        assert texts == list(shown(HEADS_W[0, 0, i]).values())
    assert page.evaluate("window.pwned") is None  # the token <script> is shown, not run
    label = view(page, 0).locator('.av-query[data-query="2"]').inner_text()
    assert label == QUERIES[2]
    assert page.errors == [] and context.outside_requests == []


def test_hovering_a_key_shows_its_column(context, view_server):
    page = open_views(context, view_server)
    view(page, 0).locator('.av-key[data-key="4"]').hover()
    assert readout(page, 0) == shown(HEADS_W[0, 0, :, 4])


def test_tap_and_keyboard_focus_select_a_query(context, view_server):
    page = open_views(context, view_server)
    view(page, 0).locator('.av-query[data-query="1"]').click()
    assert readout(page, 0) == shown(HEADS_W[0, 0, 1])
    view(page, 0).locator('.av-query[data-query="1"]').focus()
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("document.activeElement.dataset.query")
    assert focused == "2"
    assert readout(page, 0) == shown(HEADS_W[0, 0, 2])


def test_layer_and_head_selectors_change_the_view(context, view_server):
    page = open_views(context, view_server)
    v = view(page, 0)
    v.locator('select[data-axis="0"]').select_option(index=1)
    v.locator('select[data-axis="1"]').select_option(index=2)
    v.locator('.av-query[data-query="3"]').hover()
    assert readout(page, 0) == shown(HEADS_W[1, 2, 3])
    first_cell = v.locator('.av-cell[data-q="0"][data-k="0"]').get_attribute("data-value")
    assert first_cell == f"{HEADS_W[1, 2, 0, 0]:.2f}"
    assert readout(page, 1) == {}  # the other view kept its own state


def test_the_temperature_slider_reapplies_the_softmax(context, view_server):
    page = open_views(context, view_server)
    v = view(page, 1)
    v.locator('.av-query[data-query="0"]').hover()
    assert readout(page, 1) == shown(TEMP_W[0])
    assert readout(page, 1)[K - 1] == "0.00"  # the masked key
    for value, factor in (("1", 2.0), ("-2", 0.25), ("0", 1.0)):
        v.locator("input.av-temp").fill(value)
        tau = TAU0 * factor
        assert v.locator("output.av-tau").inner_text() == f"{tau:.2f}"
        assert readout(page, 1) == shown(torch.softmax(SCORES[0] / tau, -1))
    sharp, flat = (np.max(torch.softmax(SCORES[0] / t, -1).numpy()) for t in (0.25, 16))
    assert sharp > flat  # the slider's two ends differ as the prose says


@pytest.mark.parametrize("mode", ["ko", "en", "both"])
def test_labels_follow_the_language_switch_and_fit_a_phone(context, view_server, mode):
    page = open_views(context, view_server, mode, width=390)
    labels = view(page, 0).locator(".av-controls label").first.inner_text()
    hint = view(page, 0).locator(".av-readout").inner_text()
    if mode == "ko":
        assert "층" in labels and "layer" not in labels and "마우스" in hint and "Hover" not in hint
    elif mode == "en":
        assert "layer" in labels and "층" not in labels and "Hover" in hint and "마우스" not in hint
    else:
        assert "층" in labels and "layer" in labels
    view(page, 0).locator('.av-query[data-query="0"]').click()
    overflow = page.evaluate(
        """() => {
        const w = document.documentElement.clientWidth;
        const out = [];
        for (const el of document.querySelectorAll('.attention-view, .attention-view *')) {
          if (el.closest('.av-scroll') && !el.classList.contains('av-scroll')) continue;
          const r = el.getBoundingClientRect();
          if (r.width && (r.right > w + 0.5 || r.left < -0.5)) out.push(el.className);
        }
        return [document.documentElement.scrollWidth, w, out];
      }"""
    )
    scroll_width, width, outside = overflow
    assert scroll_width <= width and outside == [], overflow
    assert page.errors == [] and context.outside_requests == []


def test_a_view_shown_twice_works_in_both_places(context, view_server):
    """A re-rendered output (Jupyter, Colab) can repeat the same HTML: each copy works."""
    page = open_views(context, view_server)
    html = d2l.AttentionView(HEADS_W[0, 0], QUERIES, KEYS)._repr_html_()
    page.evaluate(
        """(html) => {
        for (let n = 0; n < 2; n++) {
          const box = document.createElement('div');
          box.innerHTML = html;  // scripts inserted this way do not run: re-create them
          for (const old of box.querySelectorAll('script:not([type])')) {
            const s = document.createElement('script');
            s.textContent = old.textContent;
            old.replaceWith(s);
          }
          document.body.appendChild(box);
        }
      }""",
        html,
    )
    for n in (2, 3):
        view(page, n).locator('.av-query[data-query="1"]').hover()
        assert readout(page, n) == shown(HEADS_W[0, 0, 1])
    assert page.errors == []


# The contrast of an element's text with what lies under it: its own background blended over
# its ancestors' (alpha too), as WCAG 2 defines the ratio. Shared with tests/test_site.py.
CONTRAST_JS = """(el) => {
  const rgba = (c) => (c.match(/[\\d.]+/g) || [0, 0, 0, 0]).map(Number);
  const under = [];
  for (let e = el; e; e = e.parentElement) under.push(rgba(getComputedStyle(e).backgroundColor));
  let bg = [255, 255, 255];
  for (const c of under.reverse()) {
    const a = c.length > 3 ? c[3] : 1;
    bg = bg.map((v, i) => a * c[i] + (1 - a) * v);
  }
  const fg = rgba(getComputedStyle(el).color);
  const fa = fg.length > 3 ? fg[3] : 1;
  const text = bg.map((v, i) => fa * fg[i] + (1 - fa) * v);
  const lum = (c) => {
    const x = c.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * x[0] + 0.7152 * x[1] + 0.0722 * x[2];
  };
  const [a, b] = [lum(text), lum(bg)].sort((p, q) => q - p);
  return (a + 0.05) / (b + 0.05);
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_values_and_labels_are_readable_in_light_and_dark(context, view_server, theme):
    page = open_views(context, view_server)
    if theme == "dark":  # the theme's dark mode: a dark page, light text (pydata's colours)
        page.evaluate("""() => {
            document.body.style.background = '#14181e';
            document.body.style.color = '#ced6dd';
            document.documentElement.dataset.theme = 'dark';
        }""")
    for n, query in ((0, 0), (0, 2), (1, 1)):
        view(page, n).locator(f'.av-query[data-query="{query}"]').hover()
        texts = view(page, n).locator(
            ".av-cell.av-on, .av-val, .av-tok, .av-caption span:not(.lang-sep), .av-head"
        )
        ratios = texts.evaluate_all(f"(els) => els.map({CONTRAST_JS})")
        assert min(ratios) >= 4.5, (theme, n, sorted(ratios)[:3])


def theme_page(theme: str) -> str:
    """A chapter's outputs as the built site marks them up (myst-nb's ``output text_html`` inside
    ``cell_output``), styled by the installed theme's CSS and the book's own."""
    figure = (
        '<figure class="d2l-figure lang-ko" lang="ko"><img alt="그림" src="data:image/png;base64,'
        + __import__("base64").b64encode(TEMP_VIEW._png("ko")).decode()
        + '" style="max-width:100%"><figcaption>그림 설명: 어텐션 가중치</figcaption></figure>'
    )
    outputs = "".join(
        f'<div class="cell_output docutils container"><div class="output text_html">{html}'
        "</div></div>"
        for html in (figure, TEMP_VIEW._repr_html_())
    )
    return (
        f'<!doctype html><html lang="ko" data-theme="{theme}" data-book-lang="ko"><head>'
        '<meta charset="utf-8"><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="pydata-sphinx-theme.css">'
        '<link rel="stylesheet" href="book.css"><link rel="stylesheet" href="lang-switch.css">'
        '</head><body><div class="bd-content"><article class="bd-article">'
        f"{outputs}</article></div></body></html>"
    )


TEMP_VIEW = d2l.AttentionView(TEMP_W, QUERIES, KEYS, scores=SCORES, temperature=TAU0,
                              caption=("온도를 바꿔 보세요", "change the temperature"))  # fmt: skip


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_captions_meet_4_5_to_1_with_the_themes_own_css(context, tmp_path, theme):
    """The theme paints HTML outputs as a light panel in dark mode; the book's CSS must keep
    figure captions and views readable there (they were 1.7:1)."""
    theme_css = next(Path(pydata.__file__).parent.rglob("pydata-sphinx-theme.css"))
    shutil.copy(theme_css, tmp_path / "pydata-sphinx-theme.css")
    for name in ("book.css", "lang-switch.css"):
        shutil.copy(ROOT / "_static" / name, tmp_path / name)
    (tmp_path / "index.html").write_text(theme_page(theme), encoding="utf-8")
    with serve(tmp_path) as url:
        page = context.new_page()
        page.goto(f"{url}/index.html", wait_until="load")
        page.wait_for_selector(".attention-view[data-ready]")
        page.locator('.av-query[data-query="1"]').hover()
        texts = page.locator("figcaption, .av-caption .lang-ko, .av-tok, .av-val, .av-cell.av-on")
        ratios = {texts.nth(i).inner_text()[:20]: texts.nth(i).evaluate(CONTRAST_JS)
                  for i in range(texts.count()) if texts.nth(i).is_visible()}  # fmt: skip
        assert ratios and min(ratios.values()) >= 4.5, sorted(ratios.items(), key=lambda x: x[1])
        panels = page.eval_on_selector_all(
            ".output.text_html", "els => els.map(e => getComputedStyle(e).backgroundColor)"
        )
        assert panels == ["rgba(0, 0, 0, 0)"] * 2  # on the page itself, not the theme's panel
        assert context.outside_requests == []


# -- the views' script as a file -------------------------------------------------------------

VIEW_SCRIPT = ROOT / "d2lite" / "views_assets" / "attention_view.js"


def node_path() -> str:
    """Node.js, as D2LITE_NODE names it or as found on PATH: it checks the views' script
    beside the browser (a syntax error there would only show as a view that never starts)."""
    path = os.environ.get("D2LITE_NODE") or shutil.which("node")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(
            f"no node at {path or 'PATH'}: the views' script is checked with `node --check`; "
            "install Node.js (Debian: apt-get install nodejs) or point D2LITE_NODE at a node "
            "executable"
        )
    return path


def test_the_views_script_passes_node_check(tmp_path):
    checked = subprocess.run([node_path(), "--check", str(VIEW_SCRIPT)], capture_output=True,
                             text=True, timeout=60)  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    # the check can fail: the same script with one brace missing does not pass
    broken = tmp_path / "broken.js"
    broken.write_text(VIEW_SCRIPT.read_text(encoding="utf-8").replace("{", "", 1), "utf-8")
    checked = subprocess.run([node_path(), "--check", str(broken)], capture_output=True,
                             text=True, timeout=60)  # fmt: skip
    assert checked.returncode != 0 and "SyntaxError" in checked.stderr, checked.stderr


def test_the_script_is_es5_and_is_what_the_views_embed():
    """The script promises ES5 (views also run in old notebook front ends): no arrow function,
    let/const, class or template string outside its comments. A view embeds the package file
    as it is, its placeholder replaced by the render's id."""
    source = VIEW_SCRIPT.read_text(encoding="utf-8")
    code = re.sub(r"//[^\n]*", "", source)
    assert code != source  # the comments are gone, the code is left
    for pattern in (r"=>", r"\b(let|const|class)\s", "`"):
        assert not re.search(pattern, code), pattern
    html = d2l.AttentionView(HEADS_W, QUERIES, KEYS)._repr_html_()
    uid = re.search(r'data-av="([0-9a-f]+)"', html).group(1)
    assert f"<script>{source.replace('__ID__', uid)}</script>" in html
    css = (ROOT / "d2lite" / "views_assets" / "attention_view.css").read_text(encoding="utf-8")
    assert f"<style>{css}</style>" in html

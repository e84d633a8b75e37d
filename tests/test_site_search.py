"""The website's search, figures and download menu, in a real browser (Chromium via
Playwright, as tests/test_site.py; the same fixtures).

* Search snippets are article text: no menu or button labels, no raw TeX.
* A page whose title holds the query is listed first (트랜스포머 → book/08_transformer).
* A figure opens full size on click or Enter and closes with Esc or a click.
* One search box, on a desktop screen and on a phone.
* The download menu offers the book's two PDFs (``make pdf``) instead of printing the page.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlparse

import pytest
from test_site import open_page, sample_chapter, search

pytestmark = pytest.mark.book

MENU_TEXT = ["둘 다", "English한국어", "한국어English", "코드 보기", "Show code cell", "Ctrl+K",
             ".ipynb", "PDF (", "검색", "Download", "다운로드"]
RAW_TEX = re.compile(r"\\[()\[\]]|\\[A-Za-z]+|\$\$?[^$\s]")


def search_snippets(context, server: str, query: str) -> list[tuple[str, str]]:
    """(docname, snippet) of each result the search page lists, once the snippets are in."""
    page = context.new_page()
    page.goto(f"{server}/search.html?q={quote(query)}", wait_until="load")
    page.wait_for_function(
        """() => {
        const s = document.querySelector("#search-results .search-summary, p.search-summary");
        return s && /\\d|found|no /i.test(s.textContent);
      }"""
    )
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll("#search-results ul.search li"))
          .every((li) => li.querySelector("p.context"))"""
    )
    items = page.eval_on_selector_all(
        "#search-results ul.search li",
        """els => els.map(li => [li.querySelector("a").href,
                                (li.querySelector("p.context") || {}).textContent || ""])""",
    )
    page.close()
    return [(urlparse(h).path.lstrip("/").removesuffix(".html"), s) for h, s in items]


@pytest.mark.parametrize("query", ["어텐션", "attention", "이미지", "패치", "softmax"])
def test_search_snippets_are_article_text_without_menus_or_tex(context, server, query):
    results = search_snippets(context, server, query)
    assert results, f"nothing found for {query!r}"
    for docname, snippet in results:
        assert snippet.strip(), (docname, "empty snippet")
        menu = [m for m in MENU_TEXT if m in snippet]
        assert not menu, (docname, menu, snippet)
        tex = RAW_TEX.findall(snippet)
        assert not tex, (docname, tex, snippet)


def test_the_vit_snippet_shows_its_formula_as_text(context, server):
    # 09_vit's prose has $96\times 96$ right after 키워: the snippet reads "96 × 96".
    snippets = [s for d, s in search_snippets(context, server, "키워") if d == "book/09_vit"]
    assert snippets, "book/09_vit not found for 키워"
    assert "96 × 96" in snippets[0], snippets[0]


@pytest.mark.parametrize(
    "query, first",
    [
        ("트랜스포머", "book/08_transformer"),
        ("transformer", "book/08_transformer"),
        ("용어집", "book/glossary"),
        ("멀티헤드 어텐션", "book/06_multihead"),
    ],
)
def test_a_page_titled_by_the_query_ranks_first(context, server, query, first):
    found = search(context, server, query)
    assert found and found[0] == first, f"searching {query!r} listed {found[:5]}"


def test_a_figure_opens_full_size_and_closes(context, server):
    docname = sample_chapter()
    page = open_page(context, server, docname)
    figure = page.locator("figure.d2l-figure img.lightbox-target:visible").first
    figure.scroll_into_view_if_needed()
    src = figure.get_attribute("src")
    assert figure.get_attribute("tabindex") == "0" and figure.get_attribute("role") == "button"

    figure.click()
    overlay = page.locator(".lightbox-overlay")
    assert overlay.is_visible()
    assert overlay.get_attribute("role") == "dialog"
    assert page.locator(".lightbox-overlay img").get_attribute("src") == src
    inline = figure.bounding_box()
    shown = page.evaluate(
        """() => {
        const img = document.querySelector(".lightbox-overlay img");
        const r = img.getBoundingClientRect();
        const k = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
        return [img.naturalWidth * k, img.naturalHeight * k];
      }"""
    )
    # Enlarged: as wide as the screen allows (or as tall), well beyond the figure in the page.
    assert shown[0] > 1.3 * inline["width"], (shown, inline)
    assert shown[0] > 0.8 * 1280 or shown[1] > 0.7 * 900, shown
    assert page.evaluate("document.activeElement.className") == "lightbox-close"
    page.keyboard.press("Escape")
    assert page.locator(".lightbox-overlay").count() == 0
    assert page.evaluate("document.activeElement.tagName") == "IMG"  # focus is back

    page.keyboard.press("Enter")  # keyboard: the focused figure opens again
    assert page.locator(".lightbox-overlay").is_visible()
    page.mouse.click(10, 10)  # a click anywhere closes it
    assert page.locator(".lightbox-overlay").count() == 0


@pytest.mark.parametrize("width", [1280, 390])
def test_one_search_box(browser, server, width):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{sample_chapter()}.html", wait_until="load")
        page.wait_for_timeout(300)
        visible = page.evaluate(
            """() => Array.from(document.querySelectorAll(
                ".search-button-field, .search-button, form.bd-search"))
              .filter((e) => {
                const r = e.getBoundingClientRect();
                return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden";
              }).map((e) => e.parentElement.className)"""
        )
    finally:
        ctx.close()
    assert len(visible) == 1, visible


def test_the_download_menu_offers_the_two_pdfs(context, server):
    page = open_page(context, server, sample_chapter())
    links = page.eval_on_selector_all(
        ".dropdown-download-buttons a", "els => els.map(e => [e.textContent.trim(), e.href])"
    )
    pdfs = {text: urlparse(href).path for text, href in links if href.endswith(".pdf")}
    assert pdfs == {
        "PDF (한국어)": "/pdf/attention-transformers-ko.pdf",
        "PDF (English)": "/pdf/attention-transformers-en.pdf",
    }, links
    assert page.locator(".dropdown-download-buttons button[onclick*='print']").count() == 0

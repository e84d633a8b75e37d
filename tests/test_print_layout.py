"""The printed layout, checked in the browser as tools/pdf.py prepares each page for print.

At the paper's text width (print media) and on a 390-px phone, no display equation is wider
than its box; printed code is broken only where tools/pdf.py marks it; narrower than any
phone, an equation that must scroll shows that it does. These need the built site, not the
PDFs (tests/test_pdf.py), so that they can run beside the printing on another worker.
"""

from __future__ import annotations

import pytest

from tools import pdf as book_pdf

pytestmark = pytest.mark.book


# -- equations and code at the printed width and on a phone -----------------------------------

# Visible display equations wider than their box: (start of the TeX, equation px, box px).
WIDE_MATH_JS = """() => Array.from(
    document.querySelectorAll("article mjx-container[display='true']"))
  .filter((c) => c.getClientRects().length && c.querySelector("mjx-math"))
  .map((c) => [c, c.querySelector("mjx-math").getBoundingClientRect().width])
  .filter(([c, width]) => width > c.clientWidth + 1)
  .map(([c, width]) => [(c.closest("div.math") || c).textContent.slice(0, 40),
                        Math.round(width), c.clientWidth])"""

# Code blocks whose lines the browser wraps (more lines shown than the text has), after
# tools/pdf.py broke the long ones at a space: their first line.
SOFT_WRAPPED_CODE_JS = """() => Array.from(document.querySelectorAll("article pre"))
  .filter((pre) => pre.getClientRects().length)
  .filter((pre) => {
    const probe = pre.cloneNode(false);
    pre.after(probe);
    probe.textContent = "x";
    const one = probe.getBoundingClientRect().height;
    probe.textContent = "x\\nx";
    const step = probe.getBoundingClientRect().height - one;
    probe.remove();
    const shown = Math.round((pre.getBoundingClientRect().height - one) / step) + 1;
    const lines = pre.textContent.replace(/\\n$/, "").split("\\n");
    const oneToken = lines.some((l) => !/\\S\\s+\\S/.test(l.trim()) && l.length > 60);
    return shown > lines.length && !oneToken;
  })
  .map((pre) => pre.textContent.split("\\n")[0].slice(0, 60))"""


def _pages_in(browser, lang: str, **context_options):
    context = browser.new_context(locale=lang, **context_options)
    context.add_init_script(f"localStorage.setItem('{book_pdf.LANG_KEY}', '{lang}');")
    context.set_default_timeout(60_000)
    return context


def test_display_equations_fit_the_printed_column(browser, server):
    wide = {}
    for lang in book_pdf.LANGS:
        context = _pages_in(browser, lang,
                            viewport={"width": book_pdf.PRINT_WIDTH_PX, "height": 1400})
        try:
            page = context.new_page()
            page.emulate_media(media="print")
            for docname in book_pdf.toc_pages():
                page.goto(f"{server}/{docname}.html", wait_until="load")
                book_pdf.prepare(page, lang)
                if found := page.evaluate(WIDE_MATH_JS):
                    wide[f"{lang} {docname}"] = found
        finally:
            context.close()
    assert not wide, f"display equations wider than the printed column: {wide}"


def test_display_equations_fit_a_phone(browser, server):
    wide = {}
    for lang in book_pdf.LANGS:
        context = _pages_in(browser, lang, viewport={"width": 390, "height": 844},
                            is_mobile=True, has_touch=True)
        try:
            page = context.new_page()
            for docname in book_pdf.toc_pages():
                page.goto(f"{server}/{docname}.html", wait_until="load")
                page.wait_for_function(
                    "() => document.documentElement.dataset.mathFitted === '1'")
                if found := page.evaluate(WIDE_MATH_JS):
                    wide[f"{lang} {docname}"] = found
        finally:
            context.close()
    assert not wide, f"display equations wider than a 390-px phone's column: {wide}"


def test_printed_code_breaks_only_at_marked_spaces(browser, server):
    context = _pages_in(browser, "en",
                        viewport={"width": book_pdf.PRINT_WIDTH_PX, "height": 1400})
    wrapped = {}
    try:
        page = context.new_page()
        page.emulate_media(media="print")
        for docname in book_pdf.toc_pages():
            page.goto(f"{server}/{docname}.html", wait_until="load")
            book_pdf.prepare(page, "en")
            if found := page.evaluate(SOFT_WRAPPED_CODE_JS):
                wrapped[docname] = found[:3]
    finally:
        context.close()
    assert not wrapped, f"code lines the printer wraps mid-line: {wrapped}"


def test_an_equation_that_must_scroll_shows_that_it_scrolls(browser, server):
    """Narrower than any phone, some equations cannot fit even set smaller: exactly those scroll
    inside their box and carry the shadows of _static/book.css at their edges."""
    context = _pages_in(browser, "en", viewport={"width": 260, "height": 800}, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{server}/book/02_bptt_lstm.html", wait_until="load")
        page.wait_for_function("() => document.documentElement.dataset.mathFitted === '1'")
        boxes = page.evaluate("""() => Array.from(
            document.querySelectorAll("article mjx-container[display='true']"))
          .filter((c) => c.getClientRects().length)
          .map((c) => ({wide: c.scrollWidth > c.clientWidth + 1,
                        marked: c.classList.contains("math-scrolls"),
                        cue: getComputedStyle(c).backgroundImage,
                        scrolls: getComputedStyle(c).overflowX}))""")
    finally:
        context.close()
    scrolling = [b for b in boxes if b["wide"]]
    assert scrolling, "no equation is wider than a 260-px column: the test needs one"
    assert all(b["wide"] == b["marked"] for b in boxes), boxes
    assert all(b["scrolls"] == "auto" and "radial-gradient" in b["cue"] for b in scrolling)

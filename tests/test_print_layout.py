"""Display equations narrower than any phone, checked in the browser on the built site.

At 260 px some equations cannot fit even set smaller: exactly those scroll inside their box and
show that they do. (On a 390-px phone none may be wider than its box: tests/test_site.py, whose
phone pass measures every page; at the paper's width the same is measured while the PDFs are
printed: tests/test_pdf.py.) It needs the built site, not the PDFs.
"""

from __future__ import annotations

import pytest
from test_site import context_in

pytestmark = pytest.mark.book


# -- an equation too wide for any phone -----------------------------------------------------------


def test_an_equation_that_must_scroll_shows_that_it_scrolls(browser, server):
    """Narrower than any phone, some equations cannot fit even set smaller: exactly those scroll
    inside their box and carry the shadows of _static/book.css at their edges."""
    context = context_in(browser, "en", viewport={"width": 260, "height": 800}, is_mobile=True)
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


# -- a code line with tabs, broken for print --------------------------------------------------


def test_a_code_line_with_tabs_is_broken_as_it_is_laid_out(browser):
    """tools/pdf.py breaks a long code line at a space before printing. The canvas it measures
    with counts a tab as one narrow space, while the page sets the tab to the next tab stop: a
    sampled text with tabs in chapter 10 came out too long for the column and wrapped mid-line."""
    from tools.pdf import SOFT_WRAPPED_CODE_JS, WRAP_CODE_JS

    line = " ".join(f"ab\tcd{i}" for i in range(24))
    context = browser.new_context(viewport={"width": 800, "height": 600})
    try:
        page = context.new_page()
        page.set_content(
            '<article><pre style="width: 420px; font: 12px monospace; white-space: pre-wrap">'
            f"{line}\nshort</pre></article>"
        )
        broken = page.evaluate(WRAP_CODE_JS)
        wrapped = page.evaluate(SOFT_WRAPPED_CODE_JS)
        text = page.locator("pre").inner_text()
    finally:
        context.close()
    assert broken >= 2 and wrapped == [], (broken, wrapped)
    assert text.replace("\n\u21aa ", " ") == line + "\nshort"  # only spaces became breaks

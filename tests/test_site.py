"""The website as readers use it, tested in a real browser (headless Chromium via Playwright).

The site in ``_build/html`` is built once (``built_site``: only when missing or older than its
sources, with the command of ``make book``), served on 127.0.0.1 and opened in Debian's
Chromium (``/usr/bin/chromium``, or ``$D2LITE_CHROMIUM``); Playwright never downloads a
browser here. ``make browser`` installs Chromium and a Hangul font when they are missing.

Run them alone with ``python -m pytest -m book tests/test_site.py``. Screenshots of one
chapter in each language mode land in ``_build/screenshots/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
import yaml

from conftest import CHROMIUM_FLAGS, build_command, is_outside  # noqa: F401
from tools import pdf as book_pdf
from tools.core import ROOT
from tools.website import toc_pages

BUILD = ROOT / "_build"
SITE = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
LANG_KEY = "d2lite-book-lang"

pytestmark = pytest.mark.book


# -- the pages --------------------------------------------------------------------------------


def is_chapter(docname: str) -> bool:
    return re.fullmatch(r"book/\d\d_\w+", docname) is not None


def sample_chapter(later: bool = False) -> str:
    """The chapter used for the language and screenshot tests: the first numbered one (or, with
    ``later``, the fourth, which refers back to earlier chapters)."""
    chapters = [d for d in toc_pages() if is_chapter(d) and not d.startswith("book/00_")]
    chapters = chapters or [d for d in toc_pages() if is_chapter(d)] or toc_pages()
    return chapters[min(3, len(chapters) - 1)] if later else chapters[0]


def open_page(context, server: str, docname: str):
    page = context.new_page()
    page.goto(f"{server}/{docname}.html", wait_until="load")
    page.wait_for_selector(".lang-switch button")
    return page


def visible_counts(page) -> dict[str, list[int]]:
    """For each language, [shown, hidden] numbers of its marked elements."""
    return page.evaluate(
        """() => {
        const out = {};
        for (const lang of ["ko", "en"]) {
          const els = Array.from(document.querySelectorAll(".lang-" + lang));
          const shown = els.filter((e) => getComputedStyle(e).display !== "none").length;
          out[lang] = [shown, els.length - shown];
        }
        return out;
      }"""
    )


def assert_mode(page, mode: str) -> None:
    assert page.evaluate("document.documentElement.dataset.bookLang") == mode
    pressed = page.eval_on_selector_all(
        ".lang-switch button[aria-pressed=true]", "els => els.map(e => e.dataset.mode)"
    )
    assert pressed == [mode]
    counts = visible_counts(page)
    (ko_shown, ko_hidden), (en_shown, en_hidden) = counts["ko"], counts["en"]
    assert ko_shown + ko_hidden > 0 and en_shown + en_hidden > 0, counts
    if mode == "ko":
        assert ko_hidden == 0 and en_shown == 0, counts
    elif mode == "en":
        assert en_hidden == 0 and ko_shown == 0, counts
    else:
        assert ko_hidden == 0 and en_hidden == 0, counts


def wait_for_math(page, timeout_ms: int = 20_000) -> None:
    """Wait until MathJax (if the page loads it) has typeset the page; AssertionError if not."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if page.locator("script[src*='mathjax']").count() == 0:
        return
    try:
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=timeout_ms,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"{page.url}: MathJax did not load in {timeout_ms} ms") from None
    page.evaluate("() => MathJax.startup.promise.then(() => true)")


# -- tests ------------------------------------------------------------------------------------


def test_the_toc_lists_a_chapter_and_every_page_was_built(built_site):
    pages = toc_pages()
    assert any(is_chapter(d) for d in pages), pages
    missing = [d for d in pages if not (built_site / f"{d}.html").is_file()]
    assert not missing, f"pages in _toc.yml without HTML: {missing}"


def test_language_switch_shows_only_the_chosen_language(context, server):
    page = open_page(context, server, sample_chapter())
    assert_mode(page, "ko")  # the default, before any choice
    for mode in ("en", "both", "ko"):
        page.click(f".lang-switch button[data-mode={mode}]")
        assert_mode(page, mode)
    assert context.outside_requests == []


def test_language_choice_persists_across_pages_and_reloads(context, server):
    first, other = sample_chapter(), toc_pages()[0]
    if other == first:
        other = toc_pages()[1]
    page = open_page(context, server, first)
    page.click(".lang-switch button[data-mode=en]")
    assert page.evaluate(f"localStorage.getItem('{LANG_KEY}')") == "en"
    page.goto(f"{server}/{other}.html")
    page.wait_for_selector(".lang-switch button")
    assert_mode(page, "en")
    page.reload()
    page.wait_for_selector(".lang-switch button")
    assert_mode(page, "en")
    page.click(".lang-switch button[data-mode=both]")
    second = open_page(context, server, first)  # another tab of the same browser profile
    assert_mode(second, "both")


def pages_with_math(site: Path) -> list[str]:
    return [
        d for d in toc_pages() if 'class="math' in (site / f"{d}.html").read_text(encoding="utf-8")
    ]


PAGE_REPORT_JS = """async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map((img) => {
    img.loading = "eager";
    if (img.complete) return null;
    return new Promise((done) => {
      img.addEventListener("load", done);
      img.addEventListener("error", done);
    });
  }));
  const root = document.querySelector("article") || document.body;
  const math = Array.from(root.querySelectorAll(".math"));
  const clone = root.cloneNode(true);
  clone.querySelectorAll("pre, code, script, style, mjx-container, .highlight")
    .forEach((e) => e.remove());
  return {
    images: imgs.map((img) => ({src: img.currentSrc.slice(0, 80), width: img.naturalWidth})),
    colab: Array.from(document.querySelectorAll("a[href*='colab.research.google.com']"))
      .map((a) => a.href),
    math: math.length,
    untypeset: math.filter((e) => !e.querySelector("mjx-container")).length,
    prose: clone.textContent,
  };
}"""


# Run on each chapter after the report: code blocks wider than their column (their first line),
# and for one language mode the shown figures' (width shown / width drawn, alt text).
CLIPPED_CODE_JS = """() => Array.from(document.querySelectorAll(
    "article div.cell_input pre, article div.highlight pre"))
  .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
  .map((e) => e.innerText.split("\\n")[0].slice(0, 60))"""
FIGURES_JS = """(mode) => Array.from(document.querySelectorAll(
    `article figure.d2l-figure.lang-${mode} img`))
  .map((e) => [e.clientWidth / e.naturalWidth, e.alt])"""


@pytest.fixture(scope="module")
def page_reports(browser, server) -> dict[str, dict]:
    """Open every page of the toc once on a desktop screen, as a reader first meets it (no
    language chosen yet), and report what it shows once MathJax is done and the images are in;
    on a chapter also its clipped code and, in the ko and then the en mode, its figures; and
    every console error or uncaught exception of the visit. The search page and the index are
    opened for their console only. Several tests read the one visit: loading a page with its
    math is what costs."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def record(request):
        if is_outside(request.url):
            outside.append(request.url)

    ctx.on("request", record)
    reports = {}
    try:
        for docname in [*toc_pages(), "search", "genindex"]:
            page = ctx.new_page()
            errors: list[str] = []
            page.on("console", lambda m, out=errors: m.type == "error" and out.append(m.text))
            page.on("pageerror", lambda e, out=errors: out.append(str(e)))
            page.goto(f"{server}/{docname}.html", wait_until="load")
            try:
                wait_for_math(page)
                math_error = None
            except AssertionError as err:
                math_error = str(err)
            reports[docname] = page.evaluate(PAGE_REPORT_JS) | {"math_error": math_error}
            if is_chapter(docname):
                reports[docname]["clipped"] = page.evaluate(CLIPPED_CODE_JS)
                page.wait_for_selector(".lang-switch button")
                figures = {}
                for mode in ("ko", "en"):
                    choose_mode(page, mode)
                    figures[mode] = page.evaluate(FIGURES_JS, mode)
                reports[docname]["figures"] = figures
                # the next page opens as a first visit again, with no language chosen
                page.evaluate(f"localStorage.removeItem('{LANG_KEY}')")
            page.wait_for_timeout(200)  # an error logged just after the page settled
            reports[docname]["console"] = errors
            page.close()
    finally:
        ctx.close()
    reports["(outside requests)"] = outside
    return reports


def test_mathjax_is_served_by_the_site_itself(built_site):
    sample = pages_with_math(built_site)
    assert sample, "no page has math to typeset"
    for docname in sample:
        html = (built_site / f"{docname}.html").read_text(encoding="utf-8")
        sources = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', html, flags=re.I)
        assert sources, f"{docname}: has math but loads no MathJax"
        assert all(not re.match(r"(https?:)?//", src) for src in sources), sources
        local = (built_site / docname).parent / sources[0].split("?")[0]
        assert local.resolve().is_file(), local


def test_math_is_typeset_with_no_raw_tex_left(page_reports, built_site):
    sample = pages_with_math(built_site)
    assert sample
    for docname in sample:
        report = page_reports[docname]
        assert report["math_error"] is None, report["math_error"]
        assert report["math"] > 0, docname
        assert report["untypeset"] == 0, f"{docname}: {report['untypeset']} formulas untypeset"
        raw = re.findall(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\$[^$\s][^$\n]*\$", report["prose"])
        assert not raw, f"{docname}: raw TeX visible: {raw[:5]}"


def test_every_image_of_every_page_loads(page_reports):
    for docname in toc_pages():
        images = page_reports[docname]["images"]
        assert images, f"{docname}: no images at all (not even the logo)"
        broken = [img["src"] for img in images if img["width"] == 0]
        assert not broken, f"{docname}: images that did not load: {broken}"


def test_pages_request_nothing_outside_the_site(page_reports):
    assert page_reports["(outside requests)"] == []


def test_each_chapter_colab_link_opens_a_notebook_in_the_repository(page_reports):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    slug = urlparse(repo["url"]).path.strip("/")
    prefix = f"https://colab.research.google.com/github/{slug}/blob/{repo.get('branch', 'main')}/"
    chapters = 0
    for docname in toc_pages():
        links = page_reports[docname]["colab"]
        if is_chapter(docname):
            chapters += 1
            assert links, f"{docname}: no Colab link"
        for link in links:
            assert link.startswith(prefix), f"{docname}: {link} is not under {prefix}"
            target = ROOT / link.removeprefix(prefix)
            assert target.suffix == ".ipynb", f"{docname}: {link} is not a notebook"
            assert target.is_file(), f"{docname}: {target.relative_to(ROOT)} is not in the repo"
            assert target.parent == ROOT / "notebooks" / "ko", f"{docname}: not Korean by default"
            assert (ROOT / "book" / f"{target.stem}.md").is_file(), f"{target.name} has no source"
    assert chapters > 0


def test_colab_link_follows_the_language_switch(context, server):
    page = open_page(context, server, sample_chapter())
    stem = sample_chapter().split("/")[-1]

    def colab_links() -> list[str]:
        return page.evaluate(
            "Array.from(document.querySelectorAll(\"a[href*='colab.research.google.com']\"))"
            ".map((a) => a.getAttribute('href'))"
        )

    for mode, lang in (("en", "en"), ("both", "ko"), ("ko", "ko"), ("en", "en")):
        page.click(f".lang-switch button[data-mode={mode}]")
        links = colab_links()
        assert links and all(link.endswith(f"/notebooks/{lang}/{stem}.ipynb") for link in links), (
            mode, links)


def search(context, server: str, query: str) -> list[str]:
    """Docnames that the site's own search page lists for the query."""
    page = context.new_page()
    page.goto(f"{server}/search.html?q={quote(query)}", wait_until="load")
    page.wait_for_function(
        """() => {
        const s = document.querySelector("#search-results .search-summary, p.search-summary");
        return s && /\\d|found|no /i.test(s.textContent);
      }"""
    )
    hrefs = page.eval_on_selector_all(
        "#search-results ul.search li a", "els => els.map(e => e.href)"
    )
    page.close()
    found = []
    for href in hrefs:
        path = urlparse(href).path.lstrip("/")
        found.append(path.removesuffix(".html"))
    return found


@pytest.mark.parametrize(
    "query, expected",
    [
        ("attention", "book/glossary"),  # English
        ("어텐션", "book/glossary"),  # Korean
        ("은닉", "book/glossary"),  # Korean, from the glossary table: 은닉 상태
        ("그림", "book/index"),  # the landing page has only 그림의, 그림과, 그림은, 그림만 ...
        ("어텐션이", "book/index"),  # the query's particle is stripped as well
    ],
    ids=["en", "ko", "ko-table", "ko-particle-in-text", "ko-particle-in-query"],
)
def test_search_finds_korean_and_english_terms(context, server, query, expected):
    found = search(context, server, query)
    assert expected in found, f"searching {query!r} found {found}"


def test_screenshots_of_a_chapter_in_each_language_mode(context, server):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    docname = sample_chapter()
    name = Path(docname).name
    shots = {}
    page = open_page(context, server, docname)
    for mode in ("ko", "en", "both"):
        page.evaluate(f"localStorage.setItem('{LANG_KEY}', '{mode}')")
        page.reload(wait_until="load")
        page.wait_for_selector(".lang-switch button")
        wait_for_math(page)
        assert_mode(page, mode)
        path = SCREENSHOTS / f"{name}-{mode}.png"
        page.screenshot(path=str(path), full_page=True)
        shots[mode] = path.read_bytes()
        assert shots[mode][:8] == b"\x89PNG\r\n\x1a\n" and len(shots[mode]) > 10_000, path
    assert len(set(shots.values())) == 3, "the three language modes look the same"


def test_build_command_is_the_one_of_make_book():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^book:.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert recipe, "Makefile has no book target"
    line = next(x for x in recipe.group(1).splitlines() if "jupyter-book" in x)
    assert line.split("jupyter-book", 1)[1].split() == build_command()[1:]


# -- the page in each language, on a phone, numbered (issue 12) --------------------------------

HANGUL = re.compile(r"[\uac00-\ud7a3]")
VISIBLE_TEXT_JS = """(sel) => Array.from(document.querySelectorAll(sel))
  .map((e) => e.innerText).join("\\n")"""


def source_title(docname: str) -> tuple[str, str]:
    """The (Korean, English) halves of a page's ``# 한국어 · English`` title."""
    text = (ROOT / f"{docname}.md").read_text(encoding="utf-8")
    title = re.search(r"^# (.+)$", text, re.M).group(1)
    ko, en = title.split(" · ", 1)
    return ko.strip(), en.strip()


def choose_mode(page, mode: str) -> None:
    page.click(f".lang-switch button[data-mode={mode}]")
    assert page.evaluate("document.documentElement.dataset.bookLang") == mode


@pytest.mark.parametrize("mode", ["ko", "en", "both"])
def test_titles_and_navigation_follow_the_language(context, server, mode):
    docname = sample_chapter()
    ko, en = source_title(docname)
    page = open_page(context, server, docname)
    choose_mode(page, mode)
    heading = page.evaluate(VISIBLE_TEXT_JS, "article h1")
    sidebar = page.evaluate(VISIBLE_TEXT_JS, ".bd-sidebar-primary nav")
    page_toc = page.evaluate(VISIBLE_TEXT_JS, ".bd-sidebar-secondary nav")
    title = page.title()
    if mode == "en":
        for where, text in [("h1", heading), ("sidebar", sidebar), ("page toc", page_toc),
                            ("tab title", title)]:
            assert not HANGUL.search(text), f"Korean in the English page's {where}: {text[:300]!r}"
        assert en in heading
    elif mode == "ko":
        assert ko in heading and en not in heading, heading
        assert en not in sidebar and en not in title, (sidebar[:300], title)
        assert ko in title
    else:
        assert ko in heading and en in heading, heading


@pytest.mark.parametrize("mode", ["ko", "en", "both"])
def test_exercises_and_solutions_speak_the_chosen_language(context, server, mode):
    """sphinx-exercise titles in the site's language (Korean); each mode shows its own titles and
    toggle hint, and a solution stays hidden until its toggle is clicked."""
    docname = sample_chapter()
    page = open_page(context, server, docname)
    choose_mode(page, mode)
    exercise = page.evaluate(VISIBLE_TEXT_JS, ".exercise > .admonition-title")
    solution = page.evaluate(VISIBLE_TEXT_JS, ".solution > .admonition-title")
    hint = page.evaluate(
        """() => getComputedStyle(document.querySelector('.solution button.toggle-button'),
                                  '::before').content"""
    )
    n = page.evaluate("document.querySelector('article h1 .section-number').textContent")
    n = n.strip().rstrip(".")
    once = 2 if mode == "both" else 1  # each title is shown in one language, or in both
    first = re.compile(rf"\b{n}\.1(?!\d)")
    assert len(first.findall(exercise)) == once, exercise[:200]
    assert len(first.findall(solution)) == once, solution[:200]
    if mode == "en":
        assert not HANGUL.search(exercise + solution + hint), (exercise[:200], solution[:200], hint)
        assert f"Exercise {n}.1" in exercise and f"Solution to exercise {n}.1" in solution
    elif mode == "ko":
        assert "Exercise" not in exercise + solution and "Click" not in hint, (exercise, hint)
        assert f"연습 {n}.1" in exercise and f"해답 연습 {n}.1" in solution and "펼치기" in hint
    else:
        assert f"연습 {n}.1 · Exercise {n}.1" in exercise, exercise[:200]
        assert "펼치기" in hint and "Click to show" in hint, hint
    # the solution's body (numbered per page: solution-content-1, -2, ...)
    content = page.locator(".solution").first.locator("section[id^='solution-content']").first
    assert not content.is_visible(), "a solution is shown before its toggle is clicked"
    page.locator(".solution button.toggle-button").first.click()
    assert content.is_visible()


def test_references_show_the_language_of_their_paragraph(built_site):
    """{ref} to a bilingual title: the Korean paragraph links the Korean half, and so on."""
    html = (built_site / f"{sample_chapter(later=True)}.html").read_text(encoding="utf-8")
    article = html[html.index("<article"): html.index("</article>")]
    links = re.findall(r'<a class="reference internal"[^>]*>(.*?)</a>', article, re.S)
    bilingual = [t for t in links if " · " in re.sub(r"<[^>]+>", "", t)
                 and 'class="lang-sep"' not in t]
    assert links and not bilingual, bilingual[:5]


def test_chapters_and_sections_are_numbered(context, server):
    page = open_page(context, server, sample_chapter())
    choose_mode(page, "en")
    numbers = page.eval_on_selector_all(
        ".bd-sidebar-primary nav a.reference.internal",
        "els => els.map(e => e.innerText.trim())",
    )
    chapters = [t for t in numbers if re.match(r"^\d+\.\s", t)]
    assert [int(t.split(".")[0]) for t in chapters][:9] == list(range(1, 10)), numbers
    assert not any(re.match(r"^\d", t) for t in numbers if "Preface" in t or "Glossary" in t)
    h1 = page.evaluate(VISIBLE_TEXT_JS, "article h1")
    h2 = page.evaluate(VISIBLE_TEXT_JS, "article h2")
    assert re.match(r"^\d+\.\s", h1.strip()), h1
    assert re.search(r"^\d+\.\d+\.\s", h2, re.M), h2[:200]


@pytest.mark.parametrize("mode", ["ko", "en", "both"])
def test_glossary_table_shows_in_every_mode_sorted_in_its_language(context, server, mode):
    page = open_page(context, server, "book/glossary")
    choose_mode(page, mode)
    rows = page.eval_on_selector_all(
        "table.glossary-table tbody tr",
        "rows => rows.filter(r => r.offsetParent !== null)"
        ".map(r => [r.cells[0].innerText.trim(), r.cells[1].innerText.trim(), r.id])",
    )
    assert len(rows) >= 30, f"{mode}: only {len(rows)} visible glossary rows"
    assert all(r[2].startswith("term-") for r in rows), "a row without its anchor"
    if mode == "en":
        keys = [r[0].lower() for r in rows]
    else:
        keys = [r[1] for r in rows if HANGUL.match(r[1])]  # 가나다 order is code-point order
    assert keys == sorted(keys), f"{mode}: not sorted: {keys[:8]}"


def context_in(browser, lang: str, **context_options):
    """A browser context whose reader chose ``lang`` before opening any page (a returning
    reader's localStorage), with the page's locale and a minute for slow pages."""
    context = browser.new_context(locale=lang, **context_options)
    context.add_init_script(f"localStorage.setItem('{LANG_KEY}', '{lang}');")
    context.set_default_timeout(60_000)
    return context


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}


@pytest.fixture(scope="module")
def phone_reports(browser, server) -> dict[tuple[str, str], dict]:
    """Every page of the toc on a 390-px phone, once in Korean and once in English (chosen
    before the page loads, as a returning reader has it), measured once its equations are set
    to fit (_static/math-fit.js): how wide the page scrolls, and the display equations still
    wider than their box. Keyed by (language, docname)."""
    reports = {}
    for lang in ("ko", "en"):
        ctx = context_in(browser, lang, **PHONE)
        try:
            page = ctx.new_page()
            for docname in toc_pages():
                page.goto(f"{server}/{docname}.html", wait_until="load")
                page.wait_for_selector(".lang-switch button")
                page.wait_for_function(
                    "() => document.documentElement.dataset.mathFitted === '1'")
                reports[lang, docname] = {
                    "mode": page.evaluate("document.documentElement.dataset.bookLang"),
                    "width": page.evaluate("document.scrollingElement.scrollWidth"),
                    "wide_math": page.evaluate(book_pdf.WIDE_MATH_JS),
                    "diagrams": page.evaluate(DIAGRAMS_JS),
                }
        finally:
            ctx.close()
    return reports


# The architecture diagrams (d2l.diagrams, marked d2l-diagram by d2l.bilingual) the reader sees
# in the chosen language: their alt text and how wide each is drawn against its column.
DIAGRAMS_JS = """() => [...document.querySelectorAll('figure.d2l-diagram img')]
  .filter(img => img.offsetParent !== null)
  .map(img => ({alt: img.alt, width: img.getBoundingClientRect().width,
                column: img.closest('figure').parentElement.getBoundingClientRect().width}))"""


def test_every_chapter_shows_a_diagram_in_each_language_at_phone_width(phone_reports):
    """Chapters 1-11 each show at least one architecture diagram in the reader's language, with
    alt text in that language, no wider than its column on a 390-px phone."""
    chapters = [d for d in toc_pages() if is_chapter(d) and not d.startswith("book/00_")]
    assert len(chapters) >= 11, chapters
    problems = []
    for lang in ("ko", "en"):
        for d in chapters:
            shown = phone_reports[lang, d]["diagrams"]
            if not shown:
                problems.append(f"{lang} {d}: no diagram")
            for fig in shown:
                in_lang = (HANGUL.search(fig["alt"]) if lang == "ko"
                           else re.search(r"[A-Za-z]{3}", fig["alt"]))
                if not in_lang:
                    problems.append(f"{lang} {d}: alt text not in {lang}: {fig['alt'][:60]!r}")
                if fig["width"] > fig["column"] + 0.5:
                    problems.append(f"{lang} {d}: a diagram {fig['width']:.0f} px wide in a "
                                    f"{fig['column']:.0f}-px column")
    assert problems == []


def test_no_page_scrolls_sideways_on_a_phone(phone_reports, browser, server):
    assert {r["mode"] for (lang, _), r in phone_reports.items() if lang == "ko"} == {"ko"}
    assert {r["mode"] for (lang, _), r in phone_reports.items() if lang == "en"} == {"en"}
    wide = {f"{lang} {d}": r["width"] for (lang, d), r in phone_reports.items() if r["width"] > 390}
    assert not wide, f"pages wider than a 390 px phone: {wide}"
    ctx = browser.new_context(**PHONE)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{sample_chapter()}.html", wait_until="load")
        for mode in ("ko", "en"):
            choose_mode(page, mode)
            box = page.eval_on_selector(".lang-switch", "e => e.getBoundingClientRect().toJSON()")
            assert box["height"] < 40 and box["right"] <= 390, f"language switch at {box}"
            lines = page.eval_on_selector(".bd-article h1", "e => e.getBoundingClientRect().height"
                                          " / parseFloat(getComputedStyle(e).lineHeight)")
            assert lines < 2.5, f"{mode}: the chapter title takes {lines:.1f} lines on a phone"
            page.screenshot(path=str(SCREENSHOTS / f"phone-{mode}.png"))
    finally:
        ctx.close()


def test_display_equations_fit_a_phone(phone_reports):
    """On a 390-px phone no display equation is wider than its box, in either language. (At
    the paper's width the same is measured while the PDFs are printed: tests/test_pdf.py.)"""
    wide = {f"{lang} {d}": r["wide_math"] for (lang, d), r in phone_reports.items()
            if r["wide_math"]}
    assert not wide, f"display equations wider than a 390-px phone's column: {wide}"


def test_code_inputs_are_not_clipped(page_reports):
    clipped = {d: page_reports[d]["clipped"][:3] for d in toc_pages()
               if is_chapter(d) and page_reports[d]["clipped"]}
    assert not clipped, f"code wider than its column, clipped: {clipped}"


def test_no_page_logs_a_console_error(page_reports):
    errors = [f"{d}: {e}" for d in [*toc_pages(), "search", "genindex"]
              for e in page_reports[d]["console"]]
    assert errors == []


def test_korean_prose_breaks_between_words(context, server):
    page = open_page(context, server, sample_chapter())
    rules = page.eval_on_selector(
        "article .lang-ko p", "e => [getComputedStyle(e).wordBreak, getComputedStyle(e).fontFamily]"
    )
    assert rules[0] == "keep-all", rules
    assert "Book NanumGothic" in rules[1], rules
    weights = page.eval_on_selector_all(
        "article h2 .lang-ko, article h2 .lang-en",
        "els => els.map(e => getComputedStyle(e).fontWeight)",
    )
    assert weights and len(set(weights)) == 1, weights


def test_figures_and_equations_are_numbered_per_chapter_in_both_languages(context, server):
    page = open_page(context, server, sample_chapter(later=True))
    numbers = page.eval_on_selector_all(
        "article figure.d2l-figure .figure-number", "els => els.map(e => e.textContent)"
    )
    ko = [n for n in numbers if n.startswith("그림")]
    en = [n for n in numbers if n.startswith("Figure")]
    assert ko and len(ko) == len(en), numbers
    chapter = re.search(r"\d+", page.inner_text("article h1 .section-number")).group(0)
    assert [n.split()[1].rstrip(":") for n in ko] == [
        f"{chapter}.{k}" for k in range(1, len(ko) + 1)], ko
    equations = {
        lang: page.eval_on_selector_all(
            f"article .lang-{lang} .equation-number", "els => els.map(e => e.textContent)")
        for lang in ("ko", "en")
    }
    assert equations["ko"] and equations["ko"] == equations["en"], equations
    assert equations["ko"][0] == f"({chapter}.1)", equations["ko"][:3]


def test_figures_are_shown_near_their_drawn_size_with_alt_text(page_reports):
    """Figures are drawn at the column width: the page shows each at ≥ 75 % of its pixels, and
    every image says in the page's language what it shows."""
    small, no_alt = {}, {}
    chapters = [d for d in toc_pages() if is_chapter(d)]
    for docname in chapters:
        for mode, report in page_reports[docname]["figures"].items():
            scales = [round(r, 2) for r, _ in report if r < 0.75]
            if scales:
                small[f"{docname} ({mode})"] = scales
            alts = [a for _, a in report if not a.strip() or a in ("그림", "figure")]
            if alts:
                no_alt[f"{docname} ({mode})"] = len(alts)
    numbered = [d for d in chapters if not d.startswith("book/00_")]  # the preface has none
    empty = [d for d in numbered if not all(page_reports[d]["figures"].values())]
    assert numbered and not empty, f"chapters showing no figure in a language mode: {empty}"
    assert not small, f"figures shown at under 75 % of their size: {small}"
    assert not no_alt, f"figures without a describing alt text: {no_alt}"


def test_tables_are_numbered_in_each_language(context, server):
    """Chapter 3's two prose tables (one per language pair) are 표 3.1 and Table 3.1."""
    chapters = [d for d in toc_pages() if is_chapter(d) and "attention_pooling" in d]
    page = open_page(context, server, chapters[0])
    for mode, word in (("ko", "표"), ("en", "Table")):
        choose_mode(page, mode)
        shown = page.eval_on_selector_all(
            "article .table-number", "els => els.filter(e => e.offsetParent !== null)"
            ".map(e => e.textContent)")
        chapter = re.search(r"\d+", page.inner_text("article h1 .section-number")).group(0)
        assert shown and shown == [f"{word} {chapter}.{k}" for k in range(1, len(shown) + 1)], (
            mode, shown)


# -- interactive attention views (d2l.AttentionView) and dark mode ----------------------------

VIEW_CHAPTERS = ["04_attention_scoring", "05_bahdanau", "08_transformer"]


def views_chapter(slug: str) -> str:
    return next(d for d in toc_pages() if d.endswith(slug))


@pytest.mark.parametrize("slug", VIEW_CHAPTERS)
def test_chapter_attention_views_work_offline(context, server, slug):
    """Each view on the built page answers a hover with one value per key, a row of weights
    (summing to 1 to the shown precision); its selectors and slider respond; nothing is
    fetched and no console error appears."""
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/{views_chapter(slug)}.html", wait_until="load")
    page.wait_for_selector(".lang-switch button")
    views = page.locator("article .attention-view")
    assert views.count() >= 1
    for i in range(views.count()):
        view = views.nth(i)
        assert view.get_attribute("data-ready") == "1", f"view {i} did not start"
        view.scroll_into_view_if_needed()
        query = view.locator(".av-query").last
        query.hover()
        values = [float(v) for v in view.locator(".av-readout .av-val").all_inner_texts()]
        keys = view.locator(".av-key").count()
        assert len(values) == keys and abs(sum(values) - 1) <= 0.005 * keys + 1e-9, values
        before = view.locator(".av-readout").inner_text()
        for select in view.locator("select[data-axis]").all():
            select.select_option(index=select.locator("option").count() - 1)
        slider = view.locator("input.av-temp")
        if slider.count():
            slider.fill("3")
        if view.locator("select[data-axis], input.av-temp").count():
            query.hover()
            assert view.locator(".av-readout").inner_text() != before
    assert errors == [] and context.outside_requests == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_captions_and_views_are_readable_in_light_and_dark_mode(context, server, theme):
    """Figure captions, the views' labels and values: contrast >= 4.5:1 in both themes."""
    from test_views_browser import CONTRAST_JS

    page = open_page(context, server, views_chapter("05_bahdanau"))
    page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    page.locator("article .attention-view .av-query").first.hover()
    texts = page.locator(
        "article figure.d2l-figure figcaption, article .attention-view .av-caption, "
        "article .attention-view .av-tok, article .attention-view .av-val, "
        "article .attention-view .av-cell.av-on"
    )
    # every shown one (a box of some size, not visibility: hidden), measured in one call
    ratios = texts.evaluate_all(f"""(els) => els
      .filter((e) => {{
        const box = e.getBoundingClientRect();
        return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== "hidden";
      }})
      .map((e) => [e.innerText.slice(0, 30), ({CONTRAST_JS})(e)])""")
    assert ratios and min(r for _, r in ratios) >= 4.5, sorted(ratios, key=lambda tr: tr[1])[:3]

"""The book as one PDF per language (``make pdf``, tools/pdf.py), printed from the built site.

The PDFs are printed once per test run from ``_build/html`` (the ``site`` fixture builds it when
it is stale), unless both are newer than the site and than what prints them. Checks: every
page of the toc is in them, in reading order, with a bookmark each; the Korean PDF has Hangul
text and the Korean chapter titles, the English one has the English titles and no Korean
heading; every font is embedded; the website links to the copies in ``_build/html/pdf/``; the
pages are numbered once through each PDF, and its contents page gives every chapter and section
with the page the outline points to; equation numbers stay beside their equations, and continued
code lines are marked. (What the printer lays out, checked in the browser, is in
tests/test_print_layout.py.)
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from filelock import FileLock

from tools import pdf as book_pdf
from tools.core import ROOT

HANGUL = re.compile(r"[\uac00-\ud7a3]")
PRINTERS = [ROOT / "tools" / "pdf.py", ROOT / "_static" / "print.css"]

pytestmark = pytest.mark.book


def _fresh(paths: list[Path], site: Path) -> bool:
    if not all(p.is_file() for p in paths):
        return False
    newest_input = max(
        p.stat().st_mtime for p in [site / "index.html", *PRINTERS, *site.glob("book/*.html")]
    )
    return min(p.stat().st_mtime for p in paths) >= newest_input


@pytest.fixture(scope="session")
def pdfs(site: Path) -> dict[str, Path]:
    paths = {lang: book_pdf.OUT / name for lang, name in book_pdf.PDF_NAMES.items()}
    copies = [site / book_pdf.SITE_PDF_DIR / name for name in book_pdf.PDF_NAMES.values()]
    copies += [book_pdf.layout_path(path) for path in paths.values()]
    book_pdf.OUT.mkdir(parents=True, exist_ok=True)
    # `make test` keeps the tests that read the PDFs on one xdist worker (conftest.py's
    # schedule); the lock keeps any other split from printing them twice at once.
    with FileLock(str(book_pdf.OUT / ".print.lock")):
        if not _fresh([*paths.values(), *copies], site):
            # In its own process: Playwright's sync API cannot start twice in one thread, and the
            # browser tests' session already holds it. How long printing takes is not tested.
            # One process per language, at the same time: printing is the longest unit of the
            # website tests, and the other worker's browser tests end well before it.
            import subprocess
            import sys

            procs = [subprocess.Popen([sys.executable, "-m", "tools.pdf", "--site", str(site),
                                       "--lang", lang], cwd=book_pdf.ROOT, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for lang in paths]
            for proc in procs:
                out, err = proc.communicate()
                assert proc.returncode == 0, out[-2000:] + err[-3000:]
            assert all(p.is_file() for p in paths.values()), paths
    return paths


@pytest.fixture(scope="session")
def readers(pdfs):
    """pypdf's readers of the PDFs (outline, page labels, fonts); each also holds PDFium's view
    of its file, which gives the text of a page some twenty times faster than pypdf."""
    import pypdfium2
    from pypdf import PdfReader

    readers = {}
    for lang, path in pdfs.items():
        reader = readers[lang] = PdfReader(str(path))
        reader.__dict__["_pdfium"] = pypdfium2.PdfDocument(str(path))
    return readers


def outline(reader) -> list[tuple[str, int]]:
    """The top-level bookmarks: (title, 0-based page)."""
    return [(item.title, reader.get_destination_page_number(item)) for item in reader.outline
            if not isinstance(item, list)]


def halves(title: str) -> tuple[str, str]:
    """A bilingual title "한국어 · English" as (Korean, English)."""
    ko, sep, en = title.partition(" · ")
    return (ko.strip(), en.strip()) if sep else (title, title)


def site_titles(site: Path) -> list[str]:
    """The toc pages' titles as the site's search index knows them, in reading order."""
    import json

    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    # titles carry the per-language spans of _ext/bilingual.py; their text is "한국어 · English"
    titles = [re.sub(r"<[^>]+>", "", t) for t in index["titles"]]
    by_doc = dict(zip(index["docnames"], titles))
    return [by_doc[d] for d in book_pdf.toc_pages()]


# The page number sits in the bottom margin (tools/pdf.py); text below the line halfway between
# the number's baseline and the margin's top is the page's foot, read apart from the body.
FOOT_PT = (book_pdf.PAGE_NUMBER_MM + float(book_pdf.MARGIN["bottom"].removesuffix("mm"))) / 2
FOOT_PT *= 72 / 25.4


def page_text(reader, number: int) -> str:
    """The text of a page (by PDFium): its body, then its foot (the page number) as the last
    line; lines end with "\\n". Extracted once per reader."""
    texts = reader.__dict__.setdefault("_page_texts", {})
    if number not in texts:
        page = reader.__dict__["_pdfium"][number].get_textpage()
        body = page.get_text_bounded(bottom=FOOT_PT)
        foot = page.get_text_bounded(top=FOOT_PT)
        # PDFium gives "\x02" for a hyphen where a line broke inside a word ("self-attention")
        texts[number] = (body.replace("\x02", "-") + "\n" + foot).replace("\r\n", "\n")
    return texts[number]


def test_every_toc_page_is_printed_in_order_with_a_bookmark(readers):
    pages = book_pdf.toc_pages()
    for lang, reader in readers.items():
        assert len(reader.pages) >= len(pages) + 1, (lang, len(reader.pages))
        marks = outline(reader)
        assert len(marks) == len(pages), (lang, marks)
        starts = [start for _, start in marks]
        assert starts[0] >= 1, "the title page comes first"
        assert starts == sorted(starts) and len(set(starts)) == len(starts), (lang, marks)


def test_the_korean_pdf_reads_in_korean(readers, site):
    reader = readers["ko"]
    marks = outline(reader)
    for (mark, start), title in zip(marks, site_titles(site)):
        ko, _ = halves(title)
        ko = re.sub(r"^\d+\.\s*", "", ko)  # the bookmark has the chapter's number once, no dot
        assert HANGUL.search(mark), mark
        assert ko in mark, (mark, title)
        text = squeeze(page_text(reader, start))
        assert squeeze(ko) in text, f"{ko!r} not on page {start + 1}: {text[:200]!r}"
    sample = "".join(page_text(reader, i) for i in range(marks[2][1], marks[2][1] + 3))
    assert len(HANGUL.findall(sample)) > 300, sample[:300]


def section_titles(site: Path) -> dict[str, list[str]]:
    """Each page's bilingual section titles ("한국어 · English"), from the search index."""
    import json

    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    out: dict[str, list[str]] = {}
    for title, places in index["alltitles"].items():
        title = re.sub(r"<[^>]+>", "", title)
        if " · " in title and HANGUL.search(title):
            for file, _anchor in places:
                out.setdefault(index["docnames"][file], []).append(title)
    return out


def test_the_english_pdf_has_no_korean_headings(readers, site):
    reader = readers["en"]
    marks = outline(reader)
    ends = [start for _, start in marks[1:]] + [len(reader.pages)]
    sections = section_titles(site)
    checked = 0
    for (mark, start), end, docname, title in zip(
        marks, ends, book_pdf.toc_pages(), site_titles(site)
    ):
        ko, en = halves(title)
        assert not HANGUL.search(mark), mark
        assert en in mark, (mark, title)
        if not re.fullmatch(r"book/0[1-9]_\w+", docname):
            continue
        # The chapter's first line is its English title; no Korean section title anywhere in it.
        first = page_text(reader, start)
        # the first line of text, skipping equation numbers "(1.1)" that float at the right
        line = next(x for x in first.split("\n") if not re.fullmatch(r"\(\d+\.\d+\)", x.strip()))
        assert not HANGUL.search(line), (docname, first[:200])
        head = re.sub(r"^\d+\.", "", squeeze(line))  # after the chapter number
        assert squeeze(en).startswith(head), (docname, first[:200])
        text = squeeze("".join(page_text(reader, i) for i in range(start, end)))
        code = squeeze(code_of(docname))  # the code cells print in both languages
        for heading in sections.get(docname, []):
            ko, en = halves(heading)
            if squeeze(ko) not in code:
                assert squeeze(ko) not in text, (docname, heading)
            assert squeeze(en) in text, (docname, heading)
            checked += 1
    assert checked > 20, checked


def code_of(docname: str) -> str:
    """The code cells of a chapter's source."""
    source = (ROOT / f"{docname}.md").read_text(encoding="utf-8")
    return "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", source, flags=re.S))


def squeeze(text: str) -> str:
    """Text without white space or ligatures (PDF text extraction spaces Hangul and punctuation
    freely, and gives "fi" as one glyph)."""
    text = re.sub(r"[\u00ad\u2010-\u2014]", "-", text)  # dashes come out as soft hyphens
    return re.sub(r"[\s\x00-\x1f]+", "", unicodedata.normalize("NFKC", text))


def _fonts(reader) -> dict[str, dict]:
    fonts = {}
    for page in reader.pages:
        resources = page.get("/Resources")
        font_dict = resources.get_object().get("/Font") if resources else None
        for ref in (font_dict.get_object().values() if font_dict else []):
            font = ref.get_object()
            fonts[f"{font.get('/BaseFont')}#{id(font)}"] = font
    return fonts


def _embedded(font) -> bool:
    if font.get("/Subtype") == "/Type3":
        return True  # glyphs drawn by the PDF's own content streams
    descriptor = font.get("/FontDescriptor")
    if descriptor is None and "/DescendantFonts" in font:
        descriptor = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
    descriptor = descriptor.get_object() if descriptor is not None else {}
    return any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))


def test_every_font_is_embedded_and_a_hangul_font_is_used(readers):
    for lang, reader in readers.items():
        fonts = _fonts(reader)
        assert fonts, lang
        missing = [name for name, font in fonts.items() if not _embedded(font)]
        assert not missing, f"{lang}: fonts not embedded: {missing}"
    korean = [n for n in _fonts(readers["ko"]) if re.search(r"Nanum|CJK|KR|Gothic|Batang", n)]
    assert korean, sorted(_fonts(readers["ko"]))


def test_the_site_links_to_its_copies_of_the_pdfs(pdfs, site):
    for path in pdfs.values():
        copy = site / book_pdf.SITE_PDF_DIR / path.name
        assert copy.read_bytes() == path.read_bytes(), copy
    html = (site / "book" / "01_rnn.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]*attention-transformers-(?:ko|en)\.pdf)"', html)
    assert len(links) == 2, links
    for link in links:
        assert (site / "book" / link).resolve().is_file(), link
    assert "window.print()" not in html


def test_solutions_are_printed_open_in_each_language(readers):
    """On the site a solution opens with a click; on paper it is printed open."""
    expected = {
        "ko": ["해답 연습 9.2", "앞의 두 가지는 계산으로 정해집니다"],
        "en": ["Solution to exercise 9.2", "The first two follow by arithmetic"],
    }
    for lang, reader in readers.items():
        text = squeeze("".join(page_text(reader, i) for i in range(len(reader.pages))))
        for phrase in expected[lang]:
            assert squeeze(phrase) in text, (lang, phrase)


# -- page numbers and the contents ------------------------------------------------------------


def test_pages_are_numbered_once_through_the_book(readers):
    """The cover and the contents are i, ii, …; the book's pages 1 … N, printed at their foot
    and as the PDF's page labels."""
    for lang, reader in readers.items():
        first = outline(reader)[0][1]
        labels = reader.page_labels
        assert all(re.fullmatch(r"[ivx]+", label) for label in labels[:first]), labels[:first]
        assert labels[first:] == [str(k) for k in range(1, len(labels) - first + 1)], lang
        cover = page_text(reader, 0).split("\n")
        assert not any(re.fullmatch(r"[\divx]+", x.strip()) for x in cover), cover
        printed = []
        for k in range(1, len(reader.pages)):
            lines = [x.strip() for x in page_text(reader, k).split("\n") if x.strip()]
            assert lines and lines[-1] == labels[k], (lang, k, labels[k], lines[-3:])
            if k >= first:
                printed.append(int(lines[-1]))
        assert all(b == a + 1 for a, b in zip(printed, printed[1:])), (lang, printed)


def test_the_contents_give_each_chapter_and_section_its_page(readers):
    """The contents list every bookmark (chapters and their sections) in order, numbered once,
    with the page label of the page the bookmark opens, on which its title is printed."""
    for lang, reader in readers.items():
        first = outline(reader)[0][1]
        labels = reader.page_labels
        contents = squeeze("".join(page_text(reader, k) for k in range(1, first)))
        marks = book_pdf.flat_outline(reader)
        assert len(marks) > len(outline(reader)) + 30, (lang, len(marks))  # sections too
        at = 0
        for title, page in marks:
            assert not re.match(r"\d+\.?\s+\d", title), f"numbered twice: {title!r}"
            entry = squeeze(title) + labels[page]
            found = contents.find(entry, at)
            assert found >= 0, (lang, title, labels[page], contents[at:at + 80])
            at = found + len(entry)
            heading = squeeze(re.sub(r"^[\d.]+\s+", "", title))
            assert heading in squeeze(page_text(reader, page)), (lang, title, labels[page])


EQUATION_NUMBER = re.compile(r"\(\d+\.\d+\)")


def lone_equation_numbers(reader) -> list[tuple[str, str]]:
    """Equation numbers "(c.k)" printed alone on their line: (page label, number). Beside its
    equation a number has the equation's glyphs on its left; a number whose equation went on to
    the next page is left by itself at the foot of the page."""
    found = []
    document = reader.__dict__["_pdfium"]
    for k in range(len(document)):
        numbers = set(EQUATION_NUMBER.findall(page_text(reader, k)))
        if not numbers:
            continue
        page = document[k].get_textpage()
        for number in sorted(numbers):
            search = page.search(number)
            while (hit := search.get_next()) is not None:
                start, count = hit
                boxes = [page.get_charbox(i) for i in range(start, start + count)]
                left, right = min(b[0] for b in boxes), max(b[2] for b in boxes)
                bottom, top = min(b[1] for b in boxes), max(b[3] for b in boxes)
                line = (page.get_text_bounded(0, bottom, left - 0.5, top)
                        + page.get_text_bounded(right + 0.5, bottom, 10_000, top))
                if not line.strip():
                    found.append((reader.page_labels[k], number))
    return found


def test_equation_numbers_stay_beside_their_equations(readers):
    for lang, reader in readers.items():
        numbers = sum(len(EQUATION_NUMBER.findall(page_text(reader, k)))
                      for k in range(len(reader.pages)))
        assert numbers > 50, (lang, numbers)  # the check has numbers to look at
        assert lone_equation_numbers(reader) == [], f"{lang}: numbers apart from their equations"


def test_continued_code_lines_are_marked(readers):
    """Where tools/pdf.py breaks a code line that does not fit, the rest carries a "↪"
    (test_printed_code_breaks_only_at_marked_spaces checks that no line is broken elsewhere)."""
    for lang, reader in readers.items():
        text = "".join(page_text(reader, k) for k in range(len(reader.pages)))
        assert "\u21aa" in text, f"{lang}: no continued code line is marked"


# -- the layout at the paper's width, measured as each page was printed -----------------------


def printed_layout(pdfs) -> dict[str, dict[str, dict]]:
    """{lang: {docname: {"wide_math": [...], "soft_wrapped_code": [...]}}} (tools/pdf.py)."""
    import json

    return {lang: json.loads(book_pdf.layout_path(path).read_text(encoding="utf-8"))
            for lang, path in pdfs.items()}


def test_display_equations_fit_the_printed_column(pdfs):
    layout = printed_layout(pdfs)
    for lang, pages in layout.items():
        assert list(pages) == book_pdf.toc_pages(), lang  # every page was measured
    wide = {f"{lang} {doc}": page["wide_math"]
            for lang, pages in layout.items() for doc, page in pages.items() if page["wide_math"]}
    assert not wide, f"display equations wider than the printed column: {wide}"


def test_printed_code_breaks_only_at_marked_spaces(pdfs):
    wrapped = {f"{lang} {doc}": page["soft_wrapped_code"][:3]
               for lang, pages in printed_layout(pdfs).items()
               for doc, page in pages.items() if page["soft_wrapped_code"]}
    assert not wrapped, f"code lines the printer wraps mid-line: {wrapped}"

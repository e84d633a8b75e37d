"""The whole book as one PDF per language, printed from the built website.

``make pdf`` (after ``make book``) runs ``python -m tools.pdf``: the site in ``_build/html`` is
served on 127.0.0.1, and headless Chromium (Playwright; ``$D2LITE_CHROMIUM`` or
``/usr/bin/chromium``, nothing is downloaded) opens every page of ``_toc.yml`` in reading
order with the language switch set to Korean, then to English (``localStorage``), waits for
MathJax and the figures, and prints it (A4, with the site's print stylesheet
``_static/print.css``: no menus). Before printing, at the paper's text width, a display
equation wider than its box is set smaller until it fits (``FIT_MATH_JS``), and a code line
longer than the column is broken at a space, its continuation marked with "↪" (``WRAP_CODE_JS``).

Chromium prints each page of the site as a PDF of its own (numbered from 1 if it numbers them),
so the pages are printed without numbers and numbered here: pypdf joins a cover, a contents
page (each chapter's and section's page, the numbers the pages carry) and the pages into

    _build/pdf/attention-transformers-ko.pdf
    _build/pdf/attention-transformers-en.pdf

and stamps one numbering through the book on them: the cover and the contents are i, ii, …
(the cover shows none), the book's pages 1 … N (also as the PDF's page labels). The outline
has a bookmark per page of the book and, under each, its sections, titled and numbered as in
the contents ("1 RNNs and long-term dependency", "1.1 …"); the sections' pages come from
Chromium's own outline of each printed page (its headings). The PDFs are copied to
``_build/html/pdf/``, where the website's download menu links to them
(``_ext/site_fixes.py``). Chromium embeds the fonts it used (a Hangul font must be installed:
``make browser``). Beside each PDF, ``layout-<lang>.json`` lists per page what the printed
layout still gets wrong, measured as the page is printed: display equations wider than their
box, code blocks the printer wraps mid-line (both empty when all is well; tests/test_pdf.py).
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

from tools.core import BUILD, ROOT
from tools.website import serve, toc_pages

SITE = BUILD / "html"
OUT = BUILD / "pdf"
LANG_KEY = "d2lite-book-lang"
LANGS = ("ko", "en")
# The same names as the download menu's links (_ext/site_fixes.py).
PDF_NAMES = {lang: f"attention-transformers-{lang}.pdf" for lang in LANGS}
SITE_PDF_DIR = "pdf"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
MARGIN = {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}
# The page number is printed this high above the paper's edge, inside the bottom margin.
PAGE_NUMBER_MM = 9
TITLE = {
    "ko": ("어텐션과 트랜스포머", "순환 신경망에서 비전 트랜스포머까지, 실행되는 책"),
    "en": ("Attention and Transformers", "From recurrent networks to vision transformers, "
           "an executable book"),
}
AUTHOR = {"ko": "d2lite 저자들", "en": "the d2lite authors"}
# The text width of the printed page (A4 less the side margins) in CSS pixels: the width at
# which equations are fitted and code is broken before printing.
PRINT_WIDTH_PX = round((210 - 16 - 16) / 25.4 * 96)
CONTENTS = {"ko": "차례", "en": "Contents"}
# A display equation wider than the column is set at most this much smaller (then it overflows,
# which the layout report shows and tests/test_pdf.py fails on).
MIN_MATH_SCALE = 0.6

# The page's title in the chosen language, as the reader sees it (hidden spans left out).
TITLE_JS = """() => {
  const h = document.querySelector("article.bd-article h1") || document.querySelector("h1");
  if (!h) return document.title;
  const clone = h.cloneNode(true);
  clone.querySelectorAll(".headerlink").forEach((e) => e.remove());
  return (h.innerText || clone.textContent).replace(/[#¶]\\s*$/, "").trim();
}"""

# Headings that the site shows in both languages ("한국어 · English" with no lang-ko/lang-en
# spans), and references to them in the prose, keep only the chosen language's half; those
# already split by language are left to the site's language switch.
SPLIT_HEADINGS_JS = """(lang) => {
  let changed = 0;
  const sel = "article h1, article h2, article h3, article h4, article a.reference span.std-ref";
  for (const h of document.querySelectorAll(sel)) {
    if (h.querySelector(".lang-ko, .lang-en")) continue;
    const nodes = Array.from(h.childNodes).filter((n) => !(n.classList &&
      n.classList.contains("headerlink")));
    const at = nodes.findIndex((n) => n.nodeType === Node.TEXT_NODE &&
      n.textContent.includes(" · "));
    if (at < 0) continue;
    const node = nodes[at];
    const i = node.textContent.indexOf(" · ");
    if (lang === "ko") {
      node.textContent = node.textContent.slice(0, i);
      nodes.slice(at + 1).forEach((n) => n.remove());
    } else {
      node.textContent = node.textContent.slice(i + 3);
      nodes.slice(0, at).forEach((n) => n.remove());
    }
    changed += 1;
  }
  return changed;
}"""

# Every image loaded (lazy ones too) before printing.
IMAGES_JS = """async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map((img) => {
    img.loading = "eager";
    if (img.complete) return null;
    return new Promise((done) => {
      img.addEventListener("load", done);
      img.addEventListener("error", done);
    });
  }));
  return imgs.length;
}"""


# The page's structure as printed: its number and title ("1", "RNNs and …", from the first
# heading; no number for the unnumbered pages), and its sections (h2) the same way.
STRUCTURE_JS = """() => {
  const parts = (h) => {
    const clone = h.cloneNode(true);
    clone.querySelectorAll(".headerlink").forEach((e) => e.remove());
    const num = h.querySelector(".section-number");
    const number = num ? num.innerText.trim().replace(/\\.$/, "") : "";
    let title = (h.innerText || clone.textContent).replace(/[#¶]\\s*$/, "").trim();
    if (num) title = title.slice(title.indexOf(num.innerText.trim()) + num.innerText.trim().length);
    return {number: number, title: title.trim()};
  };
  const shown = (e) => e.getClientRects().length > 0;
  const h1 = Array.from(document.querySelectorAll("article.bd-article h1")).find(shown)
    || document.querySelector("h1");
  const page = h1 ? parts(h1) : {number: "", title: document.title};
  page.sections = Array.from(document.querySelectorAll("article.bd-article section > h2"))
    .filter(shown).map(parts);
  return page;
}"""

# Display equations wider than their box are set smaller until they fit (MathJax's CHTML output
# is sized in em); the box keeps the equation number beside it (a block formatting context).
# Returns how many were set smaller, and the widths (equation, box) of any that still overflow.
FIT_MATH_JS = """(minScale) => {
  let shrunk = 0;
  const wide = [];
  for (const c of document.querySelectorAll("article mjx-container[display='true']")) {
    if (!c.getClientRects().length) continue;
    const math = c.querySelector("mjx-math");
    if (!math) continue;
    c.style.fontSize = "";
    const box = c.clientWidth;
    const width = math.getBoundingClientRect().width;
    if (width > box + 0.5) {
      const scale = Math.max(minScale, (box - 2) / width);
      c.style.fontSize = (scale * 100).toFixed(1) + "%";
      shrunk += 1;
      const after = math.getBoundingClientRect().width;
      if (after > c.clientWidth + 0.5) wide.push([Math.round(after), c.clientWidth]);
    }
  }
  return {shrunk: shrunk, wide: wide};
}"""

# Code lines wider than their block are broken at the last space that fits (widths measured in
# the block's font, so that Hangul, wider than Latin letters, counts as it prints); the
# continuation starts at the line's indent with a "↪" (a span of class code-continues).
# Returns how many lines were broken.
WRAP_CODE_JS = """() => {
  let broken = 0;
  const MARK = "\\u21aa ";
  const ctx = document.createElement("canvas").getContext("2d");
  for (const pre of document.querySelectorAll("article pre")) {
    if (!pre.getClientRects().length || pre.dataset.wrapped) continue;
    pre.dataset.wrapped = "1";
    const style = getComputedStyle(pre);
    ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    // The canvas measures a tab as a narrow space, the page sets it to the next tab stop:
    // a line with a tab is measured as laid out, by a hidden copy inside the block.
    const probe = document.createElement("span");
    probe.style.cssText = "position:absolute;visibility:hidden;white-space:pre";
    const width = (t) => {
      if (!t.includes("\\t")) return ctx.measureText(t).width;
      probe.textContent = t;
      return probe.getBoundingClientRect().width;
    };
    const limit = pre.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight) - 2;
    if (limit < width("M".repeat(20))) continue;
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let text = "";
    while (walker.nextNode()) {
      nodes.push([walker.currentNode, text.length]);
      text += walker.currentNode.textContent;
    }
    pre.appendChild(probe);  // after the walk: its text is not the block's
    const breaks = [];  // [offset of the space, indent]
    let start = 0;
    for (const line of text.split("\\n")) {
      if (width(line) > limit) {
        let indent = line.match(/^\\s*/)[0];
        if (width(indent) > limit / 2) indent = "";
        let from = 0;
        let prefix = "";
        while (width(prefix + line.slice(from)) > limit) {
          const rest = line.slice(from);
          let at = -1;
          let j = rest.indexOf(" ", from === 0 ? indent.length + 1 : 1);
          while (j > 0 && width(prefix + rest.slice(0, j)) <= limit) {
            at = j;
            j = rest.indexOf(" ", j + 1);
          }
          if (at < 0) break;  // no space to break at: left to pre-wrap
          breaks.push([start + from + at, indent]);
          from += at + 1;
          prefix = indent + MARK;
        }
      }
      start += line.length + 1;
    }
    probe.remove();
    for (const [offset, indent] of breaks.reverse()) {
      let k = nodes.length - 1;
      while (nodes[k][1] > offset || nodes[k][1] + nodes[k][0].textContent.length <= offset) k -= 1;
      const [node, begin] = nodes[k];
      const rest = node.splitText(offset - begin);
      rest.textContent = rest.textContent.slice(1);  // the space becomes the line break
      const mark = document.createElement("span");
      mark.className = "code-continues";
      mark.textContent = "\\n" + indent + MARK;
      rest.parentNode.insertBefore(mark, rest);
      broken += 1;
    }
  }
  return broken;
}"""


def chromium_path() -> str:
    path = os.environ.get("D2LITE_CHROMIUM", "/usr/bin/chromium")
    if not os.access(path, os.X_OK):
        raise SystemExit(
            f"no Chromium at {path}: run `make browser`, or point D2LITE_CHROMIUM at a "
            "Chromium/Chrome executable"
        )
    return path


def wait_for_math(page, timeout_ms: int = 30_000) -> None:
    """Wait until MathJax (if the page loads it) has typeset the page."""
    if page.locator("script[src*='mathjax']").count() == 0:
        return
    page.wait_for_function(
        "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=timeout_ms
    )
    page.evaluate("() => MathJax.startup.promise.then(() => true)")


def parts_of_toc(root: Path = ROOT) -> dict[str, str]:
    """The caption of the part of _toc.yml that each page opens ("한국어 · English")."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    opens = {}
    for part in toc.get("parts", []):
        chapters = part.get("chapters") or []
        if chapters and part.get("caption"):
            opens[str(chapters[0]["file"]).removesuffix(".md")] = str(part["caption"])
    return opens


def in_language(text: str, lang: str) -> str:
    """One language's half of a bilingual "한국어 · English" text."""
    ko, sep, en = text.partition(" · ")
    return (ko if lang == "ko" else en).strip() if sep else text


def label(number: str, title: str) -> str:
    """A chapter's or section's title with its number once: "1 RNNs …", "1.1 …"."""
    return f"{number} {title}" if number else title


def front_matter_html(lang: str, entries: list[dict]) -> str:
    """The cover and the contents: per page of the book its part (if it opens one), its number,
    title and page, and its sections' numbers, titles and pages."""
    title, subtitle = TITLE[lang]
    rows = []
    for entry in entries:
        if entry.get("part"):
            rows.append(f'<div class="part">{html.escape(entry["part"])}</div>')
        rows.append(
            f'<div class="entry chapter"><span class="num">{html.escape(entry["number"])}</span>'
            f'<span class="title">{html.escape(entry["title"])}</span><span class="dots"></span>'
            f'<span class="page">{entry["page"]}</span></div>'
        )
        for section in entry["sections"]:
            rows.append(
                f'<div class="entry section"><span class="num">{html.escape(section["number"])}'
                f'</span><span class="title">{html.escape(section["title"])}</span>'
                f'<span class="dots"></span><span class="page">{section["page"]}</span></div>'
            )
    return f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><style>
@page {{ size: A4; }}
body {{ font-family: "Noto Sans CJK KR", "NanumGothic", "Noto Sans", sans-serif; }}
.cover {{ height: 230mm; display: flex; flex-direction: column; justify-content: center; }}
h1 {{ font-size: 34pt; margin: 0 0 8mm; }}
p.sub {{ font-size: 15pt; color: #444; margin: 0 0 20mm; }}
p.author {{ font-size: 12pt; }}
h2 {{ break-before: page; font-size: 18pt; margin: 0 0 6mm; }}
.part {{ font-size: 10pt; color: #555; margin: 4mm 0 1mm; text-transform: none; }}
.entry {{ display: flex; align-items: baseline; break-inside: avoid; }}
.chapter {{ font-size: 11.5pt; font-weight: 600; margin-top: 2.2mm; }}
.section {{ font-size: 10pt; margin: 0.6mm 0 0 7mm; }}
.num {{ min-width: 7mm; }}
.section .num {{ min-width: 10mm; }}
.dots {{ flex: 1; border-bottom: 1px dotted #888; margin: 0 2mm; min-width: 8mm; }}
.page {{ min-width: 7mm; text-align: right; font-variant-numeric: tabular-nums; }}
</style></head><body>
<div class="cover"><h1>{html.escape(title)}</h1><p class="sub">{html.escape(subtitle)}</p>
<p class="author">{html.escape(AUTHOR[lang])}</p></div>
<h2>{CONTENTS[lang]}</h2>{"".join(rows)}</body></html>"""


def page_numbers_html(labels: list[str]) -> str:
    """One A4 page per label, the label at the foot of the page (empty: none)."""
    pages = "".join(
        f'<div class="p"><span>{html.escape(text)}</span></div>' for text in labels
    )
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 0; }}
body {{ margin: 0; font-family: "Noto Sans", "DejaVu Sans", sans-serif; }}
.p {{ position: relative; height: 297mm; break-after: page; }}
.p:last-child {{ break-after: auto; }}
.p span {{ position: absolute; left: 0; right: 0; bottom: {PAGE_NUMBER_MM}mm; text-align: center;
           font-size: 8pt; color: #555; }}
</style></head><body>{pages}</body></html>"""


def roman(n: int) -> str:
    """n (1 ≤ n < 40) in lower-case Roman numerals."""
    tens, ones = divmod(n, 10)
    digits = ["", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix"]
    return "x" * tens + digits[ones]


def flat_outline(reader) -> list[tuple[str, int]]:
    """Every bookmark of a PDF, depth first: (title, 0-based page)."""
    found = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                found.append((item.title, reader.get_destination_page_number(item)))

    walk(reader.outline)
    return found


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def section_pages(pdf: bytes, sections: list[dict]) -> list[int]:
    """The 0-based page of the printed page ``pdf`` on which each section starts, from the
    outline Chromium made of its headings (in order; a section it lacks gets the page of the
    one before it)."""
    from pypdf import PdfReader

    marks = flat_outline(PdfReader(io.BytesIO(pdf)))
    pages, at, last = [], 0, 0
    for section in sections:
        want = squeeze(section["title"])
        for k in range(at, len(marks)):
            if want and want in squeeze(marks[k][0]):
                last, at = marks[k][1], k + 1
                break
        pages.append(last)
    return pages


# What the printed layout still gets wrong after prepare(), measured on each page as it is printed
# and kept beside the PDF (layout-<lang>.json) for tests/test_pdf.py.
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


def prepare(page, lang: str) -> dict:
    """Ready a loaded page of the site for print in ``lang``; its structure (STRUCTURE_JS)."""
    if page.locator(".lang-switch button").count():
        page.wait_for_function(
            f"() => document.documentElement.dataset.bookLang === '{lang}'"
        )
    wait_for_math(page)
    page.evaluate(IMAGES_JS)
    page.evaluate(SPLIT_HEADINGS_JS, lang)
    fitted = page.evaluate(FIT_MATH_JS, MIN_MATH_SCALE)
    if fitted["wide"]:
        print(f"  {page.url}: equations wider than the column: {fitted['wide']}",
              file=sys.stderr)
    page.evaluate(WRAP_CODE_JS)
    return page.evaluate(STRUCTURE_JS)


def print_language(browser, base: str, lang: str, pages: list[str]) -> list[dict]:
    """Every page printed in ``lang`` without page numbers: per page its docname, number,
    title, sections (number, title, 0-based page within it) and PDF."""
    from pypdf import PdfReader

    context = browser.new_context(
        viewport={"width": PRINT_WIDTH_PX, "height": 1400}, locale=lang
    )
    context.add_init_script(f"localStorage.setItem('{LANG_KEY}', '{lang}');")
    context.set_default_timeout(60_000)
    printed = []
    opens = parts_of_toc()
    try:
        page = context.new_page()
        page.emulate_media(media="print")
        for docname in pages:
            page.goto(f"{base}/{docname}.html", wait_until="load")
            structure = prepare(page, lang)
            pdf = page.pdf(format="A4", print_background=True, margin=MARGIN, outline=True,
                           tagged=True)
            layout = {"wide_math": page.evaluate(WIDE_MATH_JS),
                      "soft_wrapped_code": page.evaluate(SOFT_WRAPPED_CODE_JS)}
            for section, at in zip(structure["sections"],
                                   section_pages(pdf, structure["sections"])):
                section["page"] = at
            printed.append({
                "docname": docname, "number": structure["number"],
                "title": structure["title"], "sections": structure["sections"],
                "part": in_language(opens[docname], lang) if docname in opens else "",
                "pdf": pdf, "count": len(PdfReader(io.BytesIO(pdf)).pages), "layout": layout,
            })
    finally:
        context.close()
    return printed


def number_pages(printed: list[dict]) -> None:
    """The book's page numbers (from 1) of each printed page and section, in place."""
    at = 1
    for entry in printed:
        entry["page"] = at
        for section in entry["sections"]:
            section["page"] = at + section["page"]
        at += entry["count"]


def print_html(browser, content: str, **options) -> bytes:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content(content, wait_until="load")
        return page.pdf(format="A4", print_background=True, **options)
    finally:
        context.close()


def merge(front: bytes, numbers: bytes, printed: list[dict], lang: str, out: Path) -> int:
    """Join the front matter and the pages into ``out``, stamp the page numbers on them, add
    their page labels and the outline; the page count."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(front)))
    first = len(writer.pages)
    for entry in printed:
        writer.append(PdfReader(io.BytesIO(entry["pdf"])), import_outline=False)
    stamps = PdfReader(io.BytesIO(numbers))
    assert len(stamps.pages) == len(writer.pages), (len(stamps.pages), len(writer.pages))
    for page, stamp in zip(writer.pages, stamps.pages):
        page.merge_page(stamp)
    writer.set_page_label(0, first - 1, style="/r")
    writer.set_page_label(first, len(writer.pages) - 1, style="/D", start=1)
    for entry in printed:
        parent = writer.add_outline_item(
            title=label(entry["number"], entry["title"]),
            page_number=first + entry["page"] - 1,
        )
        for section in entry["sections"]:
            writer.add_outline_item(
                title=label(section["number"], section["title"]),
                page_number=first + section["page"] - 1, parent=parent,
            )
    writer.add_metadata(
        {"/Title": TITLE[lang][0], "/Author": AUTHOR[lang], "/Lang": lang}
    )
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    return len(writer.pages)


def print_book(browser, base: str, lang: str, pages: list[str], out: Path) -> tuple[int, int]:
    """The PDF of the book in ``lang`` written to ``out``: (pages, pages of the site)."""
    from pypdf import PdfReader

    printed = print_language(browser, base, lang, pages)
    number_pages(printed)
    front = print_html(browser, front_matter_html(lang, printed), margin=MARGIN)
    front_count = len(PdfReader(io.BytesIO(front)).pages)
    body_count = sum(entry["count"] for entry in printed)
    labels = [""] + [roman(k) for k in range(2, front_count + 1)]
    labels += [str(k) for k in range(1, body_count + 1)]
    numbers = print_html(browser, page_numbers_html(labels), prefer_css_page_size=True)
    count = merge(front, numbers, printed, lang, out)
    layout = {entry["docname"]: entry["layout"] for entry in printed}
    layout_path(out).write_text(json.dumps(layout, ensure_ascii=False, indent=1) + "\n",
                                encoding="utf-8")
    return count, len(printed)


def layout_path(pdf: Path) -> Path:
    """Where the layout report of a printed PDF is kept: layout-<lang>.json beside it."""
    return pdf.with_name("layout-" + pdf.stem.rsplit("-", 1)[1] + ".json")


def build(site: Path = SITE, out: Path = OUT, langs=LANGS) -> dict[str, Path]:
    """Write one PDF per language into ``out`` and copy it into the site; their paths."""
    from playwright.sync_api import sync_playwright

    if not (site / "index.html").is_file():
        raise SystemExit(f"no website in {site}: run `make book` first")
    pages = toc_pages()
    missing = [d for d in pages if not (site / f"{d}.html").is_file()]
    if missing:
        raise SystemExit(f"pages of _toc.yml missing from {site}: {missing}")
    written = {}
    with serve(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            for lang in langs:
                started = time.time()
                path = out / PDF_NAMES[lang]
                count, sections = print_book(browser, base, lang, pages, path)
                (site / SITE_PDF_DIR).mkdir(exist_ok=True)
                shutil.copy2(path, site / SITE_PDF_DIR / path.name)
                written[lang] = path
                print(
                    f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
                    f"{count} pages, {sections} pages of the site, {time.time() - started:.0f} s"
                )
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE, help="the built website")
    parser.add_argument("--out", type=Path, default=OUT, help="where the PDFs go")
    parser.add_argument("--lang", choices=LANGS, action="append", help="only this language")
    args = parser.parse_args(argv)
    build(args.site, args.out, tuple(args.lang or LANGS))
    return 0


if __name__ == "__main__":
    sys.exit(main())

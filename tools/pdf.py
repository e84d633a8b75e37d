"""The whole book as one PDF per language, printed from the built website.

``make pdf`` (after ``make book``) runs ``python -m tools.pdf``: the site in ``_build/html`` is
served on 127.0.0.1, and headless Chromium (Playwright; ``$D2LITE_CHROMIUM`` or
``/usr/bin/chromium``, nothing is downloaded) opens every page of ``_toc.yml`` in reading
order with the language switch set to Korean, then to English (``localStorage``), waits for
MathJax and the figures, and prints it (A4, with the site's print stylesheet
``_static/print.css``: no menus, code wraps). pypdf joins a title page and the pages into

    _build/pdf/attention-transformers-ko.pdf
    _build/pdf/attention-transformers-en.pdf

with one bookmark per page of the book, and copies them to ``_build/html/pdf/``, where the
website's download menu links to them (``_ext/site_fixes.py``). Chromium embeds the fonts it
used (a Hangul font must be installed: ``make browser``).
"""

from __future__ import annotations

import argparse
import html
import io
import os
import shutil
import sys
import time
from pathlib import Path

from tools.website import serve, toc_pages

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf"
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
TITLE = {
    "ko": ("어텐션과 트랜스포머", "순환 신경망에서 비전 트랜스포머까지, 실행되는 책"),
    "en": ("Attention and Transformers", "From recurrent networks to vision transformers, "
           "an executable book"),
}
AUTHOR = {"ko": "d2lite 저자들", "en": "the d2lite authors"}
FOOTER = (
    '<div style="width:100%;font-size:8px;color:#666;text-align:center;'
    'font-family:sans-serif"><span class="pageNumber"></span></div>'
)

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


def title_page_html(lang: str, chapters: list[str]) -> str:
    title, subtitle = TITLE[lang]
    heading = "차례" if lang == "ko" else "Contents"
    items = "".join(f"<li>{html.escape(c)}</li>" for c in chapters)
    return f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><style>
body {{ font-family: "Noto Sans CJK KR", "NanumGothic", "Noto Sans", sans-serif; }}
.cover {{ height: 230mm; display: flex; flex-direction: column; justify-content: center; }}
h1 {{ font-size: 34pt; margin: 0 0 8mm; }}
p.sub {{ font-size: 15pt; color: #444; margin: 0 0 20mm; }}
p.author {{ font-size: 12pt; }}
h2 {{ break-before: page; font-size: 18pt; }}
ol {{ font-size: 11.5pt; line-height: 1.8; }}
</style></head><body>
<div class="cover"><h1>{html.escape(title)}</h1><p class="sub">{html.escape(subtitle)}</p>
<p class="author">{html.escape(AUTHOR[lang])}</p></div>
<h2>{heading}</h2><ol>{items}</ol></body></html>"""


def print_language(browser, base: str, lang: str, pages: list[str]) -> tuple[bytes, list]:
    """Title page and every page printed in ``lang``: (title-page PDF, [(title, PDF)])."""
    context = browser.new_context(viewport={"width": 1100, "height": 1400}, locale=lang)
    context.add_init_script(f"localStorage.setItem('{LANG_KEY}', '{lang}');")
    context.set_default_timeout(60_000)
    printed = []
    try:
        page = context.new_page()
        page.emulate_media(media="print")
        for docname in pages:
            page.goto(f"{base}/{docname}.html", wait_until="load")
            if page.locator(".lang-switch button").count():
                page.wait_for_function(
                    f"() => document.documentElement.dataset.bookLang === '{lang}'"
                )
            wait_for_math(page)
            page.evaluate(IMAGES_JS)
            page.evaluate(SPLIT_HEADINGS_JS, lang)
            title = page.evaluate(TITLE_JS)
            pdf = page.pdf(
                format="A4",
                print_background=True,
                margin=MARGIN,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
            )
            printed.append((title, pdf))
        page.set_content(title_page_html(lang, [t for t, _ in printed]), wait_until="load")
        cover = page.pdf(format="A4", print_background=True, margin=MARGIN)
    finally:
        context.close()
    return cover, printed


def merge(cover: bytes, printed: list[tuple[str, bytes]], lang: str, out: Path) -> int:
    """Join the title page and the pages into ``out`` with a bookmark per page; page count."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(cover)))
    for title, pdf in printed:
        start = len(writer.pages)
        writer.append(PdfReader(io.BytesIO(pdf)))
        writer.add_outline_item(title=title, page_number=start)
    writer.add_metadata(
        {"/Title": TITLE[lang][0], "/Author": AUTHOR[lang], "/Lang": lang}
    )
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    return len(writer.pages)


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
                cover, printed = print_language(browser, base, lang, pages)
                path = out / PDF_NAMES[lang]
                count = merge(cover, printed, lang, path)
                (site / SITE_PDF_DIR).mkdir(exist_ok=True)
                shutil.copy2(path, site / SITE_PDF_DIR / path.name)
                written[lang] = path
                print(
                    f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
                    f"{count} pages, {len(printed)} sections, {time.time() - started:.0f} s"
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

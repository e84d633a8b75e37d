"""The book's own prose as a corpus: ``d2lite/book_prose.json``, shipped in the wheel.

``python -m tools.prose`` reads the Korean and English prose cells of every page in ``book/``
(``+++ {"lang": "ko"}`` / ``+++ {"lang": "en"}``), strips the markup (code, math, roles, links,
emphasis, HTML) and writes one paragraph per list item, per language. ``d2l.load_book_prose``
reads the file, so chapter 10 trains its tokenizers and language model on the book itself with
nothing to download. ``python -m tools.prose --check`` fails (exit 1) when the committed file
differs from what the chapters give now: after editing any chapter's prose, run
``python -m tools.prose`` again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jupytext

from tools.book import CODE_FENCE, DISPLAY_MATH, INLINE_MATH, ROLE, TITLED_REF
from tools.core import BOOK, ROOT

TARGET = ROOT / "d2lite" / "book_prose.json"
LANGS = ("ko", "en")

_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*)(?=\S)(.+?)(?<=\S)\1")
_TAG = re.compile(r"<[^>]+>")
_DIRECTIVE = re.compile(r"^\s*(?:```|:::).*$", re.M)
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+", re.M)


def strip_markup(text: str) -> str:
    """Markdown/MyST prose -> plain text: code and math dropped, roles and links reduced to
    the words a reader sees, emphasis and list marks removed, whitespace collapsed."""
    text = CODE_FENCE.sub(" ", text)
    text = _DIRECTIVE.sub(" ", text)
    text = DISPLAY_MATH.sub(" ", text)
    # Short plain inline math reads as words ($n$, $x_t$); LaTeX commands do not.
    text = INLINE_MATH.sub(lambda m: m.group(1) if len(m.group(1)) <= 20
                           and "\\" not in m.group(1) else " ", text)
    text = TITLED_REF.sub(lambda m: m.group(1).replace("%s", "").strip(), text)
    text = ROLE.sub(" ", text)
    text = _INLINE_CODE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _TAG.sub(" ", text)
    text = _LIST_MARK.sub("", text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" +([.,;:!?)])", r"\1", text)
    return re.sub(r"\( *\)", "", text).strip()


def paragraphs(source: Path, lang: str) -> list[str]:
    """The plain paragraphs of one page's prose cells in ``lang``, in reading order."""
    out = []
    for cell in jupytext.read(source).cells:
        if cell.cell_type != "markdown" or cell.metadata.get("lang") != lang:
            continue
        for block in re.split(r"\n\s*\n", cell.source):
            plain = " ".join(strip_markup(block).split())
            if plain:
                out.append(plain)
    return out


def build(book: Path = BOOK) -> dict:
    """{'source': ..., 'ko': [paragraph, ...], 'en': [...]} from every page of ``book`` but the
    evidence appendix (generated from sweep data: rerunning a sweep must not change what
    chapter 10's language model reads)."""
    pages = sorted(p for p in book.glob("*.md") if p.name != "evidence.md")
    corpus = {"source": "generated from book/*.md by `python -m tools.prose`; do not edit"}
    for lang in LANGS:
        corpus[lang] = [p for page in pages for p in paragraphs(page, lang)]
    return corpus


def render(corpus: dict) -> str:
    return json.dumps(corpus, ensure_ascii=False, indent=0) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the book's prose into d2lite.")
    parser.add_argument("--check", action="store_true",
                        help="fail if d2lite/book_prose.json differs from the chapters")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run `python -m tools.prose`")
            return 1
        print(f"{TARGET.relative_to(ROOT)} is in sync with book/")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    corpus = json.loads(text)
    sizes = ", ".join(f"{lang} {sum(map(len, corpus[lang])):,} characters" for lang in LANGS)
    print(f"wrote {TARGET.relative_to(ROOT)}: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Maintainer tools for the bilingual chapter sources.

``python -m d2lite.book check``      check every Korean/English prose pair
``python -m d2lite.book notebooks``  write the output-free Colab notebooks ``book/*.ipynb``
``python -m d2lite.book notebooks --check``  fail if a Colab notebook is missing or stale

How a chapter is written (see also README.md):

* A *shared* markdown cell holds only headings (``## 한국어 제목 · English title``), MyST
  labels (``(sec-name)=``) and blank lines.
* Every other markdown cell carries ``lang: ko`` or ``lang: en`` in its jupytext cell metadata
  (``+++ {"lang": "ko"}``), and a ``ko`` cell is followed at once by its ``en`` partner.
* The two cells of a pair use the same math, the same cross-references, citations and
  numbers; the Korean cell is written in Hangul.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
LABEL = re.compile(r"^\((?P<name>[\w\-:.]+)\)=\s*$")
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")
ROLE = re.compile(r"\{(numref|ref|eq|doc|cite|cite:p|cite:t|cite:ps|cite:ts|term)\}`([^`]*)`")
MD_LINK_TARGET = re.compile(r"\]\((#[^)\s]+|[\w./-]+\.(?:md|ipynb)(?:#[^)\s]*)?)\)")
FIG_NAME = re.compile(r":name:\s*(\S+)")
CODE_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]+`")
NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*(?:\.\d+)?%?")
SEPARATOR = " · "


@dataclass
class Problem:
    """One finding of the bilingual checker."""

    source: Path
    cell: int
    message: str

    def __str__(self) -> str:
        rel = self.source.relative_to(ROOT) if self.source.is_relative_to(ROOT) else self.source
        return f"{rel}: cell {self.cell}: {self.message}"


def chapter_sources(book: Path = BOOK) -> list[Path]:
    """Every MyST notebook source of the book: ``book/index.md`` and ``book/NN_*.md``."""
    return sorted(book.glob("[0-9][0-9]_*.md"))


def _normalise_math(expr: str) -> str:
    return re.sub(r"\s+", "", expr)


def math_of(text: str) -> list[str]:
    """Math expressions (display and inline) in a prose cell, whitespace removed, sorted.

    A pair is compared as sets: the same expression may be repeated in one language only.
    """
    text = CODE_FENCE.sub("", text)
    found = [_normalise_math(m) for m in DISPLAY_MATH.findall(text)]
    text = DISPLAY_MATH.sub(" ", text)
    text = re.sub(r"```\{math\}.*?```", " ", text, flags=re.S)
    text = INLINE_CODE.sub(" ", text)
    found += [_normalise_math(m) for m in INLINE_MATH.findall(text)]
    return sorted(found)


def references_of(text: str) -> list[str]:
    """Cross-references, citations, links to other pages and figure names, sorted."""
    refs = [f"{role}:{target.strip()}" for role, target in ROLE.findall(text)]
    refs += [f"link:{t}" for t in MD_LINK_TARGET.findall(text)]
    refs += [f"name:{n}" for n in FIG_NAME.findall(text)]
    return sorted(refs)


def numbers_of(text: str) -> list[str]:
    """Numbers written in the prose (outside math and code), sorted."""
    text = CODE_FENCE.sub(" ", text)
    text = DISPLAY_MATH.sub(" ", text)
    text = INLINE_CODE.sub(" ", text)
    text = INLINE_MATH.sub(" ", text)
    text = ROLE.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r":\w+:.*", " ", text)  # directive options such as :width: 80%
    return sorted(n.replace("−", "-").replace(",", "") for n in NUMBER.findall(text))


def _shared_cell_problems(source: str) -> list[str]:
    problems = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or LABEL.match(stripped):
            continue
        m = HEADING.match(stripped)
        if not m:
            problems.append(
                f"prose outside a language pair: {stripped[:60]!r} "
                '(give the cell `+++ {"lang": "ko"}` or `"en"`, or make it a heading)'
            )
            continue
        title = m.group(2)
        if SEPARATOR not in title:
            problems.append(f"heading {title!r} needs both languages: '한국어{SEPARATOR}English'")
            continue
        ko, en = title.split(SEPARATOR, 1)
        if not HANGUL.search(ko):
            problems.append(f"heading {title!r}: the part before '·' must be Korean")
        if not LATIN.search(en):
            problems.append(f"heading {title!r}: the part after '·' must be English")
    return problems


def pair_problems(ko: str, en: str) -> list[str]:
    """What differs between a Korean cell and its English partner."""
    problems = []
    if not HANGUL.search(ko):
        problems.append("the ko cell has no Hangul")
    if not LATIN.search(en):
        problems.append("the en cell has no English text")
    if HEADING.search(ko) or any(HEADING.match(x) for x in en.splitlines()):
        problems.append("headings belong in a shared cell, not in a language cell")
    for what, fn in (("math", math_of), ("references", references_of), ("numbers", numbers_of)):
        a, b = set(fn(ko)), set(fn(en))
        if a != b:
            problems.append(
                f"{what} differ: only ko has {sorted(a - b)}, only en has {sorted(b - a)}"
            )
    return problems


def check_notebook(source: Path, nb) -> list[Problem]:
    """All bilingual problems of one parsed notebook."""
    problems: list[Problem] = []
    cells = nb.cells
    i = 0
    while i < len(cells):
        cell = cells[i]
        if cell.cell_type != "markdown":
            i += 1
            continue
        lang = cell.metadata.get("lang")
        if lang is None:
            problems += [Problem(source, i, m) for m in _shared_cell_problems(cell.source)]
            i += 1
            continue
        if lang not in ("ko", "en"):
            problems.append(Problem(source, i, f"lang must be 'ko' or 'en', got {lang!r}"))
            i += 1
            continue
        if lang == "en":
            problems.append(Problem(source, i, "an en cell without a ko cell right before it"))
            i += 1
            continue
        nxt = cells[i + 1] if i + 1 < len(cells) else None
        if nxt is None or nxt.cell_type != "markdown" or nxt.metadata.get("lang") != "en":
            problems.append(Problem(source, i, "a ko cell without an en cell right after it"))
            i += 1
            continue
        problems += [Problem(source, i, m) for m in pair_problems(cell.source, nxt.source)]
        i += 2
    return problems


def check_sources(paths: list[Path] | None = None) -> list[Problem]:
    """Check every chapter source (or the given ones)."""
    problems: list[Problem] = []
    for path in paths if paths is not None else chapter_sources() + [BOOK / "index.md"]:
        if path.exists():
            problems += check_notebook(path, jupytext.read(path))
    return problems


# -- Colab notebooks -----------------------------------------------------------------------


def repository() -> tuple[str, str]:
    """The repository URL and branch named in ``_config.yml``."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config.get("repository") or {}
    url, branch = repo.get("url"), repo.get("branch", "main")
    if not url:
        raise ValueError("_config.yml has no repository.url")
    return url.rstrip("/"), branch


def colab_setup_source() -> str:
    """The first code cell of every Colab notebook: install d2lite there, nothing elsewhere."""
    url, branch = repository()
    spec = f"d2lite @ git+{url}@{branch}"
    return (
        "# Google Colab에서만 d2lite를 설치합니다 · Installs d2lite only in Google Colab\n"
        "import sys\n\n"
        'if "google.colab" in sys.modules:\n'
        "    import subprocess\n\n"
        f'    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "{spec}"], check=True)'
    )


def colab_notebook(source: Path) -> str:
    """The committed, output-free ``.ipynb`` text that mirrors one ``.md`` source."""
    nb = jupytext.read(source)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["colab"] = {"provenance": []}
    setup = nbformat.v4.new_code_cell(colab_setup_source())
    setup.metadata["tags"] = ["colab-setup"]
    nb.cells.insert(0, setup)
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"c{k:03d}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.nbformat, nb.nbformat_minor = 4, 5
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def notebook_path(source: Path) -> Path:
    return source.with_suffix(".ipynb")


def sync_notebooks(check: bool) -> list[str]:
    """Write (or, with ``check``, compare) the Colab notebook of every chapter."""
    stale = []
    for source in chapter_sources():
        target = notebook_path(source)
        text = colab_notebook(source)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old == text:
            continue
        if check:
            state = "missing" if old is None else "out of sync with its .md"
            stale.append(f"{target.relative_to(ROOT)} is {state}")
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(ROOT)}")
    known = {notebook_path(s) for s in chapter_sources()}
    for extra in BOOK.glob("*.ipynb"):
        if extra not in known:
            stale.append(f"{extra.relative_to(ROOT)} has no .md source")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Bilingual checker and Colab notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check the Korean/English pairs of every chapter")
    nbs = sub.add_parser("notebooks", help="write the Colab notebooks book/*.ipynb")
    nbs.add_argument("--check", action="store_true", help="only report missing or stale ones")
    args = parser.parse_args(argv)
    if args.command == "check":
        problems = check_sources()
        for p in problems:
            print(p)
        print(f"{len(problems)} bilingual problem(s)")
        return 1 if problems else 0
    stale = sync_notebooks(check=args.check)
    for line in stale:
        print(line)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

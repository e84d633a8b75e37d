"""Maintainer tools for the bilingual chapter sources.

``python -m tools.book check``      check every Korean/English prose pair
``python -m tools.book notebooks``  write the output-free Colab notebooks ``book/*.ipynb``
``python -m tools.book notebooks --check``  fail if a Colab notebook is missing or stale

How a chapter is written (see also README.md):

* A *shared* markdown cell holds only headings (``## 한국어 제목 · English title``), MyST
  labels (``(sec-name)=``) and blank lines.
* Every other markdown cell carries ``lang: ko`` or ``lang: en`` in its jupytext cell metadata
  (``+++ {"lang": "ko"}``), and a ``ko`` cell is followed at once by its ``en`` partner.
* The two cells of a pair use the same math, the same cross-references, citations and
  numbers; the Korean cell is written in Hangul.
* Terms follow the glossary ``book/glossary.csv``: where the English cell uses a glossary term
  that the glossary marks for checking, the Korean cell must contain its Korean term (or an
  accepted variant) or the English term itself, e.g. ``은닉 상태(hidden state)``.
"""

from __future__ import annotations

import argparse
import csv
import functools
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
GLOSSARY = BOOK / "glossary.csv"

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
    """The chapters of the book: ``book/NN_*.md`` (each gets a Colab notebook)."""
    return sorted(book.glob("[0-9][0-9]_*.md"))


def page_sources(book: Path = BOOK) -> list[Path]:
    """Every MyST notebook page of the book: chapters, the landing page and the appendix."""
    return sorted(p for p in book.glob("*.md") if "format_name: myst" in p.read_text("utf-8"))


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
    """Numbers written in the prose (outside math, code and markup), sorted."""
    text = re.sub(r":\w+:.*", " ", _prose_only(text))  # directive options such as :width: 80%
    return sorted(n.replace("−", "-").replace(",", "") for n in NUMBER.findall(text))


# Directives that generate their content (no prose to translate) may sit in a shared cell.
SHARED_DIRECTIVES = (
    "bibliography", "glossary-table",
    # the gates of sphinx-exercise: exercise/solution start and end hold no prose themselves
    "exercise-start", "exercise-end", "solution-start", "solution-end",
)
SHARED_BLOCK = re.compile(
    r"^(`{3,}|:{3,})\{(?:" + "|".join(SHARED_DIRECTIVES) + r")\}[^\n]*\n.*?^\1[ \t]*$",
    re.S | re.M,
)


def _shared_cell_problems(source: str) -> list[str]:
    problems = []
    for line in SHARED_BLOCK.sub("", source).splitlines():
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


# -- Glossary ------------------------------------------------------------------------------

GLOSSARY_COLUMNS = ("en", "ko", "en_also", "ko_also", "check")
_DASHES = "\\-\u2010\u2011\u2012\u2013\u2014"
_JOINER = re.compile(rf"[\s{_DASHES}·]+")
# English idioms that use a glossary word in its everyday sense.
_IDIOMS = re.compile(r"\bpa(?:y|ys|id|ying)\s+(?:\w+\s+)?attention\b", re.I)


_LATIN_GLOSS = re.compile(r"\([^()\uac00-\ud7a3]*\)")


@dataclass(frozen=True)
class Term:
    """One glossary entry: the English and Korean terms, their variants, what to check."""

    en: str
    ko: str
    en_also: tuple[str, ...] = ()
    ko_also: tuple[str, ...] = ()
    check: tuple[str, ...] = ()  # English phrases that make the checker look for the term

    @property
    def english(self) -> tuple[str, ...]:
        return (self.en, *self.en_also)

    @property
    def korean(self) -> tuple[str, ...]:
        return (self.ko, *self.ko_also)


def _split_list(cell: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in cell.split(";") if x.strip())


def load_glossary(path: Path = GLOSSARY) -> list[Term]:
    """Read the glossary table (CSV: en, ko, en_also, ko_also, check; lists split on ';').

    ``check`` is ``*`` to check every English form, a ';'-list of English phrases that alone
    trigger the check (for words with an everyday sense, such as *key*), or empty for none.
    """
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != GLOSSARY_COLUMNS:
            raise ValueError(
                f"{path.name}: columns must be {GLOSSARY_COLUMNS}, got {reader.fieldnames}"
            )
        terms, seen = [], set()
        for line, row in enumerate(reader, start=2):
            en, ko = row["en"].strip(), row["ko"].strip()
            if not LATIN.search(en) or not HANGUL.search(ko):
                raise ValueError(
                    f"{path.name}:{line}: need an English and a Korean term, got {en!r}, {ko!r}"
                )
            if en.lower() in seen:
                raise ValueError(f"{path.name}:{line}: {en!r} is listed twice")
            seen.add(en.lower())
            en_also = _split_list(row["en_also"])
            check = row["check"].strip()
            triggers = (en, *en_also) if check == "*" else _split_list(check)
            terms.append(Term(en, ko, en_also, _split_list(row["ko_also"]), triggers))
    return terms


@functools.cache
def _english_pattern(phrase: str) -> re.Pattern:
    """A regex for an English phrase: any case, space or dash between words, plural last word."""
    words = [re.escape(w) for w in _JOINER.split(phrase.strip()) if w]
    last = words[-1]
    if re.search(r"[^aeiou]y$", phrase, re.I):
        last = last[:-1] + "(?:y|ies)"
    elif re.search(r"(?:s|x|ch|sh)$", phrase, re.I):
        last += "(?:es)?"
    elif re.search(r"[a-z]$", phrase, re.I):
        last += "s?"
    body = rf"[\s{_DASHES}]*".join(words[:-1] + [last])
    # Latin-only boundaries, so that Korean particles may follow: "RNN은", "(queries)를".
    return re.compile(rf"(?<![A-Za-z0-9\[]){body}(?![A-Za-z0-9\]])", re.I)


def _prose_only(text: str) -> str:
    """Text without code, math, roles, link targets and HTML tags: what a reader reads as words."""
    text = CODE_FENCE.sub(" ", text)
    text = DISPLAY_MATH.sub(" ", text)
    text = INLINE_CODE.sub(" ", text)
    text = INLINE_MATH.sub(" ", text)
    text = ROLE.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return text


def _squash(text: str) -> str:
    return _JOINER.sub("", text).lower()


def glossary_problems(ko: str, en: str, glossary: Sequence[Term]) -> list[str]:
    """Glossary terms the English cell uses whose Korean term is missing from the Korean cell.

    A term counts as used where one of its ``check`` phrases occurs in the English prose (not
    in code, math or link targets) and is not part of a longer glossary term matched there.
    The Korean cell passes if it contains the Korean term, a variant, or an English form.
    """
    en_text = _IDIOMS.sub(" ", _prose_only(en))
    ko_text = _prose_only(ko)
    # "나다라야–왓슨(Nadaraya–Watson) 회귀": an English gloss may sit inside the Korean term.
    ko_squashed = _squash(ko_text) + "\n" + _squash(_LATIN_GLOSS.sub("", ko_text))
    candidates = sorted(
        ((phrase, term) for term in glossary for phrase in term.check), key=lambda x: -len(x[0])
    )
    taken: list[tuple[int, int]] = []
    problems = []
    reported = set()
    for phrase, term in candidates:
        spans = [
            m.span()
            for m in _english_pattern(phrase).finditer(en_text)
            if not any(a <= m.start() and m.end() <= b for a, b in taken)
        ]
        if not spans:
            continue
        taken += spans
        if term.en in reported:
            continue
        if any(_squash(k) in ko_squashed for k in term.korean):
            continue
        if any(_english_pattern(e).search(ko_text) for e in term.english):
            continue
        reported.add(term.en)
        accepted = " / ".join(repr(k) for k in term.korean)
        found = en_text[spans[0][0] : spans[0][1]]
        problems.append(
            f"glossary: the en cell says {found!r}; the ko cell should use {accepted} "
            f"(or the English term), see book/glossary.csv"
        )
    return problems


def pair_problems(ko: str, en: str, glossary: Sequence[Term] | None = None) -> list[str]:
    """What differs between a Korean cell and its English partner (and, given a glossary,
    which glossary terms of the English cell the Korean cell leaves out)."""
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
    if glossary:
        problems += glossary_problems(ko, en, glossary)
    return problems


def check_notebook(source: Path, nb, glossary: Sequence[Term] | None = None) -> list[Problem]:
    """All bilingual problems of one parsed notebook (glossary terms too, given a glossary)."""
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
        found = pair_problems(cell.source, nxt.source, glossary)
        problems += [Problem(source, i, m) for m in found]
        i += 2
    return problems


def check_sources(
    paths: list[Path] | None = None, glossary: Path | None = GLOSSARY
) -> list[Problem]:
    """Check every page of the book (or the given ones) against the glossary (if it exists)."""
    terms = load_glossary(glossary) if glossary is not None and glossary.exists() else None
    problems: list[Problem] = []
    for path in paths if paths is not None else page_sources():
        if path.exists():
            problems += check_notebook(path, jupytext.read(path), terms)
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

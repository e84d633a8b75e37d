"""Maintainer tools for the bilingual chapter sources.

``python -m tools.book check``      check every Korean/English prose pair
``python -m tools.book link-glossary [book/NN_x.md ...]``  link each chapter's first glossary terms
``python -m tools.book code-width [--max 88] [book/NN_x.md ...]``  list code lines too long to print

The reader notebooks (``notebooks/<lang>/``) are written by ``python -m tools.notebooks``.

How a chapter is written (see also README.md):

* A *shared* markdown cell holds only headings (``## 한국어 제목 · English title``), MyST
  labels (``(sec-name)=``) and blank lines.
* Every other markdown cell carries ``lang: ko`` or ``lang: en`` in its jupytext cell metadata
  (``+++ {"lang": "ko"}``), and a ``ko`` cell is followed at once by its ``en`` partner.
* The two cells of a pair use the same math, the same cross-references, citations and
  numbers; the Korean cell is written in Hangul.
* Terms follow the glossary ``book/glossary.csv``: where the English cell uses a glossary term
  that the glossary marks for checking, the Korean cell must contain its Korean term (or an
  accepted variant) or the English term itself, e.g. ``은닉 상태(hidden state)``. The Korean
  prose never uses a variant the glossary lists as avoided (column ``ko_avoid``).
* Links to the glossary (``{ref}`은닉 상태 <term-hidden-state>` ``) name a row that exists.
* The English is spelled the American way (normalize, color, behavior) and refers to chapters
  with ``{numref}`Chapter %s <chap-...>` ``, never with a bare number that could drift.
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

from tools.core import BOOK, ROOT, chapter_sources, page_sources

GLOSSARY = BOOK / "glossary.csv"

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN = re.compile(r"[A-Za-z]")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# a gated exercise/solution directive of sphinx-exercise, which must sit in a shared cell
# (tools.notebooks reads the same directives with this pattern)
GATE = re.compile(
    r"^(`{3,}|:{3,})\{(?P<name>exercise|solution)-(?P<edge>start|end)\}\s*(?P<arg>.*)$"
)
LABEL = re.compile(r"^\((?P<name>[\w\-:.]+)\)=\s*$")
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")
ROLE = re.compile(
    r"\{(numref|ref|eq|doc|cite|cite:p|cite:t|cite:ps|cite:ts|term|ev)\}`([^`]*)`"
)
MD_LINK_TARGET = re.compile(r"\]\((#[^)\s]+|[\w./-]+\.(?:md|ipynb)(?:#[^)\s]*)?)\)")
TITLED_REF = re.compile(r"\{(?:ref|numref|doc)\}`([^`<]*?)\s*<[^`<>]+>`")
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


def _role_target(target: str) -> str:
    """A role target's label: ``%s장 <chap-x>`` and ``Chapter %s <chap-x>`` give ``chap-x``."""
    m = re.fullmatch(r"(?s).*<([^<>]+)>\s*", target)
    return (m.group(1) if m else target).strip()


def references_of(text: str) -> list[str]:
    """Cross-references, citations, links to other pages and figure names, sorted."""
    refs = [f"{role}:{_role_target(target)}" for role, target in ROLE.findall(text)]
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

GLOSSARY_COLUMNS = ("en", "ko", "en_also", "ko_also", "check", "ko_avoid")
# Rows appended by older tools may lack the last column; it then counts as empty.
_OPTIONAL_COLUMNS = ("ko_avoid",)
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
    ko_avoid: tuple[str, ...] = ()  # Korean variants the prose must not use

    @property
    def english(self) -> tuple[str, ...]:
        return (self.en, *self.en_also)

    @property
    def korean(self) -> tuple[str, ...]:
        return (self.ko, *self.ko_also)


def _split_list(cell: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in cell.split(";") if x.strip())


def term_anchor(en: str) -> str:
    """The id (and reference label) of a term's glossary row: ``term-`` and the English term in
    lowercase-dash form, e.g. ``term-nadaraya-watson-regression``."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", en.lower()).strip("-")


def load_glossary(path: Path = GLOSSARY) -> list[Term]:
    """Read the glossary table (CSV: en, ko, en_also, ko_also, check, ko_avoid; lists split on
    ';').

    ``check`` is ``*`` to check every English form, a ';'-list of English phrases that alone
    trigger the check (for words with an everyday sense, such as *key*), or empty for none.
    ``ko_avoid`` lists Korean variants that the Korean prose must not use (the checker refuses
    them); none of them may occur inside an accepted Korean term of any row.
    """
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        names = tuple(reader.fieldnames or ())
        full, short = GLOSSARY_COLUMNS, GLOSSARY_COLUMNS[: -len(_OPTIONAL_COLUMNS)]
        if names not in (full, short):
            raise ValueError(f"{path.name}: columns must be {full}, got {reader.fieldnames}")
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
            avoid = _split_list(row.get("ko_avoid") or "")
            if any(not HANGUL.search(v) for v in avoid):
                raise ValueError(f"{path.name}:{line}: ko_avoid holds Korean variants, got {avoid}")
            terms.append(Term(en, ko, en_also, _split_list(row["ko_also"]), triggers, avoid))
    accepted = [(t.en, k) for t in terms for k in t.korean]
    for term in terms:
        for variant in term.ko_avoid:
            for owner, k in accepted:
                if _squash(variant) in _squash(k):
                    raise ValueError(
                        f"{path.name}: {term.en!r} avoids {variant!r}, "
                        f"but {owner!r} accepts {k!r}, which contains it"
                    )
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
    text = TITLED_REF.sub(lambda m: m.group(1).replace("%s", ""), text)  # the reader sees the title
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


def avoided_problems(ko: str, glossary: Sequence[Term]) -> list[str]:
    """Korean variants that the glossary lists as avoided and the Korean prose still uses."""
    text = _prose_only(ko)
    squashed = _squash(text)
    problems = []
    for term in glossary:
        for variant in term.ko_avoid:
            if variant in text or (" " in variant and _squash(variant) in squashed):
                problems.append(
                    f"glossary: the ko cell writes {variant!r}; write {term.ko!r} "
                    f"({term.en}), see the ko_avoid column of book/glossary.csv"
                )
    return problems


# British spellings the English prose avoids (the book spells the American way).
_BRITISH = re.compile(
    r"\b(?:(?:normal|initial|memor|minim|maxim|optim|token|general|parallel|penal|standard|"
    r"visual|summar|regular|vector|recogn|organ|real|util|character|random|custom|stabil|"
    r"special|local|emphas|categor|serial|synchron|author|capital|modern|neutral|"
    r"symbol|lemmat|quant|binar|discret|linear|central|harmon|sanit)is(?:e|ed|es|ing|ation|"
    r"ations|er|ers)|analys(?:e|ed|es|ing)|colou?r(?<=colour)\w*|behaviour\w*|neighbour\w*|"
    r"favour\w*|centre[sd]?|grey(?:s|ed|ish)?|(?:travel|label|model|cancel|signal)l(?:ed|ing)|"
    r"programme)\b",
    re.I,
)
# A chapter named by its number in the English prose (it must be a {numref} role).
_CHAPTER_NUMBER = re.compile(r"\b[Cc]h(?:apters?|s?\.)\s*\d")


def english_problems(en: str) -> list[str]:
    """British spellings and bare chapter numbers in an English prose cell."""
    text = _prose_only(en)
    problems = [
        f"spelling: {m.group(0)!r} is British; the book spells the American way "
        "(-ize, -yze, color, behavior, center, gray, -led/-ling)"
        for m in _BRITISH.finditer(text)
    ]
    problems += [
        f"chapter reference {m.group(0)!r}: write {{numref}}`Chapter %s <chap-...>` "
        "so that the number cannot drift"
        for m in _CHAPTER_NUMBER.finditer(text)
    ]
    return problems


def glossary_link_problems(text: str, anchors: set[str]) -> list[str]:
    """Links to glossary rows (``{ref}`...<term-x>` ``, ``glossary.md#term-x``) naming no row."""
    targets = [_role_target(t) for role, t in ROLE.findall(text) if role == "ref"]
    targets += re.findall(r"\]\((?:glossary\.md)?#(term-[\w-]+)\)", text)
    return [
        f"glossary link to {t!r}: no such row in book/glossary.csv"
        for t in targets
        if t.startswith("term-") and t not in anchors
    ]


def pair_problems(
    ko: str, en: str, glossary: Sequence[Term] | None = None, chapter: bool = True
) -> list[str]:
    """What differs between a Korean cell and its English partner; given a glossary, which
    glossary terms of the English cell the Korean cell leaves out, which avoided variants it
    uses and which glossary links name no row; in a chapter, British spellings and bare chapter
    numbers in the English cell."""
    problems = []
    if not HANGUL.search(ko):
        problems.append("the ko cell has no Hangul")
    if not LATIN.search(en):
        problems.append("the en cell has no English text")
    if HEADING.search(ko) or any(HEADING.match(x) for x in en.splitlines()):
        problems.append("headings belong in a shared cell, not in a language cell")
    if any(GATE.match(x.strip()) for x in (ko + "\n" + en).splitlines()):
        problems.append("exercise/solution directives belong in a shared cell (put '+++' before "
                        "them), not in a language cell")
    for what, fn in (("math", math_of), ("references", references_of), ("numbers", numbers_of)):
        a, b = set(fn(ko)), set(fn(en))
        if a != b:
            problems.append(
                f"{what} differ: only ko has {sorted(a - b)}, only en has {sorted(b - a)}"
            )
    if chapter:
        problems += english_problems(en)
        problems += notation_problems(ko + "\n" + en)
    if glossary:
        problems += glossary_problems(ko, en, glossary)
        problems += avoided_problems(ko, glossary)
        anchors = {term_anchor(t.en) for t in glossary}
        problems += glossary_link_problems(ko + "\n" + en, anchors)
    return problems


# The book's vectors are rows (the preface's table): a query-key score is q k^T, and a matrix
# multiplies a vector from the right, x W. These are the column-vector forms a chapter must not
# slip into (an outer product such as p^T p is fine, so only the query-key score is checked).
_COLUMN_SCORE = re.compile(r"\\mathbf\{q\}(?:_\{?\w+\}?)?\^\{?\\top\}?\s*\\mathbf\{k\}")
_MATRIX_LEFT = re.compile(
    r"\\mathbf\{W\}(?:_\{?\w+\}?)?(?:\^\{?\(\w+\)\}?)?\s*\\mathbf\{[qkvxh]\}"
)


def notation_problems(text: str) -> list[str]:
    """Column-vector notation in the math of a chapter cell, where the book writes rows."""
    problems = []
    for expr in math_of(text):
        for pattern, rule in ((_COLUMN_SCORE, "write a query-key score as q k^T (rows), not q^T k"),
                              (_MATRIX_LEFT, "vectors are rows: write x W, not W x")):
            for m in pattern.finditer(expr):
                problems.append(f"notation: {rule}: {m.group(0)!r}")
    return problems


# Seeding that bypasses d2l.set_seed / d2l.generator, and so D2LITE_SEED_OFFSET: a chapter run
# "with other seeds" would then repeat these draws and prove nothing about them.
_RAW_SEEDING = re.compile(
    r"\btorch\.(?:cuda\.)?manual_seed(?:_all)?\(|\.manual_seed\(|\bnp\.random\.seed\("
    r"|\bnumpy\.random\.seed\(|\bdefault_rng\(|(?<![\w.])random\.seed\(|random\.Random\("
)


def seeding_problems(code: str) -> list[str]:
    """Seeds set in a code cell without going through ``d2l.set_seed`` or ``d2l.generator``."""
    return [
        f"seed with d2l.set_seed(...) or d2l.generator(...), not {m.group(0)!r}, so that "
        "D2LITE_SEED_OFFSET reaches it"
        for m in _RAW_SEEDING.finditer(code)
    ]


# How the book was checked belongs in the evidence appendix (book/evidence.md, generated by
# tools.evidence) and the README, not in what a reader reads: the words of the build and remarks
# about the machine the book was built on, in prose and in code comments.
BUILD_WORDS = re.compile(
    r"seed[ -]offsets?|시드\s*오프셋|(?:offsets?|오프셋)\s*\d|\bcnr\b|\bavx(?:2|-?512)\b"
    r"|\bsse ?4[\w.]*|\bsimd\b|\bonednn\b|\bnative path|네이티브 경로|D2LITE_SEED_OFFSET"
    r"|ATEN_CPU_CAPABILITY|MKL_ENABLE_INSTRUCTIONS|MKL_CBWR|\bEPYC\b|\bseed[_ ]study\b"
    r"|tools\.portable",
    re.I,
)
# Pages a reader meets that may name the build: the appendix that reports the sweeps.
BUILD_PAGES = ("evidence.md",)
# A pitfall box or section has one title throughout the book: 흔한 오해 · Common misconception(s).
_PITFALL = re.compile(
    r"^(?:(?:`{3,}|:{3,})\{admonition\}|#{1,6})\s*(?:[^\n]*·\s*)?(함정|Common pitfalls?)\b",
    re.M)


def build_word_problems(text: str, where: str) -> list[str]:
    """Build vocabulary in reader-facing text (``where`` says prose or a code comment)."""
    return [f"build vocabulary in {where}: {m.group(0)!r} (the evidence appendix holds how "
            "the claims were checked)" for m in BUILD_WORDS.finditer(text)]


def code_comments(code: str) -> str:
    """The comments of a code cell (text after ``#``), which readers see as prose."""
    return "\n".join(line.split("#", 1)[1] for line in code.splitlines() if "#" in line)


def check_notebook(source: Path, nb, glossary: Sequence[Term] | None = None) -> list[Problem]:
    """All bilingual problems of one parsed notebook (glossary terms too, given a glossary)."""
    problems: list[Problem] = []
    cells = nb.cells
    is_chapter = re.match(r"\d\d_", source.name) is not None
    reader_page = source.name not in BUILD_PAGES
    i = 0
    while i < len(cells):
        cell = cells[i]
        if cell.cell_type == "code":
            problems += [Problem(source, i, m) for m in seeding_problems(cell.source)]
            if reader_page:
                problems += [Problem(source, i, m) for m in
                             build_word_problems(code_comments(cell.source), "a code comment")]
        elif reader_page:
            problems += [Problem(source, i, m) for m in build_word_problems(cell.source, "prose")]
            for m in _PITFALL.finditer(cell.source):
                problems.append(Problem(source, i, "a pitfall box is titled 흔한 오해 · Common "
                                        f"misconception, not {m.group(1)!r}"))
        if cell.cell_type != "markdown":
            i += 1
            continue
        lang = cell.metadata.get("lang")
        if lang is None:
            problems += [Problem(source, i, m) for m in _shared_cell_problems(cell.source)]
            if glossary:
                headings = "\n".join(
                    m.group(2).split(SEPARATOR, 1)[0]
                    for m in map(HEADING.match, cell.source.splitlines())
                    if m
                )
                problems += [Problem(source, i, m) for m in avoided_problems(headings, glossary)]
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
        found = pair_problems(cell.source, nxt.source, glossary, chapter=is_chapter)
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


# -- Code for the column ---------------------------------------------------------------------

# The style guide asks for chapter code lines of about 80 characters; longer ones are broken at a
# space with a "↪" when printed (tools/pdf.py), and this many characters fit the printed column.
CODE_WIDTH = 88
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def long_code_lines(text: str, limit: int = CODE_WIDTH) -> list[tuple[int, int]]:
    """(line number, length) of each line of a code cell of ``text`` longer than ``limit``."""
    found = []
    for cell in CODE_CELL.finditer(text):
        first = text.count("\n", 0, cell.start(1)) + 1
        for k, line in enumerate(cell.group(1).splitlines()):
            if len(line) > limit:
                found.append((first + k, len(line)))
    return found


# -- Glossary links --------------------------------------------------------------------------

# What a glossary link may not be placed inside: code, math, roles, links, tags, directive lines,
# bold text.
_NO_LINK = (
    CODE_FENCE,
    re.compile(r"^[ \t]*(?:```|:::).*$", re.M),
    re.compile(r"^:\w+:.*$", re.M),
    DISPLAY_MATH,
    INLINE_MATH,
    re.compile(r"\{[\w:]+\}`[^`]*`"),
    INLINE_CODE,
    re.compile(r"\[[^\]\n]*\]\([^)]*\)"),
    re.compile(r"<[^>\n]+>"),
    re.compile(r"\*\*[^*\n]+\*\*"),
)
_KO_PARTICLES = "은는이가을를의와과에도만로으서까처마보뿐"
_EXERCISES = re.compile(r"^\(sec-[\w-]*exercises\)=", re.M)
_LANG_CELL = '+++ {"lang": "%s"}\n'


def _first_uses(text: str, candidates: list[tuple[int, int, Term]]) -> dict[str, tuple[int, int]]:
    """The first span of each term, longest matches first, none overlapping or in markup."""
    blocked = [m.span() for pattern in _NO_LINK for m in pattern.finditer(text)]
    taken: list[tuple[int, int]] = []
    first: dict[str, tuple[int, int]] = {}
    for a, b, term in sorted(candidates, key=lambda c: (c[0] - c[1], c[0])):
        if any(x < b and a < y for x, y in blocked + taken):
            continue
        taken.append((a, b))
        if term.en not in first or a < first[term.en][0]:
            first[term.en] = (a, b)
    return first


def _korean_uses(text: str, terms: Sequence[Term]) -> dict[str, tuple[int, int]]:
    found = []
    for term in terms:
        for k in term.korean:
            for m in re.finditer(r"\s+".join(map(re.escape, k.split())), text):
                a, b = m.span()
                if a and (HANGUL.match(text[a - 1]) or text[a - 1].isalnum()):
                    continue  # inside a longer word
                if len(k) == 1 and b < len(text) and HANGUL.match(text[b]):
                    if text[b] not in _KO_PARTICLES:
                        continue  # 키 in 키우다
                found.append((a, b, term))
        for e in term.english:
            found += [(m.start(), m.end(), term) for m in _english_pattern(e).finditer(text)]
    return _first_uses(text, found)


def _english_uses(text: str, terms: Sequence[Term]) -> dict[str, tuple[int, int]]:
    found = [
        (m.start(), m.end(), term)
        for term in terms
        for phrase in term.check
        for m in _english_pattern(phrase).finditer(text)
    ]
    return _first_uses(text, found)


def link_glossary_terms(path: Path, glossary: Sequence[Term]) -> int:
    """Link the first use of each checked glossary term in a chapter to its glossary row.

    A term is linked in the first Korean/English pair (before the exercises) whose two cells
    both use it, as ``{ref}`은닉 상태 <term-hidden-state>` `` and
    ``{ref}`hidden state <term-hidden-state>` ``; terms the chapter already links are left
    alone. Returns the number of terms linked; the file is rewritten only if there are any.
    """
    text = path.read_text(encoding="utf-8")
    stop = _EXERCISES.search(text)
    limit = stop.start() if stop else len(text)
    cell_end = re.compile(r"^(?:\+\+\+|```\{code-cell\})", re.M)
    terms = [t for t in glossary if t.check]
    done = set(re.findall(r"<(term-[\w-]+)>`", text))
    edits: list[tuple[int, int, str]] = []
    start = 0
    while (ko_at := text.find(_LANG_CELL % "ko", start, limit)) >= 0:
        ka = ko_at + len(_LANG_CELL % "ko")
        end = cell_end.search(text, ka)
        kb = min(end.start() if end else len(text), limit)
        start = kb
        if not text.startswith(_LANG_CELL % "en", kb):
            continue
        ea = kb + len(_LANG_CELL % "en")
        end = cell_end.search(text, ea)
        eb = min(end.start() if end else len(text), limit)
        ko_uses, en_uses = _korean_uses(text[ka:kb], terms), _english_uses(text[ea:eb], terms)
        for term in terms:
            anchor = term_anchor(term.en)
            if anchor in done or term.en not in ko_uses or term.en not in en_uses:
                continue
            done.add(anchor)
            for base, (a, b) in ((ka, ko_uses[term.en]), (ea, en_uses[term.en])):
                words = text[base + a : base + b]
                edits.append((base + a, base + b, f"{{ref}}`{words} <{anchor}>`"))
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    if edits:
        path.write_text(text, encoding="utf-8")
    return len(edits) // 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The bilingual checker.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check the Korean/English pairs of every chapter")
    links = sub.add_parser("link-glossary", help="link each chapter's first glossary terms")
    links.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    width = sub.add_parser("code-width", help="list chapter code lines too long to print")
    width.add_argument("--max", type=int, default=CODE_WIDTH, help="characters per line")
    width.add_argument("chapters", nargs="*", type=Path, help="default: every chapter")
    args = parser.parse_args(argv)
    if args.command == "code-width":
        found = 0
        for path in args.chapters or chapter_sources():
            for line, length in long_code_lines(path.read_text(encoding="utf-8"), args.max):
                print(f"{path}:{line}: {length} characters")
                found += 1
        print(f"{found} code line(s) longer than {args.max} characters")
        return 1 if found else 0
    if args.command == "link-glossary":
        glossary = load_glossary()
        for path in args.chapters or chapter_sources():
            print(f"{path}: linked {link_glossary_terms(path, glossary)} term(s)")
        return 0
    problems = [str(p) for p in check_sources()]
    problems += evidence_problems()
    for p in problems:
        print(p)
    print(f"{len(problems)} bilingual problem(s)")
    return 1 if problems else 0


def evidence_problems() -> list[str]:
    """The evidence appendix against its data, and the chapters' {ev} roles and links to it."""
    from tools import evidence

    try:
        found = evidence.problems()
        if evidence.PAGE.exists() and evidence.PAGE.read_text("utf-8") != evidence.render():
            found.append("book/evidence.md is out of date: python -m tools.evidence render")
        elif not evidence.PAGE.exists():
            found.append("book/evidence.md is missing: python -m tools.evidence render")
    except evidence.EvidenceError as error:
        found = [f"evidence: {error}"]
    return found


if __name__ == "__main__":
    sys.exit(main())

"""Reader notebooks: one plain-Jupyter notebook per chapter and language.

``python -m tools.notebooks``          write ``notebooks/ko/NN_slug.ipynb`` and ``notebooks/en/…``
``python -m tools.notebooks --check``  fail if one is missing or stale
``python -m tools.notebooks --test-dir DIR``  write the bilingual notebooks that nbval executes

A chapter source ``book/NN_slug.md`` holds both languages (see README). A reader notebook keeps
the code cells as they are and only the prose of its language, turned from MyST into the
markdown that Colab and Jupyter render: references become links to the book's website
(``html.baseurl`` in ``_config.yml``), citations become "(Vaswani et al., 2017)" with a list of
references at the end, admonitions become block quotes, labels disappear, and the solutions of
the exercises move after all exercises, so that scrolling does not reveal them.
"""

from __future__ import annotations

import argparse
import csv
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat

from tools.book import GATE
from tools.core import BOOK, ROOT, chapter_number, chapter_sources
from tools.website import toc_pages

NOTEBOOKS = ROOT / "notebooks"
LANGS = ("ko", "en")
SEPARATOR = " · "

LABEL = re.compile(r"^\((?P<name>[\w\-:.]+)\)=\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
FENCE_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
ROLE = re.compile(r"\{(?P<role>[a-z:]+)\}`(?P<body>[^`]*)`")
LOCAL_LINK = re.compile(r"\]\(#(?P<label>[^)\s]+)\)")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)

WORDS = {
    "ko": {
        "exercise": "연습문제",
        "solutions": "풀이",
        "solution_of": "연습문제 {n} 풀이",
        "references": "참고 문헌",
        "chapter": "{n}장",
        "section": "{n}절",
        "note": "참고",
        "tip": "팁",
        "warning": "주의",
        "important": "중요",
        "website": "웹사이트에서 보기",
        "glossary": "용어집",
    },
    "en": {
        "exercise": "Exercise",
        "solutions": "Solutions",
        "solution_of": "Solution to exercise {n}",
        "references": "References",
        "chapter": "Chapter {n}",
        "section": "Section {n}",
        "note": "Note",
        "tip": "Tip",
        "warning": "Warning",
        "important": "Important",
        "website": "read on the website",
        "glossary": "glossary",
    },
}


def pick(text: str, lang: str) -> str:
    """The half of ``"한국어 · English"`` in ``lang``; text without the separator stays whole."""
    if SEPARATOR not in text:
        return text
    ko, en = text.split(SEPARATOR, 1)
    return ko.strip() if lang == "ko" else en.strip()


# -- the book's structure: pages, labels, numbers ----------------------------------------


@dataclass
class Target:
    """Where a label points: a page of the website, an anchor and a title in each language."""

    page: str
    anchor: str | None
    title: dict[str, str]
    number: str | None = None
    kind: str = "section"


def _config() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def base_url() -> str:
    """The website's address (``html.baseurl`` in ``_config.yml``), without a trailing slash."""
    url = ((_config().get("html") or {}).get("baseurl") or "").rstrip("/")
    if not url:
        raise ValueError("_config.yml has no html.baseurl: the notebooks link to the website")
    return url


def _prose_lines(text: str):
    """The lines of a MyST source outside code: code cells and plain code blocks are skipped,
    the bodies of directives (admonitions …) are kept."""
    stack: list[tuple[str, bool]] = []  # open fences and whether their body is prose
    for line in text.splitlines():
        stripped = line.strip()
        if stack:
            fence, prose = stack[-1]
            if stripped == fence:
                stack.pop()
                continue
            if not prose:
                continue
        m = re.match(r"^(`{3,}|~{3,}|:{3,})(.*)$", stripped)
        if m:
            rest = m.group(2).strip()
            stack.append((m.group(1), rest.startswith("{") and not rest.startswith("{code-cell")))
            continue
        yield line


@functools.lru_cache(maxsize=1)
def targets() -> dict[str, Target]:
    """Every label of the book: sections and chapters from ``(label)=`` lines, glossary rows."""
    found: dict[str, Target] = {}
    for page in toc_pages():
        path = ROOT / f"{page}.md"
        if not path.exists():
            continue
        chapter = chapter_number(page)
        counters = [0] * 7
        pending: list[str] = []
        for line in _prose_lines(path.read_text(encoding="utf-8")):
            if m := LABEL.match(line.strip()):
                pending.append(m.group("name"))
                continue
            h = HEADING.match(line)
            if not h:
                if line.strip():
                    pending = []
                continue
            level, title = len(h.group(1)), h.group(2).strip()
            number = None
            if level == 1:
                number = str(chapter) if chapter else None
            elif chapter:
                counters[level] += 1
                counters[level + 1 :] = [0] * (6 - level)
                number = ".".join(str(n) for n in [chapter, *counters[2 : level + 1]])
            titles = {lang: pick(title, lang) for lang in LANGS}
            for name in pending:
                found[name] = Target(
                    page, None if level == 1 else name, titles, number,
                    "chapter" if level == 1 else "section",
                )
            pending = []
    glossary = BOOK / "glossary.csv"
    if glossary.exists():
        with open(glossary, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                en, ko = row["en"].strip(), row["ko"].strip()
                anchor = "term-" + re.sub(r"[^a-z0-9]+", "-", en.lower()).strip("-")
                found[anchor] = Target("book/glossary", anchor, {"ko": ko, "en": en}, None, "term")
    return found


def chapter_target(stem: str) -> tuple[str, Target]:
    """A chapter's label (``chap-...``, the one before its title) and its target, whose
    ``title`` has the title line's two halves: ``book/05_bahdanau`` → ``("chap-bahdanau", ...)``."""
    page = f"book/{stem}"
    for name, target in targets().items():
        if target.page == page and target.kind == "chapter":
            return name, target
    raise ValueError(f"{page}.md is not a chapter of _toc.yml with a (chap-...)= label before "
                     f"its title")


def page_url(page: str, anchor: str | None = None) -> str:
    url = f"{base_url()}/{page}.html"
    return f"{url}#{anchor}" if anchor else url


def _link(text: str, target: Target) -> str:
    return f"[{text}]({page_url(target.page, target.anchor)})"


def _numbered_name(target: Target, lang: str) -> str:
    key = "chapter" if target.kind == "chapter" else "section"
    return WORDS[lang][key].format(n=target.number)


def _target(label: str, source: Path) -> Target:
    label = label.strip()
    try:
        return targets()[label]
    except KeyError:
        raise ValueError(f"{source.name}: unknown reference target {label!r}") from None


# -- citations ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def bibliography() -> dict[str, dict[str, str]]:
    """The entries of ``references.bib``: key → fields (author, title, year, venue …)."""
    text = (ROOT / "references.bib").read_text(encoding="utf-8")
    entries = {}
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S):
        fields = {}
        for f in re.finditer(r"(\w+)\s*=\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}", m.group(2)):
            fields[f.group(1).lower()] = _detex(f.group(2))
        entries[m.group(1)] = fields
    return entries


def _detex(value: str) -> str:
    accents = {'\\"u': "ü", '\\"o': "ö", '\\"a': "ä", "\\'e": "é", "\\'a": "á",
               "\\`e": "è", "\\c{c}": "ç"}
    for tex, char in accents.items():
        value = value.replace("{" + tex + "}", char).replace(tex, char)
    value = value.replace("--", "–")
    return re.sub(r"\s+", " ", value.replace("{", "").replace("}", "")).strip()


def _surnames(entry: dict[str, str]) -> list[str]:
    names = []
    for person in entry.get("author", "").split(" and "):
        person = person.strip()
        names.append(person.split(",")[0].strip() if "," in person else person.split()[-1])
    return names


def _author_year(key: str, source: Path) -> tuple[str, str]:
    entry = bibliography().get(key.strip())
    if entry is None:
        raise ValueError(f"{source.name}: unknown citation key {key!r}")
    names = _surnames(entry)
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} & {names[1]}"
    else:
        who = f"{names[0]} et al."
    return who, entry.get("year", "n.d.")


def reference_line(key: str) -> str:
    entry = bibliography()[key]
    venue = entry.get("journal") or entry.get("booktitle") or entry.get("publisher") or ""
    url = entry.get("url") or (f"https://doi.org/{entry['doi']}" if entry.get("doi") else "")
    people = []
    for person in entry.get("author", "").split(" and "):
        last, _, first = (x.strip() for x in person.partition(",")) if "," in person else (
            person.split()[-1], "", " ".join(person.split()[:-1]))
        initials = " ".join(f"{w[0]}." for w in re.split(r"[\s-]+", first) if w)
        people.append(f"{last}, {initials}" if initials else last)
    authors = ", ".join(people)
    parts = [f"{authors} ({entry.get('year', 'n.d.')}).", f"*{entry['title']}*."]
    if venue:
        parts.append(f"{venue}.")
    if url:
        parts.append(url)
    return "- " + " ".join(parts)


# -- MyST → plain Jupyter markdown ------------------------------------------------------


@dataclass
class Converter:
    """Turns the MyST of one chapter into plain markdown for one language."""

    source: Path
    lang: str
    cited: list[str] = field(default_factory=list)

    def role(self, m: re.Match) -> str:
        role, body = m.group("role"), m.group("body")
        explicit = EXPLICIT.match(body)
        text, label = (explicit["text"], explicit["target"]) if explicit else (None, body)
        text = re.sub(r"\s*\n\s*", " ", text) if text else text
        if role in ("ref", "numref"):
            target = _target(label, self.source)
            if role == "numref":
                if text is None:
                    text = _numbered_name(target, self.lang)
                elif target.number is not None:
                    text = text.replace("%s", target.number).replace("{number}", target.number)
            return _link(text or target.title[self.lang], target)
        if role == "doc":
            page = label if label.startswith("book/") else f"book/{label}"
            title = text or WORDS[self.lang].get(label.split("/")[-1], label.split("/")[-1])
            return f"[{title}]({page_url(page)})"
        if role == "eq":
            return f"({label})"
        if role.startswith("cite"):
            keys = [k.strip() for k in body.split(",") if k.strip()]
            for k in keys:
                if k not in self.cited:
                    self.cited.append(k)
            pairs = [_author_year(k, self.source) for k in keys]
            if role in ("cite:t", "cite:ts"):
                return "; ".join(f"{who} ({year})" for who, year in pairs)
            return "(" + "; ".join(f"{who}, {year}" for who, year in pairs) + ")"
        if role == "term":
            return text or label
        if role == "ev":  # a number from the evidence appendix's data, as the website shows it
            from tools import evidence

            return evidence.role_text(body, evidence.load_specs(), evidence.load_data())
        if role == "math":
            return f"${body}$"
        raise ValueError(f"{self.source.name}: no plain-markdown form for the role {{{role}}}")

    def inline(self, text: str) -> str:
        text = ROLE.sub(self.role, text)

        def local(m: re.Match) -> str:
            target = _target(m.group("label"), self.source)
            return f"]({page_url(target.page, target.anchor)})"

        return LOCAL_LINK.sub(local, text)

    def markdown(self, text: str) -> str:
        """Convert one markdown cell: labels, headings, directives and roles."""
        out: list[str] = []
        plain: list[str] = []  # prose lines, converted together: a role may span a line break

        def flush() -> None:
            if plain:
                out.append(self.inline("\n".join(plain)))
                plain.clear()

        lines = text.splitlines()
        k = 0
        while k < len(lines):
            line = lines[k]
            stripped = line.strip()
            if LABEL.match(stripped):
                k += 1
                continue
            if h := HEADING.match(line):
                flush()
                out.append(f"{h.group(1)} {self.inline(pick(h.group(2), self.lang))}")
                k += 1
                continue
            if m := FENCE_OPEN.match(stripped):
                flush()
                end = k + 1
                while end < len(lines) and lines[end].strip() != m.group("fence"):
                    end += 1
                body = lines[k + 1 : end]
                while body and re.match(r"^:[\w-]+:", body[0].strip()):
                    body = body[1:]
                out += self.directive(m.group("name"), m.group("arg").strip(), body)
                k = end + 1
                continue
            plain.append(line)
            k += 1
        flush()
        return "\n".join(out).strip("\n")

    def directive(self, name: str, arg: str, body: list[str]) -> list[str]:
        inner = self.markdown("\n".join(body))
        if name == "math":
            return ["$$", inner, "$$"]
        if name in ("figure", "image"):
            alt = self.inline(inner.strip()) or WORDS[self.lang]["website"]
            return [f"![{alt}]({arg})"]
        if name == "admonition":
            title = self.inline(pick(arg, self.lang))
        else:
            title = WORDS[self.lang].get(name, name.capitalize())
        quoted = [f"> {line}" if line.strip() else ">" for line in inner.splitlines()]
        return [f"> **{title}**", ">", *quoted]


# -- notebooks ---------------------------------------------------------------------------


def version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def repository_url() -> str:
    url = ((_config().get("repository") or {}).get("url") or "").rstrip("/")
    if not url:
        raise ValueError("_config.yml has no repository.url")
    return url


FIG_COMMENT = {"ko": "그림은 한국어로 그립니다", "en": "figures in English"}


def setup_source(lang: str | None) -> str:
    """The first code cell: in Colab only, install the d2lite release this notebook was made
    for (the tag ``v<version>`` of the repository) and say what was installed."""
    spec = f"d2lite @ git+{repository_url()}@v{version()}"
    comment = {
        "ko": "# Google Colab에서만 이 노트북에 맞는 d2lite를 설치합니다",
        "en": "# Installs the d2lite release this notebook was made for, in Google Colab only",
        None: "# Google Colab에서만 d2lite를 설치합니다 · Installs d2lite only in Google Colab",
    }[lang]
    lines = [comment, "import os", "import sys", ""]
    if lang is not None:
        lines += [f'os.environ["D2LITE_FIG_LANG"] = "{lang}"  # {FIG_COMMENT[lang]}', ""]
    lines += [
        'if "google.colab" in sys.modules:',
        "    import subprocess",
        "    from importlib.metadata import version",
        "",
        f'    spec = "{spec}"',
        '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec], check=True)',
        '    print("d2lite", version("d2lite"), "from", spec)',
    ]
    if lang is None:
        lines = [x for x in lines if not x.startswith("import os")]
    return "\n".join(lines)


def _new_notebook(cells, lang: str | None):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["colab"] = {"provenance": []}
    if lang:
        nb.metadata["language"] = lang
    setup = nbformat.v4.new_code_cell(setup_source(lang))
    setup.metadata["tags"] = ["colab-setup"]
    nb.cells = [setup, *cells]
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"c{k:03d}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.nbformat, nb.nbformat_minor = 4, 5
    nbformat.validate(nb)
    return nb


def _gated_parts(cell) -> list[str | tuple[str, str, str, str | None]]:
    """A shared markdown cell split into its text and its exercise/solution directives, in
    order: text as a string, a directive as (name, edge, argument, label). Empty when the cell
    has no directive (a heading may share a cell with the first ``exercise-start``)."""
    if cell.cell_type != "markdown" or not any(
        GATE.match(line.strip()) for line in cell.source.splitlines()
    ):
        return []
    parts: list[str | tuple[str, str, str, str | None]] = []
    lines, text, k = cell.source.splitlines(), [], 0
    while k < len(lines):
        m = GATE.match(lines[k].strip())
        if not m:
            text.append(lines[k])
            k += 1
            continue
        if "\n".join(text).strip():
            parts.append("\n".join(text))
        text, fence, label = [], m.group(1), None
        k += 1
        while k < len(lines) and lines[k].strip() != fence:  # options up to the closing fence
            option = re.match(r"^:label:\s*(\S+)", lines[k].strip())
            label = option.group(1) if option else label
            k += 1
        k += 1
        parts.append((m["name"], m["edge"], m["arg"].strip(), label))
    if "\n".join(text).strip():
        parts.append("\n".join(text))
    return parts


def reader_notebook(source: Path, lang: str) -> str:
    """The text of the reader notebook of ``source`` in ``lang``."""
    nb = jupytext.read(source)
    conv = Converter(source, lang)
    cells, solutions = [], []
    exercise_numbers: dict[str, int] = {}
    in_solution = None
    for cell in nb.cells:
        parts = _gated_parts(cell)
        for part in parts:
            if isinstance(part, str):  # text beside the directives, e.g. the section heading
                if cell.metadata.get("lang") not in (None, lang):
                    continue
                text = conv.markdown(part)
                if text.strip():
                    (in_solution if in_solution is not None else cells).append(
                        nbformat.v4.new_markdown_cell(text))
                continue
            name, edge, arg, label = part
            if name == "exercise" and edge == "start":
                n = len(exercise_numbers) + 1
                exercise_numbers[label or f"ex-{n}"] = n
                cells.append(nbformat.v4.new_markdown_cell(f"**{WORDS[lang]['exercise']} {n}**"))
            elif name == "solution" and edge == "start":
                n = exercise_numbers.get(arg.split()[0] if arg else "", len(solutions) + 1)
                in_solution = [nbformat.v4.new_markdown_cell(
                    f"### {WORDS[lang]['solution_of'].format(n=n)}")]
            elif name == "solution" and edge == "end" and in_solution is not None:
                solutions += in_solution
                in_solution = None
        if parts:
            continue
        bucket = in_solution if in_solution is not None else cells
        if cell.cell_type == "code":
            code = nbformat.v4.new_code_cell(cell.source)
            tags = cell.metadata.get("tags")
            if tags:
                code.metadata["tags"] = list(tags)
            bucket.append(code)
        elif cell.cell_type == "markdown":
            cell_lang = cell.metadata.get("lang")
            if cell_lang not in (None, lang):
                continue
            text = conv.markdown(cell.source)
            if text.strip():
                bucket.append(nbformat.v4.new_markdown_cell(text))
    if solutions:
        cells.append(nbformat.v4.new_markdown_cell(f"## {WORDS[lang]['solutions']}"))
        cells += solutions
    if conv.cited:
        refs = "\n".join(reference_line(k) for k in conv.cited)
        cells.append(nbformat.v4.new_markdown_cell(f"## {WORDS[lang]['references']}\n\n{refs}"))
    page = f"book/{source.stem}"
    first = next((c for c in cells if c.cell_type == "markdown"), None)
    if first is not None:
        first.source += f"\n\n[{WORDS[lang]['website']}]({page_url(page)})"
    return nbformat.writes(_new_notebook(cells, lang)) + "\n"


def test_notebook(source: Path) -> str:
    """The bilingual notebook that nbval executes: the source's cells as they are, after the
    set-up cell, so both languages' figures are drawn for the website's cache."""
    nb = jupytext.read(source)
    cells = [c for c in nb.cells if c.cell_type in ("code", "markdown")]
    return nbformat.writes(_new_notebook(cells, None)) + "\n"


def notebook_paths(source: Path) -> dict[str, Path]:
    return {lang: NOTEBOOKS / lang / f"{source.stem}.ipynb" for lang in LANGS}


def sync(check: bool) -> list[str]:
    """Write (or, with ``check``, compare) the reader notebooks of every chapter."""
    stale, known = [], set()
    for source in chapter_sources():
        for lang, target in notebook_paths(source).items():
            known.add(target)
            text = reader_notebook(source, lang)
            old = target.read_text(encoding="utf-8") if target.exists() else None
            if old == text:
                continue
            if check:
                state = "missing" if old is None else "out of sync with its .md"
                stale.append(f"{target.relative_to(ROOT)} is {state} (run `make notebooks`)")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target.relative_to(ROOT)}")
    for extra in NOTEBOOKS.glob("*/*.ipynb"):
        if extra not in known:
            stale.append(f"{extra.relative_to(ROOT)} has no chapter source")
    return stale


def write_test_notebooks(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for source in chapter_sources():
        path = directory / f"{source.stem}.ipynb"
        text = test_notebook(source)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    for extra in directory.glob("*.ipynb"):
        if extra not in written:
            extra.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Reader notebooks per chapter and language.")
    parser.add_argument("--check", action="store_true", help="only report missing or stale ones")
    parser.add_argument("--test-dir", type=Path, help="write the notebooks nbval executes here")
    args = parser.parse_args(argv)
    if args.test_dir:
        for path in write_test_notebooks(args.test_dir):
            print(f"wrote {path}")
        return 0
    stale = sync(check=args.check)
    for line in stale:
        print(line)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

"""Sphinx extension: the ``glossary-table`` directive renders ``book/glossary.csv`` as a table.

Usage in a page (the path is relative to the page)::

    ```{glossary-table} glossary.csv
    ```

The table has one row per term, sorted by the English term: English, 한국어, the other
accepted spellings, and whether the bilingual checker (``python -m tools.book check``)
enforces the term. Each row gets the anchor ``term-<english-term>``, registered as a reference
label, so pages link to it with ``{ref}`은닉 상태 <term-hidden-state>` ``; the page is rebuilt
whenever the CSV changes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.book import load_glossary  # noqa: E402

HEADERS = ("영어 · English", "한국어 · Korean", "다른 표기 · Also written", "검사 · Checked")
WIDTHS = (26, 26, 38, 10)


def term_anchor(en: str) -> str:
    """The HTML id of a term's row: ``term-`` and the English term in lowercase-dash form."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", en.lower()).strip("-")


def _cell(text: str, **attrs) -> nodes.entry:
    entry = nodes.entry()
    entry += nodes.paragraph(text=text, **attrs)
    return entry


class GlossaryTable(SphinxDirective):
    """Render the glossary CSV file named in the argument as a table."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0], self.env.docname)
        self.env.note_dependency(rel)
        try:
            terms = load_glossary(Path(path))
        except (OSError, ValueError) as err:
            raise self.error(f"glossary-table: {err}") from err
        table = nodes.table(classes=["glossary-table"])
        group = nodes.tgroup(cols=len(HEADERS))
        table += group
        for width in WIDTHS:
            group += nodes.colspec(colwidth=width)
        head_row = nodes.row()
        for header in HEADERS:
            head_row += _cell(header)
        group += nodes.thead("", head_row)
        body = nodes.tbody()
        std = self.env.get_domain("std")
        for term in sorted(terms, key=lambda t: t.en.lower()):
            anchor = term_anchor(term.en)
            # a label per row, so that {ref}`text <term-...>` resolves (and fails -W when missing)
            std.anonlabels[anchor] = (self.env.docname, anchor)
            std.labels[anchor] = (self.env.docname, anchor, term.en)
            row = nodes.row(ids=[anchor])
            row += _cell(term.en)
            row += _cell(term.ko, lang="ko")
            row += _cell(", ".join(term.en_also + term.ko_also))
            row += _cell("✓" if term.check else "")
            body += row
        group += body
        return [table]


def setup(app):
    app.add_directive("glossary-table", GlossaryTable)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx extension: mark each language's prose so the site's language switch can show or hide it.

MyST-NB keeps no trace of a markdown cell's metadata in the page, so before a chapter is parsed
this extension rewrites each prose cell tagged ``lang: ko`` or ``lang: en`` (jupytext cell
metadata) into a ``{container}`` directive with the class ``lang-ko`` or ``lang-en``. The
switch itself (``_static/lang-switch.js``) sets ``data-book-lang`` on ``<html>`` and
``_static/lang-switch.css`` hides the other language.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext

LANGS = ("ko", "en")


def _fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(4, longest + 1)


def wrap_language_cells(text: str) -> str:
    """Return the MyST notebook text with every ko/en prose cell inside a container."""
    nb = jupytext.reads(text, fmt="md:myst")
    for cell in nb.cells:
        lang = cell.metadata.get("lang")
        if cell.cell_type != "markdown" or lang not in LANGS:
            continue
        fence = _fence_for(cell.source)
        cell.source = f"{fence}{{container}} lang-{lang}\n{cell.source.strip()}\n{fence}"
    # Keep every front-matter key (e.g. a page's `mystnb:` execution settings), not just the
    # kernelspec that jupytext writes by default.
    nb.metadata.setdefault("jupytext", {})["notebook_metadata_filter"] = "all"
    return jupytext.writes(nb, fmt="md:myst")


def _on_source_read(app, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname))
    if path.suffix == ".md" and "format_name: myst" in source[0]:
        source[0] = wrap_language_cells(source[0])


def setup(app):
    # Jupyter Book adds every .css/.js file of the book's _static folder to each page itself,
    # so the switch's lang-switch.js and lang-switch.css need no add_js_file/add_css_file here.
    app.connect("source-read", _on_source_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx extension: mark each language's prose so the site's language switch can show or hide it.

MyST-NB keeps no trace of a markdown cell's metadata in the page, so before a chapter is parsed
this extension rewrites each prose cell tagged ``lang: ko`` or ``lang: en`` (jupytext cell
metadata) into a ``{container}`` directive with the class ``lang-ko`` or ``lang-en``. The
switch itself (``_static/lang-switch.js``) sets ``data-book-lang`` on ``<html>`` and
``_static/lang-switch.css`` hides the other language.

Titles are written once for both languages, ``한국어 · English``. A transform splits every such
title into ``<span class="lang-ko">``, ``<span class="lang-sep"> · </span>`` and
``<span class="lang-en">``, so a heading, the page's table of contents and the numbered section
titles show only the reader's language (both in "both" mode), while the title's plain text (the
browser tab, the search index) keeps both. A reference whose text is such a title shows the
language of the prose it stands in. The navigation that the theme builds from plain text (the
sidebar, breadcrumbs, previous/next links) is split the same way by ``lang-switch.js``.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

LANGS = ("ko", "en")
SEPARATOR = " · "


def split_title(text: str) -> tuple[str, str] | None:
    """``"한국어 · English"`` → ``("한국어", "English")``; None when the text is not bilingual."""
    if SEPARATOR not in text:
        return None
    ko, en = text.split(SEPARATOR, 1)
    return (ko.strip(), en.strip()) if ko.strip() and en.strip() else None


def bilingual_nodes(ko: str, en: str) -> list[nodes.Node]:
    return [
        nodes.inline(ko, ko, classes=["lang-ko"]),
        nodes.inline(SEPARATOR, SEPARATOR, classes=["lang-sep"]),
        nodes.inline(en, en, classes=["lang-en"]),
    ]


def _split_text_children(node: nodes.Element) -> bool:
    """Split the one Text child of ``node`` that holds ``한국어 · English``, in place."""
    for k, child in enumerate(node.children):
        if isinstance(child, nodes.Text) and (pair := split_title(str(child))):
            node.children[k : k + 1] = []
            for offset, new in enumerate(bilingual_nodes(*pair)):
                node.insert(k + offset, new)
            return True
    return False


class SplitBilingualTitles(SphinxTransform):
    """Section titles ``한국어 · English`` become one span per language."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        for title in self.document.findall(nodes.title):
            _split_text_children(title)


def _prose_lang(node: nodes.Node) -> str | None:
    parent = node.parent
    while parent is not None:
        classes = parent.get("classes", []) if isinstance(parent, nodes.Element) else []
        for lang in LANGS:
            if f"lang-{lang}" in classes:
                return lang
        parent = parent.parent
    return None


class LanguageOfReferences(SphinxPostTransform):
    """A reference that shows a bilingual title keeps the language of its paragraph."""

    default_priority = 20
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for ref in list(self.document.findall(nodes.reference)):
            for inline in list(ref.findall(nodes.inline)):
                if "lang-ko" in inline["classes"] or "lang-en" in inline["classes"]:
                    break
            else:
                text = ref.astext()
                pair = split_title(text)
                if pair is None:
                    continue
                lang = _prose_lang(ref)
                target = ref
                # the text may sit in an <inline class="std std-ref"> inside the reference
                while len(target.children) == 1 and isinstance(target[0], nodes.inline):
                    target = target[0]
                target.clear()
                if lang is None:
                    for new in bilingual_nodes(*pair):
                        target += new
                else:
                    target += nodes.Text(pair[LANGS.index(lang)])


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
    app.add_transform(SplitBilingualTitles)
    app.add_post_transform(LanguageOfReferences)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}

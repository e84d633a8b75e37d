"""Sphinx extension: fixes to the theme's pages so that no page logs a console error.

* sphinx-thebe (and sphinx-togglebutton) add their inline configuration scripts with
  ``app.add_js_file(None, body=...)`` from an event that runs once per read of the sources;
  Sphinx does not deduplicate scripts without a file name, so every page carried
  ``const THEBE_JS_URL = ...`` twice and the browser threw "Identifier 'THEBE_JS_URL' has
  already been declared". Jupyter Book also adds every file of ``_static`` itself, so a file
  that an extension adds as well (``colab-lang.js``) was loaded twice. Each page now keeps the
  first copy of each script (same file, or same inline body).
* The theme's download menu printed the page at hand ("Print to PDF"); it offers the whole
  book as a PDF in each language instead: ``make pdf`` (tools/pdf.py) writes them to
  ``_build/html/pdf/``, next to the pages.
* pydata-sphinx-theme writes ``localStorage.mode || default_mode`` into ``<html data-mode>``
  and logs "Got invalid theme mode" when both are empty: the pages' ``default_mode`` is
  ``light`` unless ``html_context`` chooses one.
* sphinx-exercise titles exercises and solutions in the site's language only ("연습 9.1",
  "해답 연습 9.1"), so English mode showed Korean titles: each title now carries both languages
  as ``lang-ko``/``lang-en`` spans, which the language switch shows or hides like any prose.
  It also gives every exercise and solution body the same id (``exercise-content``,
  ``solution-content``); each is numbered on its page (``solution-content-3``), so ids are unique.
"""

from __future__ import annotations

import re

# sphinx-exercise's HTML, with language "ko": the exercise's number and the solution's title
_EXERCISE_NUMBER = re.compile(r'<span class="caption-number">연습 (?P<n>[\d.]+) </span>')
_SOLUTION_TITLE = re.compile(
    r'<p class="admonition-title">해답(?P<a><a class="reference internal" href="[^"]*">) '
    r"연습 (?P<n>[\d.]+)</a>"
)


def _both(ko: str, en: str) -> str:
    """Both languages, with the separator that shows only when both do (as bilingual titles)."""
    return (f'<span class="lang-ko" lang="ko">{ko}</span><span class="lang-sep"> · </span>'
            f'<span class="lang-en" lang="en">{en}</span>')


def bilingual_exercise_titles(body: str) -> str:
    """The page's exercise and solution titles in both languages (see the module's notes)."""
    body = _EXERCISE_NUMBER.sub(
        lambda m: '<span class="caption-number">'
        f'{_both("연습 " + m["n"], "Exercise " + m["n"])} </span>',
        body,
    )
    for kind in ("exercise", "solution"):
        parts = body.split(f'<section id="{kind}-content">')
        body = parts[0] + "".join(
            f'<section id="{kind}-content-{k}">{part}' for k, part in enumerate(parts[1:], 1)
        )
    return _SOLUTION_TITLE.sub(
        lambda m: '<p class="admonition-title">'
        + _both(f'해답 {m["a"]}연습 {m["n"]}</a>', f'Solution to {m["a"]}exercise {m["n"]}</a>'),
        body,
    )


def script_key(script) -> tuple[str, str]:
    """What makes two of a page's scripts the same: the file (without ?v=), or the body."""
    filename = getattr(script, "filename", None)
    if filename is None and isinstance(script, str):
        filename = str(script)
    if filename:
        return ("file", str(filename).split("?", 1)[0])
    attributes = getattr(script, "attributes", {}) or {}
    return ("body", str(attributes.get("body", "")))


def unique_scripts(scripts: list) -> list:
    """The scripts in order, each kept once (its first occurrence)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for script in scripts:
        key = script_key(script)
        if key in seen:
            continue
        seen.add(key)
        out.append(script)
    return out


# The PDFs of the whole book (tools/pdf.py writes them; the names are shared with it).
PDF_DIR = "pdf"
PDF_NAMES = {
    "ko": "attention-transformers-ko.pdf",
    "en": "attention-transformers-en.pdf",
}
PDF_TEXT = {"ko": "PDF (한국어)", "en": "PDF (English)"}
PDF_TOOLTIP = {"ko": "책 전체 PDF (한국어)", "en": "The whole book as a PDF (English)"}


def pdf_buttons(pathto) -> list[dict]:
    """Download-menu entries for the two PDFs, relative to the page (``pathto``)."""
    root = pathto(PDF_DIR, 1)
    return [
        {
            "type": "link",
            "url": f"{root}/{PDF_NAMES[lang]}",
            "text": PDF_TEXT[lang],
            "tooltip": PDF_TOOLTIP[lang],
            "icon": "fas fa-file-pdf",
            "label": f"download-book-pdf-{lang}",
        }
        for lang in ("ko", "en")
    ]


def _replace_print_button(buttons: list, pathto) -> None:
    for i, button in enumerate(list(buttons)):
        if button.get("label") == "download-pdf-button":
            buttons[i : i + 1] = pdf_buttons(pathto)
            return
        if isinstance(button.get("buttons"), list):
            _replace_print_button(button["buttons"], pathto)


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        context["script_files"] = unique_scripts(scripts)
    if isinstance(context.get("body"), str):
        context["body"] = bilingual_exercise_titles(context["body"])
    if not context.get("default_mode"):
        context["default_mode"] = "light"
    buttons = context.get("header_buttons")
    if isinstance(buttons, list) and "pathto" in context:
        _replace_print_button(buttons, context["pathto"])


def setup(app):
    # Late, after every extension (and the theme) has added its scripts to the page.
    app.connect("html-page-context", _on_page_context, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

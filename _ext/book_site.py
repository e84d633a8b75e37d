"""Sphinx extension: small fixes to how the book's pages present themselves.

* The theme offers a "launch in Colab" button on every executable page and, when a page has
  no committed ``.ipynb`` beside its ``.md``, points it at the ``.md`` (which Colab cannot
  open). Only chapters get Colab notebooks (``python -m tools.book notebooks``), so the
  button is removed from every other page (the landing page and the appendix).
"""

from __future__ import annotations

from pathlib import Path

LAUNCH_GROUP = "launch-buttons"


def has_colab_notebook(source: str | Path) -> bool:
    """Whether a page's source file has its Colab notebook (same name, ``.ipynb``) beside it."""
    source = Path(source)
    return source.suffix == ".ipynb" or source.with_suffix(".ipynb").is_file()


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    buttons = context.get("header_buttons")
    if not buttons or pagename not in app.env.all_docs:
        return
    if has_colab_notebook(app.env.doc2path(pagename)):
        return
    context["header_buttons"] = [b for b in buttons if b.get("label") != LAUNCH_GROUP]


def setup(app):
    # After sphinx-book-theme's add_launch_buttons (priority 501) and before rendering.
    app.connect("html-page-context", _on_page_context, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

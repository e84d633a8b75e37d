"""Sphinx extension: small fixes to how the book's pages present themselves.

* The theme offers a "launch in Colab" button on every executable page and points it at the
  page's source next to it (``book/NN_slug.md``, which Colab cannot open). The readers'
  notebooks live in ``notebooks/<lang>/NN_slug.ipynb`` (``make notebooks``): on a chapter the
  button is pointed at the Korean one, and ``_static/colab-lang.js`` switches it to the
  language the reader chose (Korean for "both"). Pages without notebooks (the landing page and
  the appendix) lose the button.
"""

from __future__ import annotations

import re
from pathlib import Path

LAUNCH_GROUP = "launch-buttons"
ROOT = Path(__file__).resolve().parent.parent
COLAB = re.compile(r"^(https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+)/.*$")


def reader_notebook(source: str | Path, lang: str = "ko") -> Path | None:
    """The committed reader notebook of a page's source in ``lang``, if there is one."""
    source = Path(source)
    path = ROOT / "notebooks" / lang / f"{source.stem}.ipynb"
    return path if path.is_file() else None


def _point_colab(buttons: list, stem: str) -> None:
    for button in buttons:
        if isinstance(button.get("buttons"), list):
            _point_colab(button["buttons"], stem)
        url = button.get("url")
        if isinstance(url, str) and (m := COLAB.match(url)):
            button["url"] = f"{m.group(1)}/notebooks/ko/{stem}.ipynb"


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    buttons = context.get("header_buttons")
    if not buttons or pagename not in app.env.all_docs:
        return
    source = Path(app.env.doc2path(pagename))
    if reader_notebook(source) is not None:
        _point_colab(buttons, source.stem)
        return
    context["header_buttons"] = [b for b in buttons if b.get("label") != LAUNCH_GROUP]


def setup(app):
    # After sphinx-book-theme's add_launch_buttons (priority 501) and before rendering.
    app.connect("html-page-context", _on_page_context, priority=502)
    # _static/colab-lang.js: Jupyter Book adds every script of _static to each page itself.
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}

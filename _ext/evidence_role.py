"""Sphinx extension: the ``{ev}`` role shows a number from the evidence appendix's data.

``{ev}`ev-05-attention-gap:held``` shows how many runs of that entry's sweep held,
``:runs`` how many ran, ``:min:<watch>``, ``:median:<watch>`` and ``:max:<watch>`` the spread of
a watched number, formatted as its spec says (``tools/evidence.py``). The text comes from
``evidence/data/<id>.json``, never from the page, and a page that uses the role is rebuilt when
that file changes. An unknown entry or field is an error, which fails the ``-W`` build.
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools import evidence  # noqa: E402

_cache: dict = {}


def _loaded():
    """Specs and data, read once per build and again only when a file under evidence/ changed."""
    files = sorted(evidence.SPECS.glob("*.yaml")) + sorted(evidence.DATA.glob("*.json"))
    key = tuple((str(f), f.stat().st_mtime_ns) for f in files)
    if _cache.get("key") != key:
        _cache.update(key=key, specs=evidence.load_specs(), data=evidence.load_data())
    return _cache["specs"], _cache["data"]


def ev_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    try:
        shown = evidence.role_text(text, *_loaded())
    except evidence.EvidenceError as error:
        message = inliner.reporter.error(str(error), line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    entry_id = text.split(":", 1)[0].strip()
    env.note_dependency(str(evidence.data_path(entry_id)))
    for spec in evidence.SPECS.glob("*.yaml"):
        env.note_dependency(str(spec))
    return [nodes.inline(rawtext, shown, classes=["evidence-number"])], []


def setup(app):
    app.add_role("ev", ev_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

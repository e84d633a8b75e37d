"""What the tools and the tests share about the website: the pages of ``_toc.yml`` in reading
order, and a quiet static file server for the built site on 127.0.0.1.

``tools.notebooks`` (labels, links), ``tools.pdf`` (pages to print, serving the site) and the
browser tests (``tests/conftest.py``, ``tests/test_site.py``) all use these.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.core import ROOT


def toc_pages(root: Path = ROOT) -> list[str]:
    """Docnames of every page in _toc.yml, in reading order (root first), sections included:
    paths without suffix such as ``book/01_rnn``."""
    import yaml  # the book's extra; tools.notebooks must import without it

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [str(n).removesuffix(".md").removesuffix(".ipynb") for n in names]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """The site served on a free port of 127.0.0.1; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()

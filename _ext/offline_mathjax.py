"""Sphinx extension: make sure the site serves MathJax itself, never from a CDN.

Sphinx links MathJax from a CDN by default, which a reader without internet access (and this
project's CI) cannot reach: the math would stay raw ``\\(...\\)``. The PyPI package
``sphinx-mathjax-offline`` (in requirements.txt, listed in ``_config.yml``'s
``extra_extensions``) does the work: it sets ``mathjax_path`` to its ``mathjax/tex-chtml.js``
and, after a build that succeeded, copies its MathJax 3 files to ``_build/html/_static/mathjax/``.

This extension adds what the package lacks, checks that turn a site with raw TeX into a failed
build with one clear message:

* the package is installed, listed as an extension, and holds the MathJax entry file (without
  them the package copies nothing, or is never loaded, and the build still succeeds);
* once every configuration has been read (``config-inited``), ``mathjax_path`` is still the
  local file (a value set elsewhere, such as a CDN address, would win silently).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.errors import ExtensionError

PACKAGE = "sphinx-mathjax-offline"  # the folder name it installs (not a valid module name)
ENTRY = "mathjax/tex-chtml.js"


def mathjax_static_dir() -> Path:
    """The installed folder that holds ``mathjax/`` (raises ExtensionError if missing)."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        static = Path(loc) / "static"
        if (static / ENTRY).is_file():
            return static
    raise ExtensionError(
        f"MathJax for offline use is missing: pip install {PACKAGE} (it is in requirements.txt)"
    )


def _on_config_inited(app, config) -> None:
    mathjax_static_dir()
    if PACKAGE not in app.extensions:
        raise ExtensionError(f"list {PACKAGE} in _config.yml's sphinx.extra_extensions: it "
                             f"copies MathJax into the site")
    if config.mathjax_path != ENTRY:
        raise ExtensionError(f"mathjax_path is {config.mathjax_path!r}, not the site's own "
                             f"{ENTRY!r}: the math would load from elsewhere")


def setup(app):
    app.connect("config-inited", _on_config_inited)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx extension: serve MathJax 3 from the site itself instead of a CDN.

Sphinx links MathJax from a CDN by default, which a reader without internet access (and this
project's CI) cannot reach: the math would stay raw ``\\(...\\)``. The PyPI package
``sphinx-mathjax-offline`` (listed in requirements.txt) ships the MathJax 3.2 files; this
extension adds its folder to ``html_static_path`` so Sphinx copies it to
``_build/html/_static/mathjax/`` and points ``mathjax_path`` at the local ``tex-chtml.js``.
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
    static = str(mathjax_static_dir())
    if static not in config.html_static_path:
        config.html_static_path.append(static)
    config.mathjax_path = ENTRY


def setup(app):
    app.connect("config-inited", _on_config_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

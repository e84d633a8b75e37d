"""The source pipeline: bilingual pairs, exported modules, Colab notebooks, lint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

from tools import book, export
from tools.core import ROOT

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def parse(body: str):
    return jupytext.reads(HEADER + body, fmt="md:myst")


def problems(body: str) -> list[str]:
    return [p.message for p in book.check_notebook(Path("x.md"), parse(body))]


GOOD = """
# 제목 · Title

+++ {"lang": "ko"}

가중치 $\\alpha_i$는 {numref}`fig-a`처럼 3개입니다.

+++ {"lang": "en"}

There are 3 weights $\\alpha_i$, as in {numref}`fig-a`.
"""


def test_the_book_sources_pass_the_bilingual_check():
    found = book.check_sources()
    assert not found, "\n".join(map(str, found))


def test_chapter_code_fits_the_printed_column():
    """STYLE.md: chapter code lines fit the column (88 characters at the PDF's 9 pt)."""
    long = {path.name: book.long_code_lines(path.read_text(encoding="utf-8"))
            for path in book.chapter_sources()}
    assert not any(long.values()), {k: v[:5] for k, v in long.items() if v}
    assert book.long_code_lines("```{code-cell} ipython3\nx = 1  # " + "y" * 90 + "\n```\n")


def test_a_clean_pair_passes():
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    "broken, expected",
    [
        (GOOD.replace("$\\alpha_i$.", "$\\beta_i$.").replace("$\\alpha_i$,", "$\\beta_i$,"),
         "math differ"),
        (GOOD.replace("3 weights", "4 weights"), "numbers differ"),
        (GOOD.replace(", as in {numref}`fig-a`", ""), "references differ"),
        (GOOD.replace('+++ {"lang": "en"}\n', ""), "without an en cell"),
        (GOOD.replace('+++ {"lang": "ko"}', '+++ {"lang": "en"}'), "without a ko cell"),
        (GOOD.replace("# 제목 · Title", "# 제목"), "needs both languages"),
        (GOOD.replace("# 제목 · Title", "# Title · 제목"), "must be Korean"),
        (GOOD + "\n+++\n\nAn English paragraph with no partner.\n", "prose outside a language"),
        (GOOD.replace("가중치 $\\alpha_i$는 {numref}`fig-a`처럼 3개입니다.",
                      "Weights $\\alpha_i$ as in {numref}`fig-a`: 3."), "no Hangul"),
        (GOOD.replace('"ko"}', '"kr"}'), "lang must be"),
    ],
)
def test_the_checker_catches_drift(broken, expected):
    found = problems(broken)
    assert any(expected in m for m in found), found


def test_math_inside_code_is_not_math():
    assert book.math_of("`$PATH` and $x$") == ["x"]
    assert book.numbers_of("단계 12와 $t=3$, `f(7)`") == ["12"]


def test_exported_modules_match_their_chapters():
    proc = subprocess.run(
        [sys.executable, "-m", "tools.export", "--check"], cwd=ROOT, capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_export_detects_drift_and_renders_public_names(tmp_path):
    nb = parse('\n```{code-cell} ipython3\n#@save\ndef f(x):\n    return x\n\n\n_hidden = 1\n```\n'
               '\n```{code-cell} ipython3\nnot_exported = 2\n```\n')
    nb.metadata["d2lite"] = {"export": "demo", "summary": "Demo."}
    text = export.render_module(ROOT / "book" / "99_demo.md", nb)
    assert "def f(x)" in text and "not_exported" not in text
    assert '__all__ = [\n    "f",\n]' in text
    assert "Generated from book/99_demo.md" in text
    nb.cells = [c for c in nb.cells if "#@save" not in c.source]
    with pytest.raises(ValueError, match="has no #@save cell"):
        export.render_module(ROOT / "book" / "99_demo.md", nb)


def test_export_refuses_to_overwrite_a_hand_written_module():
    nb = parse("")
    nb.metadata["d2lite"] = {"export": "utils"}
    with pytest.raises(ValueError, match="hand-written"):
        export.export_target(nb)
    nb.metadata["d2lite"] = {"export": "d2l"}  # the package d2lite/d2l/ would hide a d2l.py
    with pytest.raises(ValueError, match="hand-written subpackage"):
        export.export_target(nb)


def test_ruff_is_clean():
    paths = ["d2lite", "tests", "_ext", "conftest.py", "tools", "notebooks"]
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_language_cells_become_containers_for_the_switch():
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import bilingual
    finally:
        sys.path.pop(0)
    text = bilingual.wrap_language_cells(HEADER + GOOD + '\n```{code-cell} ipython3\n1\n```\n')
    assert "````{container} lang-ko" in text and "````{container} lang-en" in text
    assert "# 제목 · Title" in text and "```{code-cell} ipython3\n1\n```" in text


def test_the_site_serves_mathjax_itself_or_the_build_stops():
    """sphinx-mathjax-offline, listed in _config.yml, copies MathJax into the site;
    _ext/offline_mathjax.py stops the build when it is missing, unlisted or overridden."""
    import types

    import yaml
    from sphinx.errors import ExtensionError

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import offline_mathjax
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
    assert offline_mathjax.PACKAGE in sphinx["extra_extensions"]
    assert "offline_mathjax" in sphinx["local_extensions"]
    assert (offline_mathjax.mathjax_static_dir() / offline_mathjax.ENTRY).is_file()

    def inited(extensions, path):
        app = types.SimpleNamespace(extensions=dict.fromkeys(extensions))
        offline_mathjax._on_config_inited(app, types.SimpleNamespace(mathjax_path=path))

    inited([offline_mathjax.PACKAGE], offline_mathjax.ENTRY)  # as the build has it
    with pytest.raises(ExtensionError, match="extra_extensions"):
        inited([], offline_mathjax.ENTRY)
    with pytest.raises(ExtensionError, match="not the site's own"):
        inited([offline_mathjax.PACKAGE], "https://cdn.example/mathjax/tex-chtml.js")

"""The root conftest.py reads nbval's notebook items: its hooks must be active, and must fail
loudly (not switch off) when nbval's items change."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_item_without_nbval_attributes_is_refused():
    conftest = _root_conftest()

    class FakeCell:  # what a renamed nbval item would look like to the hooks
        nodeid = "book/01_rnn.ipynb::Cell 1"
        fspath = "book/01_rnn.ipynb"

    with pytest.raises(pytest.UsageError, match=r"relies on nbval's IPyNbCell"):
        conftest.check_nbval_item(FakeCell())


def test_the_glyph_hook_fails_a_passing_cell_that_reports_a_missing_glyph(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("1 + 1"),
        nbformat.v4.new_code_cell("print('Glyph 54620 missing from font(s) DejaVu Sans.')"),
    ]
    path = tmp_path / "glyph.ipynb"
    nbformat.write(nb, path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
         "--nbval-lax", str(path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed, 1 passed" in out and "a glyph its font cannot draw" in out, out

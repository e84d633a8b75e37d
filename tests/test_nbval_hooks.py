"""The root conftest.py reads nbval's notebook items: its hooks must be active, and must fail
loudly (not switch off) when nbval's items change."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import nbformat
import pytest

from tools.core import ROOT


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


# -- how make test spreads its work over the workers (conftest.py's schedule) -----------------


class FakeItem:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid


def test_every_chapter_has_a_time_in_the_benchmark_table():
    conftest = _root_conftest()
    seconds = conftest.chapter_seconds()
    chapters = sorted(p.stem for p in (ROOT / "book").glob("[0-9][0-9]_*.md"))
    assert sorted(seconds) == chapters, sorted(set(seconds) ^ set(chapters))
    assert all(0 < s < 120 for s in seconds.values()), seconds


def test_schedule_puts_the_longest_units_first_and_keeps_cells_in_order(tmp_path):
    conftest = _root_conftest()
    bench = tmp_path / "latest.json"
    rows = [{"chapter": c, "wall_s": t} for c, t in
            [("01_rnn", 6.5), ("05_bahdanau", 51.8), ("09_vit", 45.8)]]
    bench.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    conftest.BENCH = bench
    cell = "_build/nbval/{}.ipynb::Cell {}"
    colab = "tests/test_colab.py::test_english_notebook_runs_as_in_colab[{}]"
    items = [FakeItem(n) for n in [
        "tests/test_attention.py::test_a",
        "tests/test_colab.py::test_wheel",
        colab.format("09_vit"),
        "tests/test_pdf.py::test_fonts",
        *[cell.format("01_rnn", k) for k in range(3)],
        *[cell.format("05_bahdanau", k) for k in range(3)],
        "tests/test_attention.py::test_b",
    ]]
    conftest.schedule(items)
    assert [item.nodeid for item in items] == [
        "tests/test_pdf.py::test_fonts",  # printing the PDFs: the longest
        *[cell.format("05_bahdanau", k) for k in range(3)],
        colab.format("09_vit"),
        *[cell.format("01_rnn", k) for k in range(3)],
        # what has no time keeps its order, after the rest
        "tests/test_attention.py::test_a", "tests/test_colab.py::test_wheel",
        "tests/test_attention.py::test_b",
    ]


def test_the_tests_that_need_no_website_run_while_it_is_built():
    conftest = _root_conftest()
    items = [FakeItem(n) for n in [
        "tests/test_site.py::test_a", "tests/test_views_browser.py::test_hover",
        "tests/test_pdf.py::test_fonts", "tests/test_pdf.py::test_outline",
        "tests/test_views_browser.py::test_tap", "tests/test_build.py::test_toc",
    ]]
    conftest.schedule(items)
    assert [item.nodeid for item in items] == [
        "tests/test_pdf.py::test_fonts", "tests/test_pdf.py::test_outline",  # builds the site
        "tests/test_views_browser.py::test_hover", "tests/test_views_browser.py::test_tap",
        "tests/test_site.py::test_a", "tests/test_build.py::test_toc",
    ]


def test_each_colab_door_run_is_a_unit_and_each_notebook_one():
    cls = _root_conftest().chapter_scheduling()
    split = cls.__new__(cls)._split_scope  # how it names units needs none of its state
    runs = ["tests/test_colab.py::test_english_notebook_runs_as_in_colab[05_bahdanau]",
            "tests/test_colab.py::test_english_notebook_runs_as_in_colab[09_vit]"]
    assert [split(n) for n in runs] == runs
    assert split("tests/test_colab.py::test_wheel_holds_only_the_readers_package") == (
        "tests/test_colab.py")
    assert split("_build/nbval/05_bahdanau.ipynb::Cell 7") == "_build/nbval/05_bahdanau.ipynb"
    assert split("tests/test_pdf.py::test_pages_are_numbered_once_through_the_book") == (
        "tests/test_pdf.py")

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


# -- how make test spreads its work over the workers (conftest.py's schedule) -----------------


class FakeItem:
    """What schedule() reads of a pytest item: its node id, file, parameters and fixtures."""

    def __init__(self, nodeid: str, params: dict | None = None, fixtures: tuple = ()):
        self.nodeid = nodeid
        self.fspath = nodeid.split("::")[0]
        self.fixturenames = fixtures
        self.marks = []
        if params is not None:
            self.callspec = type("CallSpec", (), {"params": params})()

    def add_marker(self, mark):
        self.marks.append(mark)

    def group(self) -> str | None:
        names = [m.args[0] for m in self.marks if m.name == "xdist_group"]
        assert len(names) <= 1, names
        return names[0] if names else None


def test_every_chapter_has_a_time_in_the_benchmark_table():
    conftest = _root_conftest()
    seconds = conftest.chapter_seconds()
    chapters = sorted(p.stem for p in (ROOT / "book").glob("[0-9][0-9]_*.md"))
    assert sorted(seconds) == chapters, sorted(set(seconds) ^ set(chapters))
    assert all(0 < s < 120 for s in seconds.values()), seconds


def test_schedule_puts_the_longest_chapters_first_and_keeps_cells_in_order(tmp_path):
    conftest = _root_conftest()
    bench = tmp_path / "latest.md"
    bench.write_text("| chapter | wall (s) |\n| --- | ---: |\n| 01_rnn | 6.5 |\n"
                     "| 05_bahdanau | 51.8 |\n| 09_vit | 45.8 |\n", encoding="utf-8")
    conftest.BENCH = bench
    nb = "_build/nbval/{}.ipynb::Cell {}"
    items = [
        FakeItem("tests/test_attention.py::test_a"),
        FakeItem("tests/test_colab.py::test_wheel"),
        FakeItem("tests/test_colab.py::test_runs[09_vit]",
                 params={"notebook": Path("notebooks/en/09_vit.ipynb")}),
        FakeItem("tests/test_pdf.py::test_fonts", fixtures=("readers", "pdfs")),
        FakeItem("tests/test_pdf.py::test_phone", fixtures=("browser", "server")),
        *[FakeItem(nb.format("01_rnn", k)) for k in range(3)],
        *[FakeItem(nb.format("05_bahdanau", k)) for k in range(3)],
        FakeItem("tests/test_attention.py::test_b"),
    ]
    conftest.schedule(items)
    order = [item.nodeid for item in items]
    assert order[:4] == ["tests/test_pdf.py::test_fonts"] + [nb.format("05_bahdanau", k)
                                                              for k in range(3)]
    assert order[4] == "tests/test_colab.py::test_runs[09_vit]"
    assert order[5:8] == [nb.format("01_rnn", k) for k in range(3)]
    # what has no time keeps its order, after the rest
    assert order[8:] == ["tests/test_attention.py::test_a", "tests/test_colab.py::test_wheel",
                         "tests/test_pdf.py::test_phone", "tests/test_attention.py::test_b"]
    groups = {item.nodeid: item.group() for item in items}
    assert groups["tests/test_colab.py::test_runs[09_vit]"] is None  # a unit of its own
    assert groups["tests/test_pdf.py::test_fonts"] == conftest.PDF_GROUP
    assert groups["tests/test_pdf.py::test_phone"] == "tests/test_pdf.py"
    assert groups["tests/test_attention.py::test_b"] == "tests/test_attention.py"
    assert {groups[nb.format("05_bahdanau", k)] for k in range(3)} == {"nbval-05_bahdanau"}

"""Root pytest hooks: let nbval's execution of the chapters fill the website build's cache.

`make test` executes every chapter once, with nbval (the hooks below must live at the root so
they see the notebook items in book/). The outputs of each fully passing chapter are stored in
the jupyter-cache that the website build reads (`execute_notebooks: cache` in _config.yml), so the
build that follows renders those outputs instead of executing every chapter a second time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent


CACHE = ROOT / "_build" / ".jupyter_cache"
_cell_outputs: dict[str, dict[int, list]] = {}
_failed: set[str] = set()


GLYPH_PROBLEMS = ("does not have a glyph", "missing from font", "missing from the font")
# What the hooks below read from nbval's items (nbval.plugin.IPyNbCell, nbval 0.11): if a new
# nbval renames them, the glyph check and the cache would switch off silently, so we refuse.
NBVAL_ATTRS = ("cell_num", "test_outputs")


def _is_notebook_cell(item) -> bool:
    return str(getattr(item, "fspath", "")).endswith(".ipynb")


def check_nbval_item(item) -> None:
    """Fail loudly unless a notebook item is nbval's IPyNbCell with the attributes we read."""
    missing = [a for a in NBVAL_ATTRS if not hasattr(item, a)]
    kind = type(item)
    if kind.__module__ != "nbval.plugin" or kind.__name__ != "IPyNbCell" or missing:
        raise pytest.UsageError(
            f"conftest.py relies on nbval's IPyNbCell with {NBVAL_ATTRS}; {item.nodeid} is "
            f"{kind.__module__}.{kind.__name__} lacking {missing}: update conftest.py for this "
            "nbval, or the missing-glyph check and the build cache stop working unnoticed"
        )


# -- how `make test` spreads its work over the cores (pytest-xdist, --dist loadgroup) -----------
# A chapter is the longest unit of work: its nbval cells run in one kernel, in order, and its
# Colab-door run is one test. These units go first, the longest first (their times from the last
# `make bench`, benchmarks/latest.md), so that no worker is left alone with a long chapter at the
# end. Every other test module stays whole on one worker, as under --dist loadscope, so that its
# module fixtures are set up once; the tests that read the printed PDFs share one worker, which
# prints them once, and go first among the website's tests.
BENCH = ROOT / "benchmarks" / "latest.md"
PDF_GROUP = "printed-pdfs"
PDF_SECONDS = 150.0  # printing both PDFs and reading them, roughly


def chapter_seconds(bench: Path | None = None) -> dict[str, float]:
    """Each chapter's wall time in the last benchmark table ({} when there is none)."""
    import re

    bench = bench or BENCH
    text = bench.read_text(encoding="utf-8") if bench.is_file() else ""
    return {m[1]: float(m[2]) for m in re.finditer(r"^\| (\d\d_\w+) \| ([\d.]+) \|", text, re.M)}


def work_unit(item, seconds: dict[str, float]) -> tuple[str | None, float]:
    """The xdist group of a test (None: a unit of its own) and how long its unit takes, roughly
    (0 when unknown: such units keep their order, after the known ones)."""
    if _is_notebook_cell(item):
        stem = Path(str(item.fspath)).stem
        return f"nbval-{stem}", seconds.get(stem, 30.0)
    params = getattr(getattr(item, "callspec", None), "params", {})
    notebook = params.get("notebook")
    if isinstance(notebook, Path) and notebook.suffix == ".ipynb":
        return None, seconds.get(notebook.stem, 30.0)
    if "pdfs" in getattr(item, "fixturenames", ()):
        return PDF_GROUP, PDF_SECONDS
    return item.nodeid.split("::")[0], 0.0


def schedule(items: list) -> None:
    """Mark each test with its xdist group and put the longest units first (in place; a stable
    sort, so a chapter's cells keep their order)."""
    seconds = chapter_seconds()
    estimate = {}
    for item in items:
        group, estimate[item.nodeid] = work_unit(item, seconds)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: -estimate[item.nodeid])


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the groups into work units
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        if _is_notebook_cell(item):
            check_nbval_item(item)
    if config.getoption("dist", "no") == "loadgroup":
        schedule(items)


def _glyph_problem(outputs) -> str | None:
    """A missing-glyph report among a cell's outputs (IPython shows, not raises, those that
    happen while it renders a figure at the end of a cell)."""
    for out in outputs:
        texts = [out.get("text", ""), out.get("evalue", ""), *out.get("traceback", [])]
        texts += [str(v) for v in out.get("data", {}).values() if isinstance(v, str)]
        for text in texts:
            if isinstance(text, list):
                text = "".join(text)
            if any(p in text for p in GLYPH_PROBLEMS) and "<img" not in text:
                return text[:500]
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not _is_notebook_cell(item):
        return
    key = str(item.fspath)
    problem = _glyph_problem(item.test_outputs or []) if report.passed else None
    if problem:
        report.outcome = "failed"
        report.longrepr = f"a figure has a glyph its font cannot draw:\n{problem}"
    if report.failed:
        _failed.add(key)
    else:
        _cell_outputs.setdefault(key, {})[item.cell_num] = list(item.test_outputs or [])


def pytest_runtest_teardown(item, nextitem):
    if not _is_notebook_cell(item):
        return
    if nextitem is not None and str(getattr(nextitem, "fspath", "")) == str(item.fspath):
        return
    _cache_chapter(Path(str(item.fspath)))


def _cache_chapter(ipynb: Path) -> None:
    """Store the outputs nbval saw for one chapter as the executed form of its ``.md`` source."""
    import jupytext
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    key = str(ipynb)
    outputs = _cell_outputs.pop(key, {})
    source = ROOT / "book" / f"{ipynb.stem}.md"  # _build/nbval/NN_slug.ipynb ← book/NN_slug.md
    if key in _failed or not source.exists():
        return
    nb = jupytext.read(source)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if sorted(outputs) != list(range(len(code) + 1)):  # cell 0 is the Colab set-up cell
        return
    for count, cell in enumerate(code, start=1):
        cell.execution_count = count
        cell.outputs = outputs[count]
        for out in cell.outputs:
            if out.get("output_type") == "execute_result":
                out["execution_count"] = count
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE.parent / ".jupyter_cache.lock")):
        get_cache(str(CACHE)).cache_notebook_bundle(
            CacheBundleIn(nb, str(source)), check_validity=False, overwrite=True
        )

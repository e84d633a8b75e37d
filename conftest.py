"""Root pytest hooks: let nbval's execution of the chapters fill the website build's cache.

`make test` executes every chapter once, with nbval (the hooks below must live at the root so
they see the notebook items in book/). The outputs of each fully passing chapter are stored in
the jupyter-cache that the website build reads (`execute_notebooks: cache` in _config.yml), so the
build that follows renders those outputs instead of executing every chapter a second time.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.execute import BENCH, CACHE, store
from tools.execute import chapter_seconds as _table_seconds

ROOT = Path(__file__).resolve().parent

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


# -- how `make test` spreads its work over the cores (pytest-xdist, --dist loadscope) -----------
# xdist's loadscope keeps each test module (and each notebook: its cells run in one kernel, in
# order) on one worker. Two changes make the two workers finish together: each Colab-door run of a
# chapter is a unit of its own (ChapterScheduling below), instead of one worker running all
# twelve in a row; and the longest units go first (schedule(), with --no-loadscope-reorder), timed
# by the last `make bench` (benchmarks/latest.json) for chapters and by SECONDS for the slowest
# website modules (tests/test_pdf.py prints and reads the PDFs). Units of unknown length keep
# their order, after these.
SECONDS = {"tests/test_pdf.py": 150.0, "tests/test_site.py": 130.0}
SOLO = re.compile(r"^tests/test_colab\.py::test_english_notebook_runs_as_in_colab\[")


def chapter_seconds(bench: Path | None = None) -> dict[str, float]:
    """Each chapter's wall time alone in the last benchmark ({} when there is none): BENCH, which
    a test may point elsewhere, unless given."""
    return _table_seconds(bench or BENCH)


def estimate(nodeid: str, seconds: dict[str, float]) -> float:
    """About how long the unit of work that holds this test takes (0 when unknown)."""
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):  # an nbval cell: its chapter
        return seconds.get(Path(path).stem, 30.0)
    if SOLO.match(nodeid):
        return seconds.get(nodeid.rsplit("[", 1)[1].rstrip("]"), 30.0)
    return SECONDS.get(path, 0.0)


# Browser tests that need no built website (their pages are made by the test): they go right
# after the first unit, so that while one worker builds the website for the PDFs, the other runs
# them instead of waiting for the build.
SITE_FREE = ("tests/test_views_browser.py",)


def unit(nodeid: str) -> str:
    """The unit of work that holds this test, as ChapterScheduling splits them: a Colab-door run
    alone, else xdist's loadscope unit (the nodeid up to its last ``::``: a module's functions,
    a class's methods, a notebook's cells)."""
    return nodeid if SOLO.match(nodeid) else nodeid.rsplit("::", 1)[0]


def schedule(items: list) -> None:
    """Put the longest units first, in place (a stable sort: a chapter's cells keep their order),
    and the tests that need no website (SITE_FREE) second."""
    seconds = chapter_seconds()
    items.sort(key=lambda item: -estimate(item.nodeid, seconds))
    free = [item for item in items if unit(item.nodeid) in SITE_FREE]
    rest = [item for item in items if unit(item.nodeid) not in SITE_FREE]
    if free and rest:
        first = sum(1 for item in rest if unit(item.nodeid) == unit(rest[0].nodeid))
        items[:] = [*rest[:first], *free, *rest[first:]]


def chapter_scheduling():
    """xdist's loadscope scheduler, but each Colab-door chapter run is a unit of its own."""
    from xdist.scheduler import LoadScopeScheduling

    class ChapterScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return ChapterScheduling


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    return chapter_scheduling()(config, log)


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        if _is_notebook_cell(item):
            check_nbval_item(item)
    # `make test` asks xdist to keep the order of collection: the longest units first
    if not config.getoption("loadscopereorder", True):
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
    key = str(ipynb)
    outputs = _cell_outputs.pop(key, {})
    source = ROOT / "book" / f"{ipynb.stem}.md"  # _build/nbval/NN_slug.ipynb ← book/NN_slug.md
    if key in _failed or not source.exists():
        return
    # cell 0 is the Colab set-up cell; every other cell must have passed
    if sorted(outputs) != list(range(len(outputs))):
        return
    store(source, [outputs[n] for n in range(1, len(outputs))], CACHE)

"""Execute the chapters whose cached outputs are missing or stale, two at a time.

``make book`` runs this before ``jupyter-book build``: Jupyter Book executes the notebooks it
finds stale one after another, and every chapter computes on one thread (each sets
``torch.set_num_threads(1)``), so on a 2-core machine half of the CPU would sit idle through a
fresh clone's first build. Here each stale chapter runs in a kernel of its own, ``--jobs`` at a
time, the longest first (by the last ``make bench``), and its outputs go into the build's
execution cache (``_build/.jupyter_cache``) under the same key Jupyter Book looks up, so the
build then only renders. A chapter that fails is left out of the cache and reported; the build
executes it again and shows the error in its own report.

    python -m tools.execute            # stale chapters, 2 at a time
    python -m tools.execute --jobs 1 02 05
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.core import BENCHMARKS, BUILD, chapter_sources, run_module

CACHE = BUILD / ".jupyter_cache"
BENCH = BENCHMARKS / "latest.json"  # tools.bench's results (latest.md is their table)
TIMEOUT_S = 300  # _config.yml's execute.timeout, per cell

def store(source: Path, outputs: list[list], cache_dir: Path = CACHE) -> bool:
    """Cache a chapter's outputs (one list per code cell, in order) as the executed form of its
    source, under the key the build looks up: the source as read, numbered 1, 2, ... (an
    executed notebook's own kernelspec, which execution rewrites, is part of that key). Stores
    nothing and returns False when the outputs are not one list per code cell."""
    import jupytext
    from filelock import FileLock
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    nb = jupytext.read(source)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if len(outputs) != len(code):
        return False
    for count, (cell, cell_outputs) in enumerate(zip(code, outputs), start=1):
        cell.execution_count = count
        cell.outputs = cell_outputs
        for out in cell.outputs:
            if out.get("output_type") == "execute_result":
                out["execution_count"] = count
    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_dir.parent / f"{cache_dir.name}.lock")):
        get_cache(str(cache_dir)).cache_notebook_bundle(
            CacheBundleIn(nb, str(source)), check_validity=False, overwrite=True
        )
    return True


def chapter_seconds(bench: Path = BENCH) -> dict[str, float]:
    """Each chapter's wall time alone in the last benchmark (``tools.bench``'s JSON; {} when
    there is none)."""
    if not bench.is_file():
        return {}
    rows = json.loads(bench.read_text(encoding="utf-8"))["rows"]
    return {row["chapter"]: float(row["wall_s"]) for row in rows}


def stale(sources: list[Path], cache_dir: Path = CACHE) -> list[Path]:
    """The sources whose code has no executed notebook in the cache."""
    import jupytext
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir))
    missing = []
    for source in sources:
        try:
            cache.match_cache_notebook(jupytext.read(source))
        except KeyError:
            missing.append(source)
    return missing


def longest_first(sources: list[Path], bench: Path = BENCH) -> list[Path]:
    """Sources ordered by their last benchmarked wall time, longest first (unknown: first,
    in their order, since a chapter nobody has timed may be long)."""
    seconds = chapter_seconds(bench)
    return sorted(sources, key=lambda s: -seconds.get(s.stem, float("inf")))


def execute(
    source: Path, cache_dir: Path = CACHE, timeout: int = TIMEOUT_S
) -> tuple[bool, float, str]:
    """Run one notebook in a fresh kernel and cache it: (passed, seconds, error tail)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # one core per chapter, as in make test
    start = time.perf_counter()
    proc = run_module("run_notebook", [source, "--cache", cache_dir, "--timeout", timeout], env)
    return proc.returncode == 0, time.perf_counter() - start, proc.stderr[-2000:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter numbers or stems (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    todo = longest_first(stale(chapter_sources(args.chapters), args.cache))
    if not todo:
        print("tools.execute: every chapter's outputs are cached")
        return 0
    print(f"tools.execute: {len(todo)} chapter(s) to execute, {args.jobs} at a time", flush=True)
    start = time.perf_counter()
    failed = []

    def run(source: Path) -> None:
        passed, seconds, error = execute(source, args.cache)
        print(f"  {source.stem}: {'ok' if passed else 'FAILED'} in {seconds:.1f} s", flush=True)
        if not passed:
            failed.append(source.stem)
            print(error, file=sys.stderr, flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(run, todo))
    print(f"tools.execute: {time.perf_counter() - start:.1f} s in all"
          + (f"; failed (the build runs them again): {', '.join(failed)}" if failed else ""))
    return 0  # the build that follows reports a failing chapter in full


if __name__ == "__main__":
    raise SystemExit(main())

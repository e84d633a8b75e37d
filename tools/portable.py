"""Run chapters as another machine would: other seeds, other SIMD paths.

A chapter's asserts must hold for any seed and any correct numeric path, not only on the machine
it was written on. This tool executes chapters (their ``book/*.md`` sources, in a fresh kernel)
under a seed offset (``D2LITE_SEED_OFFSET``, see ``d2l.seed_offset``) and a math-kernel path, and
lists every cell that raised, with its error::

    python -m tools.portable 02 05 --offsets 0 1 2 3 --simd native avx2 sse42

Chapters may be given by number or file stem; none means all. ``--jobs`` runs that many kernels
at once (one compute thread each). The same variables reproduce a failure by hand, for example
``D2LITE_SEED_OFFSET=3 ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2 make test``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.core import BOOK, SIMD_PATHS, chapter_sources, run_env, run_module

# The Colab-door pass of `make test` (tests/test_colab.py) runs every reader notebook this way:
# a seed offset and a math-kernel path other than the nbval pass's (offset 0, native), which fills
# the website. `make test PORTABLE_OFFSET=3 PORTABLE_SIMD=sse42` picks others.
DEFAULT_OFFSET = 5


def default_simd(cpu_flags: set[str] | None = None) -> str:
    """The Colab door's math-kernel path: AVX2, what most readers' CPUs run, when this CPU has
    AVX-512 (then AVX2 is not its own path); else SSE4.2, the narrowest. (On an AVX-512 CPU,
    SSE4.2 took 18% more CPU time than AVX2 for chapter 8, for no check that AVX2 misses.)"""
    if cpu_flags is None:
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        cpu_flags = {f for line in text.splitlines() if line.startswith("flags")
                     for f in line.split(":", 1)[1].split()}
    return "avx2" if "avx512f" in cpu_flags else "sse42"


def portable_env(offset: int | None = None, simd: str | None = None) -> dict[str, str]:
    """The variables that make a run look like another machine's (``$D2LITE_PORTABLE_OFFSET``
    and ``$D2LITE_PORTABLE_SIMD`` when set, else the defaults above)."""
    if offset is None:
        offset = int(os.environ.get("D2LITE_PORTABLE_OFFSET") or DEFAULT_OFFSET)
    if simd is None:
        simd = os.environ.get("D2LITE_PORTABLE_SIMD") or default_simd()
    if simd not in SIMD_PATHS:
        raise ValueError(f"the SIMD path must be one of {sorted(SIMD_PATHS)}, got {simd!r}")
    if offset < 0:
        raise ValueError(f"the seed offset must be a non-negative integer, got {offset}")
    return {"D2LITE_SEED_OFFSET": str(offset), **SIMD_PATHS[simd]}


def run_one(source: Path, offset: int, simd: str) -> dict:
    """Execute one chapter in a fresh kernel (``tools.run_notebook``) under a seed offset and a
    SIMD path: its wall time and the cells that raised."""
    env = run_env(simd)
    env.update(portable_env(offset, simd))
    start = time.perf_counter()
    out = run_module("run_notebook", [source, "--allow-errors"], env, cwd=BOOK)
    result = {"chapter": source.stem, "offset": offset, "simd": simd}
    if out.returncode != 0:
        result.update(wall=round(time.perf_counter() - start, 1),
                      failures=[{"cell": 0, "error": out.stderr[-800:], "source": "(kernel)"}])
    else:
        run = json.loads(out.stdout.strip().splitlines()[-1])
        result.update(wall=round(run["wall"], 1), failures=run["failures"])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter numbers or stems (default: all)")
    parser.add_argument("--offsets", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--simd", nargs="+", choices=sorted(SIMD_PATHS), default=["native"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    runs = list(itertools.product(chapter_sources(args.chapters), args.offsets, args.simd))
    failed = 0
    results = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(lambda r: run_one(*r), runs):
            results.append(result)
            mark = "ok  " if not result["failures"] else "FAIL"
            print(f"{mark} {result['chapter']:24} offset {result['offset']:<3} "
                  f"{result['simd']:7} {result['wall']:6.1f} s", flush=True)
            for f in result["failures"]:
                print(f"       cell {f['cell']}: {f['error']}\n         at: {f['source']}",
                      flush=True)
            failed += bool(result["failures"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    print(f"{len(runs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

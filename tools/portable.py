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
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The math-kernel paths: ATen's vectorised kernels (ATEN_CPU_CAPABILITY), MKL's BLAS
# (MKL_ENABLE_INSTRUCTIONS) and oneDNN (ONEDNN_MAX_CPU_ISA) each pick their own code for the CPU
# they find; these settings make them take a narrower one, as an older or other CPU would.
SIMD_PATHS: dict[str, dict[str, str]] = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "sse42": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
              "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "cnr": {"MKL_CBWR": "COMPATIBLE"},
}

# The Colab-door pass of `make test` (tests/test_colab.py) runs every reader notebook this way:
# a seed offset and a math-kernel path other than the nbval pass's (offset 0, native), which fills
# the website. `make test PORTABLE_OFFSET=3 PORTABLE_SIMD=avx2` picks others.
DEFAULT_OFFSET = 5
DEFAULT_SIMD = "sse42"


def portable_env(offset: int | None = None, simd: str | None = None) -> dict[str, str]:
    """The variables that make a run look like another machine's (``$D2LITE_PORTABLE_OFFSET``
    and ``$D2LITE_PORTABLE_SIMD`` when set, else the defaults above)."""
    if offset is None:
        offset = int(os.environ.get("D2LITE_PORTABLE_OFFSET") or DEFAULT_OFFSET)
    if simd is None:
        simd = os.environ.get("D2LITE_PORTABLE_SIMD") or DEFAULT_SIMD
    if simd not in SIMD_PATHS:
        raise ValueError(f"the SIMD path must be one of {sorted(SIMD_PATHS)}, got {simd!r}")
    if offset < 0:
        raise ValueError(f"the seed offset must be a non-negative integer, got {offset}")
    return {"D2LITE_SEED_OFFSET": str(offset), **SIMD_PATHS[simd]}


_RUN = r"""
import json, re, sys, time
import jupytext
from nbclient import NotebookClient
nb = jupytext.read(sys.argv[1])
client = NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=True)
start = time.perf_counter()
client.execute()
wall = time.perf_counter() - start
failures = []
code = [c for c in nb.cells if c.cell_type == "code"]
ansi = re.compile(r"\x1b\[[0-9;]*m")
arrow = re.compile(r"^\s*-+>\s*(\d+\s.*)$")  # "---> 14 assert ..." (IPython's marker)
for i, cell in enumerate(code, start=1):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            # IPython marks the line that raised with an arrow in the cell's traceback frame
            frames = [ansi.sub("", t) for t in out.get("traceback", [])]
            lines = [ln for t in frames for ln in t.splitlines()]
            marked = [m.group(1) for m in map(arrow.match, lines) if m]
            line = marked[0] if marked else cell.source.strip()
            failures.append({"cell": i, "error": f"{out['ename']}: {out['evalue']}"[:400],
                             "source": line.splitlines()[-1][:140]})
print(json.dumps({"wall": round(wall, 1), "failures": failures}))
"""


def chapter_sources(names: list[str]) -> list[Path]:
    everything = sorted(p for p in (ROOT / "book").glob("[0-9][0-9]_*.md"))
    if not names:
        return everything
    chosen = []
    for name in names:
        match = [p for p in everything if p.stem == name or p.stem.startswith(f"{name}_")]
        if not match:
            raise SystemExit(f"no chapter {name!r} in book/ (have {[p.stem for p in everything]})")
        chosen += match
    return chosen


def run_env(simd: str) -> dict[str, str]:
    """This process's environment for a chapter run on the SIMD path ``simd``: only that path's
    kernel variables, figures in English, one compute thread unless set, the repository
    importable. The seed offset is the caller's to add."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MKL_", "ATEN_", "ONEDNN_"))}
    env.update(SIMD_PATHS[simd])
    env.update({"D2LITE_FIG_LANG": "en",
                "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
                "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(":"),
                "MPLBACKEND": "Agg", "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    return env


def run_one(source: Path, offset: int, simd: str) -> dict:
    env = run_env(simd)
    env.update(portable_env(offset, simd))
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _RUN, str(source)], env=env, cwd=ROOT / "book",
                         capture_output=True, text=True)
    result = {"chapter": source.stem, "offset": offset, "simd": simd}
    if out.returncode != 0:
        result.update(wall=round(time.perf_counter() - start, 1),
                      failures=[{"cell": 0, "error": out.stderr[-800:], "source": "(kernel)"}])
    else:
        result.update(json.loads(out.stdout.strip().splitlines()[-1]))
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

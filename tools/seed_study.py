"""Study a chapter's claims over many seed offsets, in one process.

``tools.portable`` runs a chapter the way a reader's machine does (a fresh kernel per run), which
costs a kernel start and every figure twice. To learn what a claim does across seeds (how often
it holds, how far its numbers spread) you need many more runs than that affords. This tool
executes a chapter's code cells once per offset in a single Python process, figures drawn in one
language, and reports per offset which cells raised and the values of expressions you name::

    python -m tools.seed_study 02 --offsets 300-399 --simd sse42 \
        --watch "np.median(lstm_acc[:, -1])" --upto 40

At the end it lists, per failing cell, the offsets where it failed, and for each numeric watch
expression its minimum, median and maximum: the counts and the spread that the prose reports
("in 98 of 100 runs ..."). A failure found here is confirmed with ``tools.portable`` (a real
kernel) before a claim is changed. ``--upto N`` stops after code cell N and ``--skip`` leaves
cells out (cells are numbered from 1, as nbval and ``tools.portable`` number them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from tools.core import BOOK, SIMD_PATHS, chapter_sources, run_env


def parse_offsets(text: str) -> list[int]:
    """``"300-399"``, ``"5"`` or ``"1,4,9"`` (also mixed: ``"0-3,10"``) as a list of offsets."""
    offsets: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                low, high = (int(p) for p in part.split("-", 1))
                if high < low:
                    raise ValueError
                offsets += range(low, high + 1)
            else:
                offsets.append(int(part))
        except ValueError:
            raise SystemExit(f"offsets are non-negative integers or ranges like 300-399, "
                             f"got {text!r}") from None
    if not offsets or min(offsets) < 0:
        raise SystemExit(f"offsets are non-negative integers or ranges like 300-399, got {text!r}")
    return offsets


def summarize(results: list[dict], watch: list[str]) -> list[str]:
    """The closing lines: failures per cell with their offsets, and the spread of each value."""
    lines = []
    by_cell: dict[int, list[int]] = {}
    for result in results:
        for failure in result["failures"]:
            by_cell.setdefault(failure["cell"], []).append(result["offset"])
    runs = len(results)
    for cell, offsets in sorted(by_cell.items()):
        lines.append(f"cell {cell}: failed in {len(offsets)} of {runs} runs, offsets "
                     + " ".join(map(str, offsets)))
    for expression in watch:
        numbers = [r["values"][expression] for r in results
                   if isinstance(r["values"].get(expression), float)]
        if numbers:
            lines.append(f"{expression}: min {min(numbers):.4g}, median "
                         f"{statistics.median(numbers):.4g}, max {max(numbers):.4g} "
                         f"({len(numbers)} runs)")
        else:
            lines.append(f"{expression}: no numeric value")
    lines.append(f"{runs - len({o for offs in by_cell.values() for o in offs})} of {runs} runs "
                 f"passed every cell")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="chapter number or file stem (e.g. 02), or a .md path")
    parser.add_argument("--offsets", required=True, help="e.g. 300-399 or 0-3,10")
    parser.add_argument("--simd", choices=sorted(SIMD_PATHS), default="native")
    parser.add_argument("--watch", nargs="+", action="extend", default=[],
                        help="expressions evaluated after the last cell, e.g. 'bleu_score';"
                        " repeat the flag or list several")
    parser.add_argument("--upto", type=int, default=10**6, help="stop after this code cell")
    parser.add_argument("--skip", default="", help="code cells to leave out, e.g. 12,14")
    parser.add_argument("--verbose", action="store_true", help="show what the cells print")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.chapter.endswith(".md"):
        source = Path(args.chapter).resolve()
        if not source.is_file():
            raise SystemExit(f"no such chapter source: {args.chapter}")
    else:
        found = chapter_sources([args.chapter])
        if len(found) != 1:
            raise SystemExit(f"{args.chapter!r} names {len(found)} chapters: "
                             f"{[p.stem for p in found]}; give the whole stem")
        (source,) = found
    try:
        skip = sorted({int(s) for s in args.skip.split(",") if s.strip()})
    except ValueError:
        raise SystemExit(f"--skip takes cell numbers like 12,14, got {args.skip!r}") from None
    # tools.cell_runner (also the evidence appendix's runner) sets D2LITE_SEED_OFFSET per seed
    spec = {"source": str(source), "seeds": parse_offsets(args.offsets), "stop": args.upto,
            "skip": skip, "watch": {e: e for e in args.watch}, "verbose": args.verbose}
    results = []
    with subprocess.Popen([sys.executable, "-m", "tools.cell_runner", json.dumps(spec)],
                          env=run_env(args.simd), cwd=BOOK, stdout=subprocess.PIPE,
                          text=True) as worker:
        assert worker.stdout is not None
        for line in worker.stdout:
            if not line.startswith('{"seed"'):  # something printed past the cells' capture
                print(line, end="", file=sys.stderr)
                continue
            result = json.loads(line)
            result["offset"] = result.pop("seed")
            results.append(result)
            mark = "ok  " if not result["failures"] else "FAIL"
            values = " | ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                                for k, v in result["values"].items())
            print(f"{mark} offset {result['offset']:<4} {args.simd:6} {result['wall']:6.1f} s"
                  + (f"  {values}" if values else ""), flush=True)
            for f in result["failures"]:
                print(f"       cell {f['cell']}: {f['error']}\n         at: {f['source']}",
                      flush=True)
    if worker.returncode != 0:
        print(f"the worker stopped with exit status {worker.returncode}", file=sys.stderr)
        return 2
    for line in summarize(results, args.watch):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 1 if any(r["failures"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())

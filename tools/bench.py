"""Benchmark: execute each chapter alone, then the whole book two at a time; record wall time,
peak memory and device.

``python -m tools.bench`` (or ``make bench``) writes ``benchmarks/latest.md`` (a Markdown
table that the README quotes) and ``benchmarks/latest.json``, then runs
``tools.bench_attention`` (``benchmarks/attention.md``: attention speed and memory
beside PyTorch's kernels) and ``tools.bench_lm`` (``benchmarks/lm.md``: training throughput of
d2l.GPT beside the same model from PyTorch's layers). ``--attention-only`` and
``--chapters-only`` run one half.
Budgets: each chapter ≤ 60 s on a 2-core CPU, the whole book ≤ 5 min. A reader runs one
chapter at a time (Colab's free machine has two cores), so the chapter column times every
chapter alone; the whole book is then timed as ``make book`` and ``make test`` run it,
``--jobs`` chapters at a time, and that pass's times of each chapter beside another are shown too.
This measures; it is not a test and never fails on time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.core import BENCHMARKS, chapter_sources, device_name, run_module
from tools.execute import longest_first

CHAPTER_BUDGET_S = 60
BOOK_BUDGET_S = 5 * 60

def run_chapter(source: Path, env: dict[str, str] | None = None) -> dict:
    """Execute one chapter in a fresh kernel (``tools.run_notebook``); return wall seconds and
    the kernel's peak RSS. A failing cell fails the benchmark."""
    proc = run_module("run_notebook", [source, "--timeout", 600], env)
    if proc.returncode != 0:
        raise RuntimeError(f"{source.name} failed:\n{proc.stderr[-3000:]}")
    run = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall_s": run["wall"], "peak_mib": run["peak_mib"]}


def cpu_name(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's model name and clock as the OS reports them (Linux's /proc/cpuinfo),
    else ``platform.processor()``: two machines of one kind can differ 1.5-fold in speed, so a
    timing table says which CPU it was measured on."""
    fields: dict[str, str] = {}
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown CPU"
    mhz = fields.get("cpu MHz", "")
    try:
        return f"{name} at {float(mhz) / 1000:.2f} GHz"
    except ValueError:
        return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems, e.g. 01_rnn (default: all)")
    parser.add_argument("--out", default=str(BENCHMARKS / "latest"))
    half = parser.add_mutually_exclusive_group()
    half.add_argument("--attention-only", action="store_true", help="only benchmarks/attention.md")
    half.add_argument("--chapters-only", action="store_true", help="only the chapter table")
    parser.add_argument("--jobs", type=int, default=2,
                        help="chapters run at a time (default 2, as make test and make book run "
                             "them: each computes on one thread)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.attention_only:
        from tools import bench_attention, bench_lm

        return bench_attention.main([]) or bench_lm.main([])
    sources = [s for s in chapter_sources() if not args.chapters or s.stem in args.chapters]
    device = device_name()
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # one core per chapter, as the chapters set it

    def run_all(jobs: int) -> tuple[dict[str, dict], float]:
        """Every chapter, jobs at a time (the longest first, as tools.execute): the results
        by chapter and the wall time of the whole pass."""
        results: dict[str, dict] = {}

        def run(source: Path) -> None:
            result = run_chapter(source, env)
            results[source.stem] = result
            print(f"{source.stem:28s} {result['wall_s']:7.1f} s {result['peak_mib']:8.0f} MiB"
                  f" ({jobs} at a time)", flush=True)

        start = time.perf_counter()
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(run, longest_first(sources)))
        return results, time.perf_counter() - start

    alone, one_by_one = run_all(1)
    beside, total = run_all(args.jobs) if args.jobs > 1 else (alone, one_by_one)
    rows = [{"chapter": s.stem, **alone[s.stem], "beside_s": beside[s.stem]["wall_s"],
             "device": device} for s in sources]
    at_a_time = ("one at a time" if args.jobs == 1 else
                 f"{args.jobs} at a time, the longest first, each in its own kernel (as make "
                 f"book and make test run them)")
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()} ({cpu_name()}), {device}. "
        f"Each chapter alone (as a reader runs one), then the whole book {at_a_time}.",
        "",
        "| chapter | alone (s) | beside another (s) | peak memory (MiB) | device | "
        "within 60 s |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        ok = "yes" if r["wall_s"] <= CHAPTER_BUDGET_S else "**no**"
        lines.append(f"| {r['chapter']} | {r['wall_s']:.1f} | {r['beside_s']:.1f} | "
                     f"{r['peak_mib']:.0f} | {r['device']} | {ok} |")
    within = "yes" if total <= BOOK_BUDGET_S else "**no**"
    lines.append(f"| **whole book** | {one_by_one:.1f} | {total:.1f} | | | "
                 f"within 5 min: {within} |")
    lines += ["", f"The whole book took {one_by_one:.1f} s one chapter after another and "
                  f"{total:.1f} s {args.jobs} at a time; the 5-minute budget is the latter, "
                  f"how make book runs it."]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = {"total_s": total, "one_by_one_s": one_by_one, "jobs": args.jobs, "rows": rows}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    print("\n".join(lines))
    if not args.chapters_only:
        from tools import bench_attention, bench_lm

        return bench_attention.main([]) or bench_lm.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main())

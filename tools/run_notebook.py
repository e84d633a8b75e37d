"""Execute one chapter in a fresh Jupyter kernel and print one JSON line about the run.

The worker of ``tools.portable`` (other seeds and SIMD paths), ``tools.bench`` (wall time and
peak memory) and ``tools.execute`` (filling the build's execution cache). Each starts it as
``python -m tools.run_notebook SOURCE [options]`` in an environment of its own (a seed offset
and a math-kernel path must be set before PyTorch loads)::

    python -m tools.run_notebook book/02_bptt_lstm.md --allow-errors
    python -m tools.run_notebook book/02_bptt_lstm.md --cache _build/.jupyter_cache

The kernel works in the source's folder (``book/``, where a chapter finds its files). The line
printed last is ``{"wall": seconds, "peak_mib": the kernel's peak resident memory, "failures":
[{"cell": n, "error": "...", "source": "the line that raised"}, ...]}``, code cells counted from
1 as nbval counts them. Without ``--allow-errors`` the first failing cell stops the run with its
traceback on standard error and exit status 1; ``--cache DIR`` then stores the outputs under the
key Jupyter Book looks up (``tools.execute.store``).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ARROW = re.compile(r"^\s*-+>\s*(\d+\s.*)$")  # "---> 14 assert ..." (IPython's marker)


def failures_of(nb) -> list[dict]:
    """Every code cell of an executed notebook that raised: its number (from 1), the error and
    the line IPython marked in the traceback (else the cell's last line)."""
    failures = []
    code = [c for c in nb.cells if c.cell_type == "code"]
    for number, cell in enumerate(code, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            frames = [ANSI.sub("", t) for t in out.get("traceback", [])]
            lines = [line for frame in frames for line in frame.splitlines()]
            marked = [m.group(1) for m in map(ARROW.match, lines) if m]
            line = marked[0] if marked else cell.source.strip()
            failures.append({"cell": number, "error": f"{out['ename']}: {out['evalue']}"[:400],
                             "source": (line.splitlines() or [""])[-1][:140]})
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a chapter's MyST source (book/NN_*.md)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a cell may take")
    parser.add_argument("--allow-errors", action="store_true",
                        help="run every cell and list the failing ones instead of stopping")
    parser.add_argument("--cache", type=Path, help="store the outputs in this jupyter-cache")
    args = parser.parse_args(argv)

    import jupytext
    from nbclient import NotebookClient

    source = args.source.resolve()
    nb = jupytext.read(source)
    client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                            allow_errors=args.allow_errors,
                            resources={"metadata": {"path": str(source.parent)}})  # fmt: skip
    start = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - start
    if args.cache is not None:
        from tools.execute import store

        if not store(source, [c.outputs for c in nb.cells if c.cell_type == "code"], args.cache):
            raise SystemExit(f"{source.name}: the outputs do not match its code cells")
    kernel = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel ran as our child
    print(json.dumps({"wall": round(wall, 3), "peak_mib": kernel.ru_maxrss / 1024,
                      "failures": failures_of(nb)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

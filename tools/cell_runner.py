"""Run a chapter's code cells in this process, once per seed, and print one JSON line per run.

This is the worker of ``tools.evidence`` (a program of its own, started with ``python -m``, so
that each sweep gets a fresh interpreter with the numeric path's variables set before PyTorch
loads). Its one argument is a JSON object::

    {"source": "book/05_bahdanau.md", "seeds": [1, 2], "stop": 27, "skip": [12],
     "watch": {"gap": "float(median_gap)"}}

``stop`` and ``skip`` are code-cell numbers counted from 1 (as nbval numbers them). For each seed
the worker sets ``D2LITE_SEED_OFFSET``, runs cells 1..stop in a fresh namespace (a cell that
raises is recorded and the run goes on, so that later failures are seen too), evaluates the
watch expressions, and prints ``{"seed": ..., "failures": [...], "values": {...}, "wall": ...}``
(with ``"verbose": true`` it also writes what the cells printed to standard error).
``tools.seed_study`` runs its chapters through this worker too.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
import traceback


def code_cells(source: str) -> list[str]:
    """The code cells of a MyST chapter, without IPython magics and shell lines."""
    import jupytext

    cells = [c for c in jupytext.read(source).cells if c.cell_type == "code"]
    return ["\n".join(line for line in c.source.splitlines()
                      if not line.lstrip().startswith(("%", "!"))) for c in cells]


def run_cells(cells: list[str], stop: int, skip: set[int],
              shown: io.StringIO | None = None) -> tuple[dict, list[dict]]:
    """Execute cells 1..stop (leaving out ``skip``) in a new namespace; return it and failures.
    What the cells print goes to ``shown`` (or nowhere)."""
    import matplotlib.pyplot as plt

    scope: dict = {"__name__": "__main__"}
    failures = []
    for number, source in enumerate(cells[:stop], start=1):
        if number in skip:
            continue
        try:
            with contextlib.redirect_stdout(shown if shown is not None else io.StringIO()):
                exec(compile(source, f"cell {number}", "exec"), scope)
        except Exception as error:  # a failing cell is a result: the run goes on
            frames = [f for f in traceback.extract_tb(error.__traceback__)
                      if f.filename == f"cell {number}"]
            line = source.splitlines()[frames[-1].lineno - 1].strip() if frames else ""
            failures.append({"cell": number, "error": f"{type(error).__name__}: {error}"[:300],
                             "source": line[:160]})
        plt.close("all")
    return scope, failures


def watch_values(scope: dict, watch: dict[str, str]) -> dict[str, float | str]:
    """Each watch expression evaluated in ``scope``: a float, the repr of a value that is no
    number, or the error it raised."""
    values: dict[str, float | str] = {}
    for name, expression in watch.items():
        try:
            value = eval(expression, scope)
            values[name] = float(value) if hasattr(value, "__float__") else repr(value)
        except Exception as error:
            values[name] = f"error: {type(error).__name__}: {error}"[:200]
    return values


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    # A sweep is a build step, like make test: on the CPU unless D2LITE_DEVICE says otherwise
    # (a plain Python process is not "unattended" to d2l.try_gpu, which would take a GPU).
    os.environ.setdefault("D2LITE_DEVICE", "cpu")
    spec = json.loads((argv if argv is not None else sys.argv[1:])[0])
    cells = code_cells(spec["source"])
    for seed in spec["seeds"]:
        os.environ["D2LITE_SEED_OFFSET"] = str(seed)
        start = time.perf_counter()
        shown = io.StringIO()
        scope, failures = run_cells(cells, spec["stop"], set(spec["skip"]), shown)
        result = {"seed": seed, "failures": failures,
                  "values": watch_values(scope, spec["watch"]),
                  "wall": round(time.perf_counter() - start, 1)}
        if spec.get("verbose"):
            print(shown.getvalue(), file=sys.stderr, flush=True)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

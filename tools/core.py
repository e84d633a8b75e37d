"""What every tool shares: where things are, which files are chapters, how a chapter is run.

* ``ROOT``, ``BOOK``, ``BUILD``, ``BENCHMARKS``: the repository and its folders.
* ``chapter_sources(names)``: the numbered chapters ``book/NN_*.md`` (all, or those named by
  number or stem); ``page_sources()``: every MyST page of ``book/`` (chapters, landing page,
  appendix); ``chapter_number``: a page's chapter number.
* ``SIMD_PATHS`` and ``run_env(simd)``: the environment a chapter runs under (a math-kernel
  path, figures in English, one compute thread, the repository importable);
  ``run_module(name, args, env)``: one of the tools' worker programs (``python -m tools.<name>``)
  in a fresh interpreter; ``device_name()``: what the benchmark tables say the chapters ran on.

Only the standard library: ``python -m tools.colab_env --base`` runs on the system's Python,
before ``.venv`` exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
BENCHMARKS = ROOT / "benchmarks"

CHAPTER_GLOB = "[0-9][0-9]_*.md"


def chapter_sources(names: Sequence[str] = (), book: Path = BOOK) -> list[Path]:
    """The chapters of the book, ``book/NN_*.md`` in file-name order (each gets reader
    notebooks, an nbval run and a Colab-door run). ``names`` picks some by number (``"2"``,
    ``"02"``) or stem (``"02_bptt_lstm"``), in the order given; an unknown name is an error
    that lists the chapters there are."""
    everything = sorted(book.glob(CHAPTER_GLOB))
    if not names:
        return everything
    chosen: list[Path] = []
    for name in names:
        match = [p for p in everything if p.stem == name or p.stem.startswith(f"{name}_")
                 or (name.isdigit() and int(name) == int(p.stem[:2]))]
        if not match:
            raise SystemExit(f"no chapter {name!r} in {book.name}/ "
                             f"(have {[p.stem for p in everything]})")
        chosen += match
    return chosen


def page_sources(book: Path = BOOK) -> list[Path]:
    """Every MyST notebook page of the book: chapters, the landing page and the appendix."""
    return sorted(p for p in book.glob("*.md") if "format_name: myst" in p.read_text("utf-8"))


def chapter_number(page: str) -> int | None:
    """``book/08_transformer`` (a docname, a stem or a path) is chapter 8; the preface (``00``)
    and pages without a number have none."""
    m = re.match(r"(?:.*/)?(\d\d)_", str(page).replace(os.sep, "/"))
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


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


def run_env(simd: str = "native", base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a chapter run on the SIMD path ``simd``, from ``base`` (default:
    this process's): only that path's kernel variables, figures in English, one compute thread
    unless set, the repository importable. The seed offset is the caller's to add."""
    if simd not in SIMD_PATHS:
        raise ValueError(f"the SIMD path must be one of {sorted(SIMD_PATHS)}, got {simd!r}")
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith(("MKL_", "ATEN_", "ONEDNN_"))}
    env.update(SIMD_PATHS[simd])
    env.update({"D2LITE_FIG_LANG": "en",
                "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
                "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(":"),
                "MPLBACKEND": "Agg", "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    return env


def run_module(name: str, args: Sequence[str], env: dict[str, str] | None = None,
               cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run ``python -m tools.<name> ARGS`` in a fresh interpreter (this one's executable, the
    repository importable) and capture what it prints."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(":")
    return subprocess.run([sys.executable, "-m", f"tools.{name}", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)  # fmt: skip


def device_name() -> str:
    """The device the chapters compute on, as the benchmark tables name it: the GPU's name, or
    the CPU with its core count (chapters compute on one thread each)."""
    import torch

    from d2lite.utils import try_gpu

    device = try_gpu()
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({os.cpu_count()} cores, one thread a chapter)"

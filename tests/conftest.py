"""Shared fixtures: the built website (one build per test run, shared by xdist workers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"


def build_command() -> list[str]:
    """The same build that `make book` runs: every chapter executed, warnings are errors."""
    jb = Path(sys.executable).with_name("jupyter-book")
    return [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going"]


@pytest.fixture(scope="session")
def site() -> Path:
    """Build the website once per test run (xdist workers share it) and return its folder."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid-{os.getpid()}")
    (ROOT / "_build").mkdir(exist_ok=True)
    stamp = ROOT / "_build" / ".site-run"
    with FileLock(str(ROOT / "_build" / ".site.lock")):
        if stamp.exists() and stamp.read_text() == run_id and (SITE / "index.html").exists():
            return SITE
        env = dict(os.environ, MPLBACKEND="Agg", D2LITE_STRICT_FONTS="1")
        proc = subprocess.run(
            build_command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000
        )
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-6000:]
            pytest.fail(f"the website build failed (exit {proc.returncode}):\n{tail}")
        stamp.write_text(run_id)
    return SITE

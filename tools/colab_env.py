"""A bare virtual environment with the ``d2lite`` wheel, as a Colab reader gets it.

``python -m tools.colab_env`` (``make colab-env``) builds the wheel of this checkout into
``_build/colab/dist`` and installs it into ``_build/colab-venv``: a new environment with nothing
from the repository on its path, holding only the wheel, its declared dependencies and what
Colab itself provides to run a notebook (ipykernel, nbclient, nbformat). torch comes from a
local CPU wheel when pip's find-links offers one, as in the Makefile. The environment is reused;
``d2lite`` is reinstalled only when the package's sources change. ``tests/test_colab.py`` runs
the English reader notebooks there.

``--base`` makes only the environment without ``d2lite`` (torch, the dependencies that
``pyproject.toml`` declares, the Colab packages). It needs nothing but the system's Python, so
``make test`` builds it while the project's own ``.venv`` installs, on the other core.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
DIST = BUILD / "colab" / "dist"
VENV = BUILD / "colab-venv"
STAMP = VENV / ".d2lite-sources"
BASE_STAMP = VENV / ".base"  # what the base environment was made for (declared dependencies)
COLAB_PACKAGES = ("ipykernel", "nbclient", "nbformat")


def venv_python(venv: Path = VENV) -> Path:
    return venv / "bin" / "python"


def sources_digest() -> str:
    """A hash of what goes into the wheel: the package's modules and data files (``*.json``,
    the views' ``*.js`` and ``*.css``, as ``pyproject.toml`` declares) and ``pyproject.toml``."""
    h = hashlib.sha256()
    package = ROOT / "d2lite"
    files = [p for pattern in ("*.py", "*.json", "*.js", "*.css") for p in package.rglob(pattern)]
    for path in sorted([*files, ROOT / "pyproject.toml"]):
        if "__pycache__" in path.parts:
            continue
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def build_wheel() -> Path:
    """Build the wheel of this checkout (no dependencies, no isolation: offline) and return it."""
    DIST.mkdir(parents=True, exist_ok=True)
    for old in DIST.glob("d2lite-*.whl"):
        old.unlink()
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' leftovers of deleted modules
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(DIST), str(ROOT)],
        check=True, cwd=ROOT,
    )
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    wheels = sorted(DIST.glob("d2lite-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one d2lite wheel in {DIST}, found {wheels}")
    return wheels[0]


def _pip(*args: str) -> None:
    subprocess.run([str(venv_python()), "-m", "pip", "install", "-q", *args], check=True)


def declared_dependencies() -> list[str]:
    """The ``dependencies`` of ``pyproject.toml``: what the wheel asks pip for. Read with a
    pattern, not tomllib, so that the system's Python 3.10 can run ``--base`` too
    (tests/test_dependencies.py checks it against tomllib's reading)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, flags=re.M | re.S)
    if block is None:
        raise RuntimeError("pyproject.toml has no dependencies = [...] list")
    return re.findall(r'"([^"]+)"', block.group(1))


def ensure_base() -> Path:
    """Make sure the environment exists with torch, the declared dependencies and the Colab
    packages (no ``d2lite``); return its Python. Needs only the system's Python."""
    packages = [*declared_dependencies(), *COLAB_PACKAGES]
    wanted = "\n".join(packages)
    if venv_python().exists() and BASE_STAMP.exists() and BASE_STAMP.read_text() == wanted:
        return venv_python()
    if not venv_python().exists():
        # The base interpreter, not this virtualenv's packages: a bare environment.
        base = Path(getattr(sys, "_base_executable", sys.executable))
        subprocess.run([str(base), "-m", "venv", str(VENV)], check=True)
        # A local CPU wheel of torch when pip's find-links has one (no multi-GB download).
        subprocess.run(
            [str(venv_python()), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
             "torch>=2.2"],
            check=False, capture_output=True,
        )
    _pip(*packages)
    BASE_STAMP.write_text(wanted)
    return venv_python()


def ensure() -> Path:
    """Make sure the environment exists and holds the current wheel; return its Python."""
    digest = sources_digest()
    if venv_python().exists() and STAMP.exists() and STAMP.read_text().strip() == digest:
        return venv_python()
    wheel = build_wheel()
    ensure_base()
    _pip(str(wheel), *COLAB_PACKAGES)  # the wheel's own requirements: all there already
    _pip("--force-reinstall", "--no-deps", str(wheel))
    STAMP.write_text(digest + "\n")
    return venv_python()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--base"]):
        raise SystemExit(f"usage: python -m tools.colab_env [--base]; got {' '.join(args)}")
    python = ensure_base() if args else ensure()
    what = "base (without d2lite)" if args else "ready"
    print(f"Colab-like environment {what}: {python.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

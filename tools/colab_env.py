"""A bare virtual environment with the ``d2lite`` wheel, as a Colab reader gets it.

``python -m tools.colab_env`` (``make colab-env``) builds the wheel of this checkout into
``_build/colab/dist`` and installs it into ``_build/colab-venv``: a new environment with nothing
from the repository on its path, holding only the wheel, its declared dependencies and what
Colab itself provides to run a notebook (ipykernel, nbclient, nbformat). PyTorch, which Colab
also provides, is the very one ``.venv`` has: its files are linked, not installed again (no
second copy of torch, no multi-gigabyte CUDA build where ``.venv`` has the CPU one), together
with the packages torch needs that ``.venv`` holds. The environment is reused; ``d2lite`` is
reinstalled only when the package's sources change. ``tests/test_colab.py`` runs the English
reader notebooks there. Everything it writes is under ``_build/``.

``--base`` makes only the environment without ``d2lite`` and torch (the other dependencies that
``pyproject.toml`` declares, the Colab packages, from the package registry). It needs nothing but
the system's Python, so ``make test`` builds it while the project's own ``.venv`` installs, on the
other core; the step without ``--base`` then links ``.venv``'s torch and installs the wheel.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.core import BUILD, ROOT

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
    """Build the wheel of this checkout (no dependencies, no isolation: offline) and return it.
    The build works on a copy of the package under ``_build/colab`` (setuptools would leave a
    ``build/`` folder in the checkout, with modules deleted since, and reuse it)."""
    DIST.mkdir(parents=True, exist_ok=True)
    for old in DIST.glob("d2lite-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(dir=DIST.parent) as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        shutil.copy2(ROOT / "pyproject.toml", source)
        for extra in ("README.md", "LICENSE"):
            if (ROOT / extra).is_file():
                shutil.copy2(ROOT / extra, source)
        shutil.copytree(ROOT / "d2lite", source / "d2lite",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
             "-w", str(DIST), str(source)],
            check=True, cwd=source,
        )
    wheels = sorted(DIST.glob("d2lite-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one d2lite wheel in {DIST}, found {wheels}")
    return wheels[0]


def _pip(*args: str) -> None:
    # no byte-compiling of every module installed (the Makefile's install says why)
    subprocess.run([str(venv_python()), "-m", "pip", "install", "-q", "--no-compile", *args],
                   check=True)


def declared_dependencies() -> list[str]:
    """The ``dependencies`` of ``pyproject.toml``: what the wheel asks pip for. Read with a
    pattern, not tomllib, so that the system's Python 3.10 can run ``--base`` too
    (tests/test_dependencies.py checks it against tomllib's reading)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, flags=re.M | re.S)
    if block is None:
        raise RuntimeError("pyproject.toml has no dependencies = [...] list")
    return re.findall(r'"([^"]+)"', block.group(1))


def _dist_name(requirement: str) -> str:
    """The normalised distribution name of a requirement such as ``torch>=2.2``."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def base_packages() -> list[str]:
    """What ``--base`` installs: the declared dependencies but torch, and the Colab packages."""
    return [r for r in declared_dependencies() if _dist_name(r) != "torch"] + list(COLAB_PACKAGES)


def site_packages(venv: Path) -> Path | None:
    """A virtual environment's site-packages folder (None when there is not exactly one)."""
    found = sorted(venv.glob("lib/python3*/site-packages"))
    return found[0] if len(found) == 1 else None


def torch_closure(site: Path) -> list[md.Distribution]:
    """torch as installed in ``site`` and every distribution there that it needs, recursively
    (requirements of extras left out; a requirement not installed there is not needed there)."""
    installed = {_dist_name(d.metadata["Name"]): d for d in md.distributions(path=[str(site)])}
    todo, seen = ["torch"], {}
    while todo:
        name = todo.pop()
        if name in seen or name not in installed:
            continue
        seen[name] = installed[name]
        for requirement in installed[name].requires or []:
            if "extra ==" not in requirement.replace('"', "").replace("'", ""):
                todo.append(_dist_name(requirement))
    if "torch" not in seen:
        raise RuntimeError(f"no torch in {site}: run make install first")
    return list(seen.values())


def link_torch(project: Path | None = None) -> str:
    """Link the torch of ``project`` (default: the environment of the Python running this,
    ``.venv`` under make) and what it needs that the Colab-like environment lacks into the
    Colab-like environment: the same build, no second installation. Returns torch's version."""
    project = Path(sys.prefix) if project is None else project
    source, target = site_packages(project), site_packages(VENV)
    if source is None or target is None or source.parent.name != target.parent.name:
        raise RuntimeError(
            f"the Colab-like environment reuses the torch of {project} (the Python that runs "
            f"this), with the same Python version ({source} beside {target}): run it with "
            f".venv/bin/python after make install"
        )
    for old in target.iterdir():  # links to what .venv no longer has (an older torch)
        if old.is_symlink() and not old.exists():
            old.unlink()
    for old in target.glob("torch-*.dist-info"):  # a torch that pip installed here before
        if not old.is_symlink():
            shutil.rmtree(old)
    present = {_dist_name(d.metadata["Name"]) for d in md.distributions(path=[str(target)])}
    version = ""
    for dist in torch_closure(source):
        name = _dist_name(dist.metadata["Name"])
        if name == "torch":
            version = dist.version
        elif name in present:
            continue  # pip installed it there already
        tops = {Path(str(f)).parts[0] for f in dist.files or []}
        for top in sorted(t for t in tops if t not in ("..", "__pycache__")):
            link, real = target / top, source / top
            if link.is_symlink() and os.readlink(link) == str(real):
                continue
            if link.is_symlink() or link.is_file():
                link.unlink()
            elif link.is_dir():
                shutil.rmtree(link)
            link.symlink_to(real)
    return version


def ensure_base() -> Path:
    """Make sure the environment exists with the declared dependencies but torch and the Colab
    packages (no ``d2lite``); return its Python. Needs only the system's Python."""
    packages = base_packages()
    wanted = "\n".join(packages)
    if venv_python().exists() and BASE_STAMP.exists() and BASE_STAMP.read_text() == wanted:
        return venv_python()
    if not venv_python().exists():
        # The base interpreter, not this virtualenv's packages: a bare environment.
        base = Path(getattr(sys, "_base_executable", sys.executable))
        subprocess.run([str(base), "-m", "venv", str(VENV)], check=True)
    _pip(*packages)
    BASE_STAMP.write_text(wanted)
    return venv_python()


def ensure() -> Path:
    """Make sure the environment exists, has ``.venv``'s torch and holds the current wheel;
    return its Python."""
    ensure_base()
    digest = f"{sources_digest()} torch {link_torch()}"
    if STAMP.exists() and STAMP.read_text().strip() == digest:
        return venv_python()
    wheel = build_wheel()
    _pip(str(wheel), *COLAB_PACKAGES)  # the wheel's own requirements: all there already
    _pip("--force-reinstall", "--no-deps", str(wheel))
    STAMP.write_text(digest + "\n")
    return venv_python()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--base"]):
        raise SystemExit(f"usage: python -m tools.colab_env [--base]; got {' '.join(args)}")
    python = ensure_base() if args else ensure()
    what = "base (without d2lite and torch)" if args else "ready"
    print(f"Colab-like environment {what}: {python.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

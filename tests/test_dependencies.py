"""Dependency lists: requirements.txt and pyproject.toml agree, and every third-party package
that d2lite, tools, _ext, the tests and conftest.py import is declared (d2lite's in the core
dependencies, the rest in an extra)."""

from __future__ import annotations

import functools
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest

from tools.core import ROOT

LOCAL = {"d2lite", "tools", "_ext", "tests", "conftest", "root_conftest"}
LOCAL |= {p.stem for p in (ROOT / "_ext").glob("*.py")}
LOCAL |= {p.stem for p in (ROOT / "tests").glob("test_*.py")}  # a test may reuse another's data
# An import line (also an indented one, inside a function).
IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import\s|import\s+([A-Za-z_]\w*))", re.M)


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement such as 'PyYAML>=6.0'."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _imports(paths: list[Path]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        for match in IMPORT.finditer(path.read_text(encoding="utf-8")):
            module = match.group(1) or match.group(2)
            if module not in sys.stdlib_module_names and module not in LOCAL:
                found.setdefault(module, set()).add(str(path.relative_to(ROOT)))
    return found


@functools.cache
def _packages() -> dict[str, list[str]]:
    """Which installed distributions provide each top-level module (reading every installed
    distribution's file list takes seconds: once per test process)."""
    return md.packages_distributions()


def _distributions(module: str) -> set[str]:
    return {_name(d) for d in _packages().get(module, [])}


def test_requirements_txt_lists_exactly_the_dependencies_and_extras():
    project = _pyproject()
    declared = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        declared += extra
    assert sorted(_requirements()) == sorted(declared)


@pytest.mark.parametrize("where", ["d2lite", "others"])
def test_every_imported_package_is_declared(where):
    project = _pyproject()
    core = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for rs in project.get("optional-dependencies", {}).values() for r in rs}
    if where == "d2lite":
        paths, allowed = sorted((ROOT / "d2lite").rglob("*.py")), core
    else:
        paths = [p for d in ("tools", "_ext", "tests") for p in sorted((ROOT / d).rglob("*.py"))]
        paths.append(ROOT / "conftest.py")
        allowed = core | extras
    undeclared = {
        module: sorted(files)
        for module, files in _imports(paths).items()
        if not _distributions(module) & allowed
    }
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_the_colab_environment_reads_the_declared_dependencies():
    from tools import colab_env

    assert colab_env.declared_dependencies() == list(_pyproject()["dependencies"])

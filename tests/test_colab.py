"""The second door: the reader notebooks as Colab runs them.

The wheel of this checkout is installed into a bare virtual environment (``tools/colab_env.py``,
``make colab-env``); the English notebooks run there with nbclient, from a directory outside the
repository and with nothing of the repository on the path, as in Colab. A reader's machine is
another machine: this pass runs every chapter with another seed offset and another math-kernel
path than the nbval pass (``tools.portable.portable_env``), so a claim that held for one seed or
one CPU only fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tools import colab_env, notebooks, portable
from tools.core import ROOT

pytestmark = pytest.mark.colab

ENGLISH = sorted((ROOT / "notebooks" / "en").glob("*.ipynb"))

_RUN = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3").execute()
outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
errors = [o for o in outputs if o.get("output_type") == "error"]
stderr = [o["text"][:300] for o in outputs if o.get("name") == "stderr"]
print(json.dumps({"cells": len(nb.cells), "errors": len(errors), "stderr": stderr}))
"""


def bare_env(other_machine: bool = False) -> dict[str, str]:
    """The environment of a Colab-like process: no PYTHONPATH, no repository variables; with
    ``other_machine``, the seed offset and math-kernel path of ``tools.portable``."""
    dropped = ("PYTHON", "VIRTUAL_ENV", "D2LITE_SEED", "MKL_", "ATEN_", "ONEDNN_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env["PATH"] = f"{colab_env.VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    if other_machine:
        env.update(portable.portable_env())
    return env


@pytest.fixture(scope="module")
def colab_python() -> Path:
    return colab_env.ensure()


def test_wheel_holds_only_the_readers_package():
    before = {p.name for p in ROOT.iterdir()}
    wheel = colab_env.build_wheel()
    # built from a copy under _build/: the checkout gains nothing (no build/, no egg-info; the
    # caches that tools of other test workers may start meanwhile, .ruff_cache …, aside)
    new = {n for n in {p.name for p in ROOT.iterdir()} - before if not n.startswith(".")}
    assert new <= {"_build"}, new
    assert wheel.is_relative_to(ROOT / "_build")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"d2lite", wheel.name.split("-py3")[0] + ".dist-info"}, top
    modules = {n.removeprefix("d2lite/") for n in names if n.startswith("d2lite/")}
    package = ROOT / "d2lite"
    expected = {p.relative_to(package).as_posix()
                for pattern in ("*.py", "*.json", "*.bin", "*.js", "*.css")
                for p in package.rglob(pattern) if "__pycache__" not in p.parts}
    assert {"d2l/notes.json", "gpt_model/weights.bin", "views_assets/attention_view.js"} <= expected
    assert modules == expected, f"wheel {sorted(modules ^ expected)} differ from d2lite/"
    assert not {"book.py", "export.py", "bench.py"} & modules, "maintainer tools in the wheel"


def test_every_module_imports_from_the_wheel_alone(colab_python, tmp_path):
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import d2lite\n"
        "mods = [m.name for m in pkgutil.iter_modules(d2lite.__path__)]\n"
        "for m in mods: importlib.import_module('d2lite.' + m)\n"
        "banned = sorted({'jupytext', 'sphinx', 'pytest', 'yaml', 'tools'} & set(sys.modules))\n"
        "print(json.dumps({'file': d2lite.__file__, 'mods': mods, 'banned': banned}))\n"
    )
    out = subprocess.run([str(colab_python), "-c", code], cwd=tmp_path, env=bare_env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(info["file"]).is_relative_to(colab_env.VENV), info["file"]
    assert not Path(info["file"]).is_relative_to(ROOT / "d2lite")
    assert len(info["mods"]) >= 15 and not info["banned"], info


def test_there_is_an_english_notebook_per_chapter():
    assert [p.stem for p in ENGLISH] == [s.stem for s in notebooks.chapter_sources()]


@pytest.mark.parametrize("notebook", ENGLISH, ids=lambda p: p.stem)
def test_english_notebook_runs_as_in_colab(colab_python, notebook, tmp_path):
    copy = tmp_path / notebook.name  # the reader's copy, alone in a directory of its own
    copy.write_bytes(notebook.read_bytes())
    env = bare_env(other_machine=True)
    out = subprocess.run([str(colab_python), "-c", _RUN, str(copy)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=900)
    again = " ".join(f"{k}={v}" for k, v in env.items() if k.startswith(("D2LITE_SEED", "MKL_",
                                                                          "ATEN_", "ONEDNN_")))
    assert out.returncode == 0, (f"{notebook.name} failed like Colab on another machine "
                                 f"({again}):\n{out.stderr[-4000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["cells"] > 3, (again, result)
    # The reader sees every stderr line in a red box: a clean run shows none (warnings included).
    assert result["stderr"] == [], f"{notebook.name} printed to stderr: {result['stderr']}"


def test_the_colab_env_is_outside_the_repositorys_path(colab_python, tmp_path):
    out = subprocess.run([str(colab_python), "-c", "import sys; print('\\n'.join(sys.path))"],
                         cwd=tmp_path, env=bare_env(), capture_output=True, text=True)
    paths = [p for p in out.stdout.splitlines() if p]
    assert not any(Path(p).resolve() == ROOT for p in paths), paths
    assert sys.prefix != str(colab_env.VENV)

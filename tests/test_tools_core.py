"""tools/core.py is the one core of the tools: one ROOT, one chapter discovery, one environment
for a chapter run; no tool runs a program kept in a string; the tools import without cycles;
the Colab-like environment reuses .venv's torch and writes nothing outside _build/."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import colab_env, core
from tools.core import ROOT

TOOLS = sorted((ROOT / "tools").glob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_one_root_and_one_chapter_discovery():
    roots, discoveries = [], []
    for path in TOOLS:
        for node in _tree(path).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "ROOT" for t in node.targets):  # fmt: skip
                roots.append(path.name)
            if isinstance(node, ast.FunctionDef) and node.name in ("chapter_sources",
                                                                   "page_sources"):
                discoveries.append((path.name, node.name))
            if isinstance(node, ast.Assign):  # a module-level glob of the chapters
                text = ast.unparse(node.value)
                if "[0-9][0-9]_" in text and path.name != "core.py":
                    discoveries.append((path.name, text))
    assert roots == ["core.py"], roots
    assert sorted(discoveries) == [("core.py", "chapter_sources"), ("core.py", "page_sources")]
    chapters_glob = [p for p in TOOLS if '"[0-9][0-9]_*.md"' in p.read_text(encoding="utf-8")]
    assert chapters_glob == [ROOT / "tools" / "core.py"], chapters_glob


def test_the_tests_take_root_from_the_tools_core():
    """The tests find the repository as the tools do (tools.core.ROOT), not each its own way;
    the root conftest.py and the Sphinx extensions, loaded before tools is importable, keep
    theirs."""
    defining = [path.name for path in sorted((ROOT / "tests").glob("*.py"))
                if any(isinstance(node, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id == "ROOT" for t in node.targets)
                       for node in _tree(path).body)]
    assert defining == [], defining


def test_no_tool_runs_a_program_kept_in_a_string():
    """No ``python -c PROGRAM`` and no exec/eval of the tools' own text: a program is a module
    with a main() run as ``python -m tools.<name>``. tools/cell_runner.py alone executes code,
    the chapters' cells that it reads from book/ (and the watch expressions a user gives)."""
    for path in TOOLS:
        tree = _tree(path)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value != "-c", f"{path.name}:{node.lineno}: python -c"
                if id(node) in docs or "\n" not in node.value.strip():
                    continue
                try:
                    code = ast.parse(node.value)
                except SyntaxError:
                    continue
                imports = [n for n in ast.walk(code) if isinstance(n, (ast.Import, ast.ImportFrom))]
                assert not imports, f"{path.name}:{node.lineno}: a program in a string"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("exec", "eval"):
                    where = f"{path.name}:{node.lineno}: {node.func.id}"
                    assert path.name == "cell_runner.py", where


def _module_imports(path: Path) -> set[str]:
    """The tools modules that a module imports when it is imported (module level only)."""
    found = set()
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "tools":
                found |= {f"tools.{a.name}" for a in node.names}
            elif node.module.startswith("tools."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tools.")}
    return found


def test_the_tools_import_one_another_without_cycles():
    graph = {f"tools.{p.stem}": _module_imports(p) for p in TOOLS}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join([*path, module])
        if module in done:
            return
        for other in sorted(graph.get(module, ())):
            visit(other, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())
    assert graph["tools.core"] == set(), "tools.core imports no other tool"


@pytest.mark.parametrize("order", ["tools.bench, tools.bench_lm", "tools.bench_lm, tools.bench"])
def test_bench_and_bench_lm_import_alone_in_either_order(order):
    proc = subprocess.run([sys.executable, "-c", f"import {order}"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_core_and_the_colab_base_need_only_the_standard_library():
    """``python -m tools.colab_env --base`` runs on the system's Python, before .venv exists."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import tools.colab_env; "
            "extra = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)"
            " - {'tools', '__main__'}; print(sorted(extra)); assert not extra")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


def test_chapters_are_found_by_number_or_stem():
    everything = core.chapter_sources()
    assert everything == sorted((ROOT / "book").glob("[0-9][0-9]_*.md")) and len(everything) > 5
    assert [p.stem for p in core.chapter_sources(["2"])] == ["02_bptt_lstm"]
    assert [p.stem for p in core.chapter_sources(["02"])] == ["02_bptt_lstm"]
    assert [p.stem for p in core.chapter_sources(["05_bahdanau", "1"])] == ["05_bahdanau",
                                                                           "01_rnn"]
    with pytest.raises(SystemExit, match="no chapter '99'"):
        core.chapter_sources(["99"])
    pages = core.page_sources()
    assert set(everything) < set(pages) and ROOT / "book" / "glossary.md" in pages


def test_chapter_numbers():
    assert core.chapter_number("book/08_transformer") == 8
    assert core.chapter_number("11_efficient") == 11
    assert core.chapter_number(ROOT / "book" / "03_attention_pooling.md") == 3
    assert core.chapter_number("book/00_preface") is None
    assert core.chapter_number("book/glossary") is None


def test_a_chapter_run_gets_only_its_paths_kernel_variables():
    base = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2", "HOME": "/h"}
    env = core.run_env("sse42", base)
    assert env["ATEN_CPU_CAPABILITY"] == "default" and "MKL_CBWR" not in env
    assert env["OMP_NUM_THREADS"] == "1" and env["HOME"] == "/h"
    assert env["PYTHONPATH"].split(":")[0] == str(ROOT)
    with pytest.raises(ValueError, match="SIMD path"):
        core.run_env("neon")


def test_evidence_takes_chapter_titles_from_the_books_labels():
    from tools.notebooks import chapter_target

    label, target = chapter_target("05_bahdanau")
    assert label.startswith("chap-") and target.number == "5"
    source = (ROOT / "book" / "05_bahdanau.md").read_text(encoding="utf-8")
    assert f"# {target.title['ko']} · {target.title['en']}\n" in source
    with pytest.raises(ValueError, match="book/99_none"):
        chapter_target("99_none")


def _fake_dist(site: Path, name: str, version: str, files: list[str], requires: list[str]):
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires), encoding="utf-8")
    for f in files:
        (site / f).parent.mkdir(parents=True, exist_ok=True)
        (site / f).write_text("", encoding="utf-8")
    record = [*files, f"{info.name}/METADATA", f"{info.name}/RECORD", "../../../bin/torchrun"]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in record), encoding="utf-8")


def test_the_colab_env_links_the_torch_of_venv_and_what_it_needs(tmp_path, monkeypatch):
    project = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    _fake_dist(project, "torch", "2.9.0+cpu", ["torch/__init__.py", "torchgen/x.py"],
               ["sympy>=1.13", 'opt-einsum>=3.3; extra == "opt-einsum"', "filelock"])
    _fake_dist(project, "sympy", "1.14.0", ["sympy/__init__.py"], ["mpmath<1.4"])
    _fake_dist(project, "mpmath", "1.3.0", ["mpmath/__init__.py"], [])
    _fake_dist(project, "opt_einsum", "3.4.0", ["opt_einsum/__init__.py"], [])
    _fake_dist(project, "unrelated", "1.0", ["unrelated/__init__.py"], [])
    colab = tmp_path / "colab"
    target = colab / "lib" / "python3.11" / "site-packages"
    _fake_dist(target, "filelock", "3.20.0", ["filelock/__init__.py"], [])  # pip put it there
    _fake_dist(target, "torch", "2.2.0", ["torch/__init__.py"], [])  # an older base's own torch
    monkeypatch.setattr(colab_env, "VENV", colab)
    assert colab_env.link_torch(tmp_path / "venv") == "2.9.0+cpu"
    links = sorted(p.name for p in target.iterdir() if p.is_symlink())
    assert links == ["mpmath", "mpmath-1.3.0.dist-info", "sympy", "sympy-1.14.0.dist-info",
                     "torch", "torch-2.9.0+cpu.dist-info", "torchgen"]
    assert (target / "torch").resolve() == (project / "torch").resolve()
    assert not (target / "torch-2.2.0.dist-info").exists()  # replaced, not beside the link
    assert not (target / "filelock").is_symlink()  # what the environment has stays its own
    # again: nothing changes; a torch that .venv no longer has leaves no dangling link
    assert colab_env.link_torch(tmp_path / "venv") == "2.9.0+cpu"
    shutil.rmtree(project / "torch-2.9.0+cpu.dist-info")  # .venv's torch is upgraded
    _fake_dist(project, "torch", "2.10.0+cpu", ["torch/__init__.py"], [])
    assert colab_env.link_torch(tmp_path / "venv") == "2.10.0+cpu"
    assert not (target / "torch-2.9.0+cpu.dist-info").is_symlink()
    with pytest.raises(RuntimeError, match="reuses the torch of"):
        colab_env.link_torch(tmp_path / "no-venv")


def test_the_colab_base_installs_no_torch():
    assert any(r.startswith("torch") for r in colab_env.declared_dependencies())
    assert not any(r.startswith("torch") for r in colab_env.base_packages())
    assert set(colab_env.COLAB_PACKAGES) <= set(colab_env.base_packages())


def test_building_the_wheel_writes_only_under_build(tmp_path, monkeypatch):
    """A checkout's own build/ (or anything else outside _build/) is neither made nor removed."""
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, root / name)
    shutil.copytree(ROOT / "d2lite", root / "d2lite",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (root / "build").mkdir()
    (root / "build" / "mine.txt").write_text("a reader's file", encoding="utf-8")
    before = {p.name for p in root.iterdir()}
    monkeypatch.setattr(colab_env, "ROOT", root)
    monkeypatch.setattr(colab_env, "DIST", root / "_build" / "colab" / "dist")
    wheel = colab_env.build_wheel()
    assert wheel.parent == root / "_build" / "colab" / "dist" and wheel.name.startswith("d2lite-")
    assert {p.name for p in root.iterdir()} == before | {"_build"}
    assert (root / "build" / "mine.txt").read_text(encoding="utf-8") == "a reader's file"
    assert [p.name for p in (root / "_build" / "colab").iterdir()] == ["dist"]  # no leftovers

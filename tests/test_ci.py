"""What CI runs, read from the files that run it: `.ci/run` runs the README's commands and no
other; every `make` target, `tools` module and option, and test path that a workflow step or
`.ci/run` names exists; the CPU workflow runs `make test`; fonts are installed after
`apt-get update`; the GPU job runs each chapter once and keeps its timing table; a job tests the
lowest allowed dependency versions; `make test-unit` holds every test module of the library."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from tools.core import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
CI_RUN = ROOT / ".ci" / "run"


def _runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def _load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def _commands(script: str) -> list[list[str]]:
    """The commands of a shell script or a step's `run:` (comments, blank lines and `set`
    dropped, continued lines joined), each split into words as the shell would."""
    text = re.sub(r"\\\n\s*", " ", script)
    commands = []
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        words: list[str] = []
        tokens = iter([*lexer, ";"])
        for token in tokens:
            if token.strip(";&|<>"):
                words.append(token)
            elif token.strip("&") in ("<", ">", ">>"):
                next(tokens, None)  # a redirection and its file are no words of the command
            elif words:  # ;, &&, || and | end a command
                if words[0] != "set":
                    commands.append(words)
                words = []
    return commands


def _every_command() -> list[tuple[str, list[str]]]:
    """(where, command) for .ci/run and every step of every workflow."""
    found = [(".ci/run", c) for c in _commands(CI_RUN.read_text(encoding="utf-8"))]
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            found += [(f"{path.name}:{name}", c) for run in _runs(job) for c in _commands(run)]
    return found


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m for line in re.findall(r"^([\w .$()/-]+):(?!=)", text, re.M) for m in line.split()}


def _make_variable(name: str) -> list[str]:
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Makefile").read_text(encoding="utf-8"))
    m = re.search(rf"^{name}\s*:=\s*\$\(addprefix ([^,]+),([^)]*)\)", text, re.M)
    assert m, f"the Makefile has no {name} := $(addprefix ...)"
    return [m.group(1) + word for word in m.group(2).split()]


def test_ci_runs_exactly_the_readme_commands():
    commands = _commands(CI_RUN.read_text(encoding="utf-8"))
    assert commands[0][0] == "cd", commands  # into the repository, then the README's commands
    commands = [" ".join(c) for c in commands[1:]]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = re.findall(r"^(make [\w -]+?)\s+#", readme, re.M)
    assert quick[:2] == ["make book", "make browser test"], quick
    assert commands == ["make browser test"], commands  # one command: the README's test command
    prose = " ".join(readme.split())
    assert "The test command is `make browser test`, and `.ci/run` runs exactly that" in prose


def test_every_make_target_that_ci_calls_exists():
    targets = _make_targets()
    assert {"install", "browser", "test", "test-unit", "test-fast"} <= targets
    for where, command in _every_command():
        if command[0] == "make":
            called = [w for w in command[1:] if "=" not in w and not w.startswith("-")]
            assert set(called) <= targets, f"{where}: {' '.join(command)}"


def test_every_tool_and_option_that_ci_calls_exists():
    seen = 0
    for where, command in _every_command():
        if "-m" not in command:
            continue
        module = command[command.index("-m") + 1]
        if not module.startswith("tools."):
            continue
        seen += 1
        path = ROOT / "tools" / f"{module.removeprefix('tools.')}.py"
        assert path.is_file(), f"{where}: {module} does not exist"
        source = path.read_text(encoding="utf-8")
        for option in (w for w in command if w.startswith("--")):
            assert f'"{option}"' in source, f"{where}: {module} has no option {option}"
    assert seen >= 3  # the other-seeds, lowest-versions and GPU jobs call tools


def test_every_test_path_that_ci_names_exists():
    for where, command in _every_command():
        if "pytest" not in command:
            continue
        for word in command[command.index("pytest") + 1:]:
            if word.startswith(("tests/", "_build/")) and word.endswith((".py", ".ipynb")):
                chapter = ROOT / "book" / Path(word).with_suffix(".md").name
                assert (ROOT / word).exists() or chapter.exists(), f"{where}: {word}"


def test_the_cpu_workflow_runs_make_test_with_a_korean_font():
    job = _load("cpu.yml")["jobs"]["test"]
    commands = [c for run in _runs(job) for c in _commands(run)]
    makes = [c for c in commands if c[0] == "make"]
    assert makes and makes[-1][:2] == ["make", "test"], makes
    installs = [c for c in commands if "apt-get" in c and "install" in c]
    assert any("fonts-nanum" in c for c in installs), installs


def test_every_apt_get_install_follows_an_update():
    jobs = [(".ci/run", [CI_RUN.read_text(encoding="utf-8")])]
    for path in WORKFLOWS.glob("*.yml"):
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            jobs.append((f"{path.name}:{name}", _runs(job)))
    for where, runs in jobs:
        updated = False
        for command in (c for run in runs for c in _commands(run)):
            updated |= "apt-get" in command and "update" in command
            assert not ("apt-get" in command and "install" in command) or updated, where


def test_gpu_workflow_runs_each_chapter_once_and_keeps_the_table():
    job = _load("gpu.yml")["jobs"]["notebooks"]
    commands = [c for run in _runs(job) for c in _commands(run)]
    executions = [c for c in commands if "--nbval" in c or "tools.bench" in c]
    assert len(executions) == 1, executions
    out = executions[0][executions[0].index("--out") + 1]
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and f"{out}.md" in uploads[0]["with"]["path"].split()


def test_a_job_tests_the_lowest_allowed_versions():
    jobs = _load("cpu.yml")["jobs"]
    lowest = [j for j in jobs.values()
              if any("--resolution" in c and "lowest-direct" in c
                     for run in _runs(j) for c in _commands(run))]  # fmt: skip
    assert len(lowest) == 1
    commands = [c for run in _runs(lowest[0]) for c in _commands(run)]
    assert ["make", "test-fast"] in commands
    nbval = [c for c in commands if "--nbval-lax" in c]
    assert nbval and any(w.startswith("_build/nbval/") for w in nbval[0])


def test_make_test_unit_holds_every_library_test_module():
    """Every test module that imports d2lite and no tool, and is not a website or Colab test, is
    in `make test-unit`; and no website or Colab test is."""
    unit = set(_make_variable("UNIT_TESTS"))
    assert [p for p in sorted(unit) if not (ROOT / p).is_file()] == []
    library, site = set(), set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        if re.search(r"pytest\.mark\.(book|colab)\b", text):
            site.add(rel)
        elif re.search(r"^\s*(from|import) d2lite", text, re.M) and not re.search(
                r"^\s*(from|import) tools\b", text, re.M):  # fmt: skip
            library.add(rel)
    assert library - unit == set(), f"library tests missing from make test-unit: {library - unit}"
    assert unit & site == set(), f"website or Colab tests in make test-unit: {unit & site}"


def test_every_make_target_the_readme_or_the_makefile_names_exists():
    targets = _make_targets()
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split()
    assert set(phony) <= targets - {".PHONY"}, set(phony) - targets
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?:^|`)make ([a-z][\w-]*)", readme, re.M))
    assert named and named <= targets, named - targets

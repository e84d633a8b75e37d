"""The CI workflows do what the README says: fonts after `apt-get update`, each chapter once on
the GPU with its timing table kept, and a job at the lowest allowed dependency versions."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOWS = Path(__file__).resolve().parent.parent / ".github" / "workflows"


def _runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def _load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def test_every_apt_get_install_follows_an_update():
    for path in WORKFLOWS.glob("*.yml"):
        for job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].values():
            updated = False
            for run in _runs(job):
                for line in run.splitlines():
                    updated |= "apt-get update" in line
                    assert "apt-get install" not in line or updated, f"{path.name}: {line}"


def test_gpu_workflow_runs_each_chapter_once_and_keeps_the_table():
    job = _load("gpu.yml")["jobs"]["notebooks"]
    executions = [r for r in _runs(job) if "--nbval" in r or "tools.bench" in r]
    assert len(executions) == 1, executions
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and "benchmarks/gpu.md" in uploads[0]["with"]["path"]


def test_a_job_tests_the_lowest_allowed_versions():
    jobs = _load("cpu.yml")["jobs"]
    lowest = [j for j in jobs.values() if any("--resolution lowest-direct" in r for r in _runs(j))]
    assert len(lowest) == 1
    runs = "\n".join(_runs(lowest[0]))
    assert "make test-fast" in runs and "--nbval-lax" in runs and "_build/nbval/" in runs

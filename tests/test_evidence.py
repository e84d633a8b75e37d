"""The evidence appendix (tools/evidence.py): its page, its data and the chapters that quote it."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import pytest
import yaml

from tools import book, evidence


def test_the_page_is_what_the_data_gives():
    assert evidence.PAGE.read_text(encoding="utf-8") == evidence.render(), (
        "book/evidence.md differs from its data: python -m tools.evidence render")


def test_data_specs_and_chapters_agree():
    assert evidence.problems() == []


def _entry(**change) -> dict:
    entry = {"id": "ev-03-demo", "title": {"ko": "예", "en": "Demo"},
             "claim": {"ko": "주장", "en": "A claim"}, "cell": "assert x > 0",
             "watch": {"x": {"expr": "x", "format": ".2f", "ko": "엑스", "en": "x"}},
             "seeds": "1-3", "paths": ["native"]}
    entry.update(change)
    return entry


def _write_spec(tmp_path, entries, stem="03_attention_pooling"):
    (tmp_path / f"{stem}.yaml").write_text(yaml.safe_dump(entries, allow_unicode=True))
    return evidence.load_specs(tmp_path)


CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
---

# Demo

```{code-cell} ipython3
x = 1.5
```

```{code-cell} ipython3
assert x > 0
```
"""


def _code(chapter: str = CHAPTER) -> str:
    """The fingerprint a sweep of the demo entry records for this chapter text."""
    from tools.cell_runner import code_cells

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "03_attention_pooling.md"
        path.write_text(chapter)
        cells = code_cells(str(path))
    return evidence.code_fingerprint(cells, *evidence.cell_numbers(_entry(), cells))


def _data(entry: dict, xs=(0.5, 1.5, 2.0), held=(True, True, True)) -> dict:
    runs = [{"seed": i + 1, "path": "native", "held": h, "values": {"x": x},
             "failures": [] if h else [{"cell": 2, "error": "AssertionError", "source": ""}],
             "wall": 0.1} for i, (x, h) in enumerate(zip(xs, held))]
    return {"id": entry["id"], "chapter": entry["chapter"], "spec": evidence.spec_hash(entry),
            "code": _code(), "stop_cell": 2, "stop_line": "assert x > 0", "skipped_cells": [],
            "seeds": [1, 2, 3],
            "paths": ["native"], "command": f"python -m tools.evidence run {entry['id']}",
            "machine": {"date": "2026-11-29", "python": "3.11", "torch": "2", "numpy": "2",
                        "cpu": "cpu", "system": "Linux"},
            "summary": evidence.summarize(runs, entry["watch"]), "runs": runs}


@pytest.mark.parametrize("change, message", [
    ({"id": "ev-3-demo"}, "id must look like"),
    ({"id": "ev-04-demo"}, "must start ev-03-"),
    ({"paths": ["fast"]}, "paths must be a list"),
    ({"title": {"ko": "예"}}, "'title' must be"),
    ({"watch": {"x": {"expr": "x", "ko": "엑스"}}}, "needs a en description"),
    ({"watch": {"x": {"expr": "x", "ko": "a", "en": "b", "format": "%q"}}}, "format"),
    ({"seeds": "3-1"}, "offsets are"),
    ({"colour": "red"}, "unknown keys"),
])
def test_bad_specs_are_refused(tmp_path, change, message):
    with pytest.raises((evidence.EvidenceError, SystemExit, ValueError), match=message):
        _write_spec(tmp_path, [_entry(**change)])


def test_roles_show_the_data(tmp_path):
    specs = _write_spec(tmp_path, [_entry()])
    entry = specs["ev-03-demo"]
    data = {"ev-03-demo": _data(entry, held=(True, False, True))}
    assert evidence.role_text("ev-03-demo:held", specs, data) == "2"
    assert evidence.role_text("ev-03-demo:runs", specs, data) == "3"
    assert evidence.role_text("ev-03-demo:median:x", specs, data) == "1.50"
    assert evidence.role_text("ev-03-demo:max:x", specs, data) == "2.00"
    for bad in ("ev-03-demo:mean:x", "ev-03-demo:median:y", "ev-03-other:held", "ev-03-demo"):
        with pytest.raises(evidence.EvidenceError):
            evidence.role_text(bad, specs, data)
    page = evidence.render(specs, data)
    assert "(ev-03-demo)=" in page and "2 of 3 runs passed" in page and "3번 가운데 2번" in page
    assert "min 0.50, median 1.50, max 2.00" in page


def test_problems_catch_stale_data_forged_summaries_and_dead_links(tmp_path):
    specs = _write_spec(tmp_path, [_entry()])
    entry = specs["ev-03-demo"]
    good = {"ev-03-demo": _data(entry)}
    chapters = tmp_path / "book"
    chapters.mkdir()
    (chapters / "03_x.md").write_text("held {ev}`ev-03-demo:held` ({ref}`see <ev-03-demo>`)\n")
    assert any("no chapter 03_attention_pooling.md" in p
               for p in evidence.problems(specs, good, chapters))
    chapter = chapters / "03_attention_pooling.md"
    chapter.write_text(CHAPTER)
    assert evidence.problems(specs, good, chapters) == []
    # a comment or a line break leaves the sweep's code as it was; a changed number does not
    chapter.write_text(CHAPTER.replace("x = 1.5", "x = (1.5)  # the input"))
    assert evidence.problems(specs, good, chapters) == []
    chapter.write_text(CHAPTER.replace("x = 1.5", "x = 2.5"))
    assert any("code up to the cell changed" in p for p in evidence.problems(specs, good, chapters))
    chapter.write_text(CHAPTER)
    stale = {k: {**v, "spec": "0" * 16} for k, v in good.items()}
    assert any("another spec" in p for p in evidence.problems(specs, stale, chapters))
    forged = copy.deepcopy(good)
    forged["ev-03-demo"]["summary"]["held"] = 7
    assert any("does not follow" in p for p in evidence.problems(specs, forged, chapters))
    (chapters / "04_y.md").write_text("see {ref}`there <ev-04-gone>` and {ev}`ev-03-demo:n`\n")
    found = evidence.problems(specs, good, chapters)
    assert any("ev-04-gone, which does not exist" in p for p in found)
    assert any("04_y.md" in p and ":n" in p for p in found)
    orphan = {**good, "ev-03-orphan": good["ev-03-demo"]}
    assert any("no spec has this id" in p for p in evidence.problems(specs, orphan, chapters))


def test_the_asserting_cell_is_found_once():
    entry = _entry(cell="assert x > 0", skip=["plt.plot("], chapter="03_attention_pooling")
    cells = ["x = 1", "plt.plot(x)", "assert x > 0", "y = 2"]
    assert evidence.cell_numbers(entry, cells) == (3, [2])
    with pytest.raises(evidence.EvidenceError, match="in 2 code cells"):
        evidence.cell_numbers(entry, cells + ["assert x > 0  # again"])
    with pytest.raises(evidence.EvidenceError, match="in 0 code cells"):
        evidence.cell_numbers({**entry, "cell": "assert z"}, cells)


def test_the_runner_records_failures_and_values(tmp_path):
    from tools.cell_runner import run_cells, watch_values

    scope, failures = run_cells(["x = 2", "assert x > 5, 'too small'", "y = x * 3"], 3, set())
    assert [f["cell"] for f in failures] == [2] and "too small" in failures[0]["error"]
    assert watch_values(scope, {"y": "y", "z": "z"}) == {
        "y": 6.0, "z": "error: NameError: name 'z' is not defined"}
    json.dumps(failures)


@pytest.mark.parametrize("text", [
    "다른 시드 오프셋 12개에서", "at seed offsets 700-711", "offset 383 on avx2", "오프셋 5에서",
    "the cnr path", "sse42", "SSE4.1", "oneDNN held", "a SIMD path", "on the native path",
    "an AMD EPYC", "D2LITE_SEED_OFFSET=3",
])
def test_build_vocabulary_is_caught(text):
    assert book.build_word_problems(text, "prose")


@pytest.mark.parametrize("text", [
    "the cache offset p", "캐시의 오프셋 p", "seeds 0, 1 and 2", "다른 시드로 다시 학습해도",
])
def test_plain_words_pass(text):
    assert book.build_word_problems(text, "prose") == []


@pytest.mark.parametrize("title, bad", [
    ("```{admonition} 함정", "함정"),
    ("## 함정: 기울기 · Pitfall", "함정"),
    ("```{admonition} Common pitfall", "Common pitfall"),
    ("## 흔한 오해 · Common pitfalls", "Common pitfalls"),
])
def test_pitfall_titles_other_than_the_books_are_caught(tmp_path, title, bad):
    page = tmp_path / "01_x.md"
    page.write_text(f"---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
                    f"{title}\n", encoding="utf-8")
    problems = book.check_sources([page], glossary=None)
    assert any(repr(bad) in p.message for p in problems), problems


@pytest.mark.parametrize("title", [
    "```{admonition} 흔한 오해", "```{admonition} Common misconception",
    "## 흔한 오해 · Common misconceptions",
])
def test_the_books_pitfall_titles_pass(tmp_path, title):
    page = tmp_path / "01_x.md"
    page.write_text(f"---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
                    f"{title}\n", encoding="utf-8")
    assert not [p for p in book.check_sources([page], glossary=None) if "pitfall" in p.message]


def test_the_sphinx_role_reads_the_data_once_and_again_after_a_change(tmp_path, monkeypatch):
    import importlib
    import os
    import sys

    ext = str(evidence.ROOT / "_ext")
    sys.path.insert(0, ext)
    try:
        role = importlib.import_module("evidence_role")
    finally:
        sys.path.remove(ext)
    specs, data = tmp_path / "evidence", tmp_path / "evidence" / "data"
    data.mkdir(parents=True)
    (specs / "01_x.yaml").write_text("[]\n", encoding="utf-8")
    monkeypatch.setattr(evidence, "SPECS", specs)
    monkeypatch.setattr(evidence, "DATA", data)
    calls = []
    monkeypatch.setattr(evidence, "load_specs", lambda: calls.append("specs") or {})
    monkeypatch.setattr(evidence, "load_data", lambda: calls.append("data") or {})
    monkeypatch.setattr(role, "_cache", {})
    role._loaded()
    role._loaded()
    assert calls == ["specs", "data"]
    (data / "ev-01-x.json").write_text("{}", encoding="utf-8")
    os.utime(specs / "01_x.yaml", ns=(1, 1))
    role._loaded()
    assert calls == ["specs", "data"] * 2


@pytest.mark.parametrize("given, used", [(None, "cpu"), ("cuda", "cuda")])
def test_the_sweep_worker_computes_on_the_cpu_unless_told(tmp_path, monkeypatch, capsys,
                                                          given, used):
    """tools.cell_runner runs chapters in plain Python, which d2l.try_gpu does not count as
    unattended: the worker itself asks for the CPU, as make test does, unless told otherwise."""
    import os

    from tools import cell_runner

    chapter = tmp_path / "01_x.md"
    chapter.write_text("---\njupytext:\n  text_representation:\n    extension: .md\n"
                       "    format_name: myst\n    format_version: 0.13\nkernelspec:\n"
                       "  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
                       "```{code-cell} ipython3\nimport os\ndevice = os.environ['D2LITE_DEVICE']\n"
                       "```\n", encoding="utf-8")
    monkeypatch.setenv("D2LITE_SEED_OFFSET", "0")  # both are restored after the test
    monkeypatch.setenv("D2LITE_DEVICE", "placeholder")
    if given is None:
        monkeypatch.delenv("D2LITE_DEVICE")
    else:
        monkeypatch.setenv("D2LITE_DEVICE", given)
    spec = {"source": str(chapter), "seeds": [0], "stop": 1, "skip": [],
            "watch": {"device": "device"}}
    assert cell_runner.main([json.dumps(spec)]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["failures"] == [] and result["values"]["device"] == repr(used)
    assert os.environ["D2LITE_DEVICE"] == used

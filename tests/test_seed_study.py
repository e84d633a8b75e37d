"""tools/seed_study.py: many seed offsets of one chapter in one process."""

from __future__ import annotations

import pytest

from tools import seed_study

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

"""


def test_offsets_are_ranges_lists_or_both():
    assert seed_study.parse_offsets("3") == [3]
    assert seed_study.parse_offsets("0-3,10") == [0, 1, 2, 3, 10]
    for bad in ("", "5-2", "a", "-1"):
        with pytest.raises(SystemExit, match="offsets are non-negative"):
            seed_study.parse_offsets(bad)


def test_the_summary_counts_failures_per_cell_and_spreads_values():
    results = [{"offset": o, "failures": [{"cell": 4}] if o in (2, 5) else [],
                "values": {"acc": 0.5 + o / 10, "name": "'x'"}} for o in range(6)]
    lines = seed_study.summarize(results, ["acc", "name"])
    assert lines[0] == "cell 4: failed in 2 of 6 runs, offsets 2 5"
    assert lines[1] == "acc: min 0.5, median 0.75, max 1 (6 runs)"
    assert lines[2] == "name: no numeric value"
    assert lines[-1] == "4 of 6 runs passed every cell"


def test_a_chapter_runs_once_per_offset_with_that_offset(tmp_path, capsys):
    # A claim that holds for even offsets only: the study must find exactly the odd ones.
    source = tmp_path / "99_claim.md"
    source.write_text(HEADER + "```{code-cell} ipython3\nimport d2lite as d2l\nprint('noise')\n"
                      "drawn = d2l.set_seed(0)\n```\n\n"
                      "```{code-cell} ipython3\nassert drawn % 2 == 0, drawn\n```\n")
    code = seed_study.main([str(source), "--offsets", "4-7", "--watch", "drawn",
                            "--upto", "9", "--watch", "drawn * 2"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "cell 2: failed in 2 of 4 runs, offsets 5 7" in out
    # a repeated --watch adds to the list rather than replacing it
    assert "drawn: min 4, median 5.5, max 7 (4 runs)" in out
    assert "drawn * 2: min 8, median 11, max 14 (4 runs)" in out
    assert "AssertionError: 5" in out and "noise" not in out  # what cells print stays quiet
    assert seed_study.main([str(source), "--offsets", "4", "--skip", "2"]) == 0

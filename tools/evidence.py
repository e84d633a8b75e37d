"""The evidence appendix: sweeps that check a chapter's claims over more runs than it can afford.

A chapter asserts its claims on the few seeds it can run in its time budget. Some claims rest on
more: the same training repeated with many other seeds and on other numeric paths. Each such
claim is an *entry*, specified in ``evidence/NN_stem.yaml`` (one file per chapter, a YAML list)::

    - id: ev-05-attention-gap
      title: {ko: "...", en: "..."}
      claim: {ko: "...", en: "..."}
      cell: "assert median_gap > 0.1"   # text of a line in the cell that asserts the bound
      skip: ["d2l.show_heatmaps("]      # optional: code cells containing these texts don't run
      watch:                            # optional: numbers read from each run
        gap: {expr: "float(median_gap)", format: ".2f", ko: "...", en: "..."}
      seeds: "1-6"                      # D2LITE_SEED_OFFSET values (0 is the chapter itself)
      paths: [native, sse42]            # numeric paths, names of tools.portable.SIMD_PATHS

Commands::

    python -m tools.evidence list                  # the entries and whether their data is current
    python -m tools.evidence run ev-05-attention-gap [--seeds 1-3] [--paths native]
    python -m tools.evidence render [--check]      # write (or compare) book/evidence.md

``run`` executes the chapter's code cells up to the asserting cell once per seed and path
(``tools.cell_runner``, one process per path) and writes ``evidence/data/<id>.json``: every run's
failures and watched numbers, their count and spread, the date, versions and CPU. A run *holds*
when no cell up to the asserting one raised. ``render`` turns the data into the appendix page,
both languages; chapters quote the data through the ``{ev}`` role (``_ext/evidence_role.py``),
e.g. ``{ev}`ev-05-attention-gap:held``` or ``{ev}`ev-05-attention-gap:median:gap```, and link
the entry with ``{ref}`...  <ev-05-attention-gap>```. Nothing on the page or in a chapter is
typed from a sweep by hand; ``tests/test_evidence.py`` ties them to the data.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import platform
import re
import statistics
import sys
from pathlib import Path

import yaml

from tools.core import BOOK, ROOT, SIMD_PATHS, run_env, run_module
from tools.notebooks import SEPARATOR, chapter_target
from tools.seed_study import parse_offsets

SPECS = ROOT / "evidence"
DATA = SPECS / "data"
PAGE = BOOK / "evidence.md"
ID = re.compile(r"^ev-\d\d-[a-z0-9]+(?:-[a-z0-9]+)*$")
# {ev}`ev-05-x:held`, {ev}`ev-05-x:runs`, {ev}`ev-05-x:median:gap` (min, median, max)
EV_ROLE = re.compile(r"\{ev\}`([^`]*)`")
EV_FIELD = re.compile(r"^(?P<id>ev-[\w-]+):(?:(?P<count>held|runs)|(?P<stat>min|median|max):"
                      r"(?P<watch>\w+))$")
REQUIRED = ("id", "title", "claim", "cell", "seeds", "paths")
OPTIONAL = ("skip", "watch")


class EvidenceError(ValueError):
    """A spec, a data file or a role that does not fit the rules above."""


# -- Specs -------------------------------------------------------------------------------------

def _bilingual(entry: dict, key: str, where: str) -> None:
    value = entry.get(key)
    if not (isinstance(value, dict) and set(value) == {"ko", "en"}
            and all(isinstance(v, str) and v.strip() for v in value.values())):
        raise EvidenceError(f"{where}: {key!r} must be {{ko: ..., en: ...}}, got {value!r}")


def _check_spec(entry: dict, where: str) -> dict:
    if not isinstance(entry, dict):
        raise EvidenceError(f"{where}: an entry is a mapping, got {entry!r}")
    missing = [k for k in REQUIRED if k not in entry]
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise EvidenceError(f"{where}: missing keys {missing}, unknown keys {unknown}")
    if not isinstance(entry["id"], str) or not ID.match(entry["id"]):
        raise EvidenceError(f"{where}: id must look like ev-05-short-name, got {entry['id']!r}")
    for key in ("title", "claim"):
        _bilingual(entry, key, where)
    if not isinstance(entry["cell"], str) or not entry["cell"].strip():
        raise EvidenceError(f"{where}: cell must be a line of the asserting cell's code")
    parse_offsets(str(entry["seeds"]))
    paths = entry["paths"]
    if not (isinstance(paths, list) and paths and all(p in SIMD_PATHS for p in paths)):
        raise EvidenceError(f"{where}: paths must be a list of {sorted(SIMD_PATHS)}, got {paths!r}")
    skip = entry.get("skip", [])
    if not (isinstance(skip, list) and all(isinstance(s, str) and s for s in skip)):
        raise EvidenceError(f"{where}: skip must be a list of texts, got {skip!r}")
    for name, watch in (entry.get("watch") or {}).items():
        if not (re.fullmatch(r"\w+", name) and isinstance(watch, dict)
                and isinstance(watch.get("expr"), str)):
            raise EvidenceError(f"{where}: watch {name!r} needs expr (and format, ko, en)")
        for lang in ("ko", "en"):
            if not isinstance(watch.get(lang), str) or not watch[lang].strip():
                raise EvidenceError(f"{where}: watch {name!r} needs a {lang} description")
        format(1.0, watch.get("format", ".3g"))  # a bad format raises here
    return entry


def chapter_of(spec_file: Path) -> Path:
    return BOOK / f"{spec_file.stem}.md"


def load_specs(directory: Path = SPECS) -> dict[str, dict]:
    """Every entry by id, with ``chapter`` (the file stem) added; checked."""
    entries: dict[str, dict] = {}
    for path in sorted(directory.glob("*.yaml")):
        if not chapter_of(path).exists():
            raise EvidenceError(f"{path.name}: no chapter book/{path.stem}.md")
        listed = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        if not isinstance(listed, list):
            raise EvidenceError(f"{path.name}: the file must be a YAML list of entries")
        for i, entry in enumerate(listed):
            entry = _check_spec(entry, f"{path.name} entry {i + 1}")
            if entry["id"] in entries:
                raise EvidenceError(f"{path.name}: id {entry['id']} is used twice")
            if not entry["id"].startswith(f"ev-{path.stem[:2]}-"):
                raise EvidenceError(f"{path.name}: id {entry['id']} must start ev-{path.stem[:2]}-")
            entries[entry["id"]] = {**entry, "chapter": path.stem}
    return entries


def spec_hash(entry: dict) -> str:
    """A fingerprint of what a sweep ran (not its prose): data older than its spec is stale."""
    ran = {k: entry.get(k) for k in ("cell", "skip", "seeds", "paths", "chapter")}
    ran["watch"] = {n: w["expr"] for n, w in (entry.get("watch") or {}).items()}
    return hashlib.sha256(json.dumps(ran, sort_keys=True).encode()).hexdigest()[:16]


# -- Running a sweep ---------------------------------------------------------------------------

def cell_numbers(entry: dict, cells: list[str]) -> tuple[int, list[int]]:
    """The asserting cell's number and the numbers of the cells to skip (counted from 1)."""
    found = [i for i, c in enumerate(cells, start=1)
             if any(entry["cell"].strip() == line.strip() or entry["cell"] in line
                    for line in c.splitlines())]
    if len(found) != 1:
        raise EvidenceError(f"{entry['id']}: cell {entry['cell']!r} is in {len(found)} code cells "
                            f"of {entry['chapter']} ({found}); give text that is in exactly one")
    stop = found[0]
    skip = [i for i, c in enumerate(cells[: stop - 1], start=1)
            if any(s in c for s in entry.get("skip", []))]
    return stop, skip


def code_fingerprint(cells: list[str], stop: int, skip: list[int]) -> str:
    """A fingerprint of the code a sweep runs (cells 1..stop less ``skip``), by syntax tree:
    comments and layout may change without making the data stale, code may not."""
    parts = []
    for number, source in enumerate(cells[:stop], start=1):
        if number not in skip:
            try:
                parts.append(ast.dump(ast.parse(source)))
            except SyntaxError:
                parts.append(source)
    return hashlib.sha256("\n\f".join(parts).encode()).hexdigest()[:16]


def current_code(entry: dict, book: Path = BOOK) -> str:
    """The fingerprint of what the entry's sweep would run in the chapter as it is now."""
    from tools.cell_runner import code_cells

    cells = code_cells(str(book / f"{entry['chapter']}.md"))
    return code_fingerprint(cells, *cell_numbers(entry, cells))


def machine() -> dict[str, str]:
    """Date, versions and CPU of this machine, as the data records them."""
    import numpy
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"date": dt.date.today().isoformat(), "python": platform.python_version(),
            "torch": torch.__version__, "numpy": numpy.__version__, "cpu": cpu,
            "system": f"{platform.system()} {platform.machine()}"}


def summarize(runs: list[dict], watch: dict) -> dict:
    """How many runs held, and min/median/max of each watched number over the runs."""
    out: dict = {"runs": len(runs), "held": sum(r["held"] for r in runs), "watch": {}}
    for name in watch:
        numbers = [r["values"][name] for r in runs if isinstance(r["values"].get(name), float)]
        if len(numbers) != len(runs):
            raise EvidenceError(f"watch {name!r} gave no number in {len(runs) - len(numbers)} runs")
        out["watch"][name] = {"min": min(numbers), "median": statistics.median(numbers),
                              "max": max(numbers)}
    return out


def run(entry: dict, seeds: list[int] | None = None, paths: list[str] | None = None,
        echo=print) -> dict:
    """Run an entry's sweep and return its data (not written)."""
    from tools.cell_runner import code_cells

    source = BOOK / f"{entry['chapter']}.md"
    cells = code_cells(str(source))
    stop, skip = cell_numbers(entry, cells)
    seeds = seeds if seeds is not None else parse_offsets(str(entry["seeds"]))
    paths = paths or entry["paths"]
    watch = {n: w["expr"] for n, w in (entry.get("watch") or {}).items()}
    runs = []
    for path in paths:
        job = {"source": str(source), "seeds": seeds, "stop": stop, "skip": skip, "watch": watch}
        done = run_module("cell_runner", [json.dumps(job)], run_env(path), cwd=BOOK)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith('{"seed"')]
        if done.returncode != 0 or len(lines) != len(seeds):
            raise EvidenceError(f"{entry['id']}: the runner stopped ({done.returncode}) after "
                                f"{len(lines)} of {len(seeds)} runs:\n{done.stderr[-1500:]}")
        for line in lines:
            result = json.loads(line)
            result["path"] = path
            result["held"] = not result["failures"]
            runs.append(result)
            values = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                               for k, v in result["values"].items())
            echo(f"{'ok  ' if result['held'] else 'FAIL'} {entry['id']} seed {result['seed']} "
                 f"{path} {result['wall']} s {values}")
            for f in result["failures"]:
                echo(f"     cell {f['cell']}: {f['error']}\n       at: {f['source']}")
    stop_line = next(line.strip() for line in cells[stop - 1].splitlines()
                     if entry["cell"] in line or entry["cell"].strip() == line.strip())
    return {"id": entry["id"], "chapter": entry["chapter"], "spec": spec_hash(entry),
            "code": code_fingerprint(cells, stop, skip), "stop_cell": stop,
            "stop_line": stop_line, "skipped_cells": skip,
            "seeds": seeds, "paths": paths, "machine": machine(),
            "command": f"python -m tools.evidence run {entry['id']}",
            "summary": summarize(runs, watch), "runs": runs}


def data_path(entry_id: str) -> Path:
    return DATA / f"{entry_id}.json"


def load_data(directory: Path = DATA) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(directory.glob("ev-*.json"))}


# -- The {ev} role -----------------------------------------------------------------------------

def role_text(body: str, specs: dict[str, dict], data: dict[str, dict]) -> str:
    """What ``{ev}`body``` shows: a count or a formatted statistic from the data."""
    m = EV_FIELD.match(body.strip())
    if not m:
        raise EvidenceError(f"{{ev}}`{body}`: write ev-NN-name:held, :runs or "
                            f":min|median|max:<watch>")
    entry_id = m["id"]
    if entry_id not in specs or entry_id not in data:
        raise EvidenceError(f"{{ev}}`{body}`: no evidence entry {entry_id!r} with data "
                            f"(evidence/*.yaml, evidence/data/)")
    summary = data[entry_id]["summary"]
    if m["count"]:
        return str(summary[m["count"]])
    watch = (specs[entry_id].get("watch") or {}).get(m["watch"])
    if watch is None or m["watch"] not in summary["watch"]:
        raise EvidenceError(f"{{ev}}`{body}`: entry {entry_id} watches no {m['watch']!r}")
    return format(summary["watch"][m["watch"]][m["stat"]], watch.get("format", ".3g"))


# -- The page ----------------------------------------------------------------------------------

# The page's opening (front matter, title, the two paragraphs that explain seeds and paths):
# prose, so it lives as a file of its own beside the specs.
HEADER_FILE = SPECS / "page_header.md"

WORDS = {
    "ko": {"claim": "주장", "bound": "장의 검사", "sweep": "실행", "result": "결과",
           "machine": "환경", "rerun": "다시 실행하려면", "stale": "자료가 명세보다 오래됨"},
    "en": {"claim": "Claim", "bound": "The chapter's check", "sweep": "Runs",
           "result": "Result", "machine": "Machine", "rerun": "To rerun",
           "stale": "data older than its spec"},
}


def _seeds_text(seeds: list[int]) -> str:
    seeds = sorted(seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _entry_text(entry: dict, data: dict, lang: str) -> str:
    w = WORDS[lang]
    s = data["summary"]
    m = data["machine"]
    paths = ", ".join(f"`{p}`" for p in data["paths"])
    seeds = _seeds_text(data["seeds"])
    failed_cells = sorted({f["cell"] for r in data["runs"] for f in r["failures"]})
    lines = [f"**{w['claim']}.** {entry['claim'][lang].strip()}", ""]
    lines.append(f"**{w['bound']}.** `{data['stop_line'].split('  # ')[0].rstrip()}` "
                 + (f"({entry['chapter']}, 코드 {data['stop_cell']}번)" if lang == "ko"
                    else f"({entry['chapter']}, code cell {data['stop_cell']})"))
    lines.append("")
    if lang == "ko":
        lines.append(f"**{w['sweep']}.** 시드 {seeds}, 경로 {paths}: 모두 {s['runs']}번. "
                     f"각 실행은 장의 코드를 처음부터 이 검사까지 돌립니다"
                     + (f"(이 검사에 필요 없는 코드 {len(data['skipped_cells'])}개는 건너뜀)."
                        if data["skipped_cells"] else "."))
        held = f"**{w['result']}.** {s['runs']}번 가운데 {s['held']}번 통과했습니다"
        held += "." if not failed_cells else (
            f"; 실패한 실행은 코드 {', '.join(map(str, failed_cells))}번에서 멈췄습니다.")
    else:
        lines.append(f"**{w['sweep']}.** Seeds {seeds} on paths {paths}: {s['runs']} runs. "
                     f"Each runs the chapter's code from the start up to this check"
                     + (f" (skipping {len(data['skipped_cells'])} cells this check does not need)."
                        if data["skipped_cells"] else "."))
        held = f"**{w['result']}.** {s['held']} of {s['runs']} runs passed"
        held += "." if not failed_cells else (
            f"; the failing runs stopped in code cell "
            f"{', '.join(map(str, failed_cells))}.")
    lines += ["", held, ""]
    for name, watch in (entry.get("watch") or {}).items():
        st, fmt = s["watch"][name], watch.get("format", ".3g")
        vals = [format(st[k], fmt) for k in ("min", "median", "max")]
        if lang == "ko":
            lines.append(f"* {watch['ko'].strip()}: 최소 {vals[0]}, 중앙값 {vals[1]}, "
                         f"최대 {vals[2]}")
        else:
            lines.append(f"* {watch['en'].strip()}: min {vals[0]}, median {vals[1]}, "
                         f"max {vals[2]}")
    if entry.get("watch"):
        lines.append("")
    lines.append(f"**{w['machine']}.** {m['date']}, Python {m['python']}, PyTorch {m['torch']}, "
                 f"NumPy {m['numpy']}, {m['cpu']} ({m['system']}).")
    lines.append("")
    lines.append(f"**{w['rerun']}.** `{data['command']}`")
    return "\n".join(lines).rstrip() + "\n"


def render(specs: dict[str, dict] | None = None, data: dict[str, dict] | None = None) -> str:
    """The appendix page, both languages, from the specs and their data."""
    specs = load_specs() if specs is None else specs
    data = load_data() if data is None else data
    parts = [HEADER_FILE.read_text(encoding="utf-8")]
    by_chapter: dict[str, list[dict]] = {}
    for entry in specs.values():
        if entry["id"] not in data:
            raise EvidenceError(f"{entry['id']} has no data: run python -m tools.evidence run "
                                f"{entry['id']}")
        by_chapter.setdefault(entry["chapter"], []).append(entry)
    for stem in sorted(by_chapter):
        label, chapter = chapter_target(stem)
        parts.append(f"\n+++\n\n## {chapter.title['ko']}{SEPARATOR}{chapter.title['en']}\n")
        parts.append('\n+++ {"lang": "ko"}\n\n'
                     f"{{numref}}`%s장 <{label}>`의 주장입니다.\n")
        parts.append('\n+++ {"lang": "en"}\n\n'
                     f"Claims of {{numref}}`Chapter %s <{label}>`.\n")
        for entry in sorted(by_chapter[stem], key=lambda e: e["id"]):
            d = data[entry["id"]]
            parts.append(f"\n+++\n\n({entry['id']})=\n"
                         f"### {entry['title']['ko'].strip()} · {entry['title']['en'].strip()}\n")
            for lang in ("ko", "en"):
                parts.append(f'\n+++ {{"lang": "{lang}"}}\n\n{_entry_text(entry, d, lang)}')
    if not by_chapter:
        parts.append('\n+++ {"lang": "ko"}\n\n아직 기록이 없습니다.\n'
                     '\n+++ {"lang": "en"}\n\nNo entries yet.\n')
    return "".join(parts)


def problems(specs: dict[str, dict] | None = None, data: dict[str, dict] | None = None,
             book: Path = BOOK) -> list[str]:
    """Disagreements between specs, data, the page and the chapters' roles and links."""
    specs = load_specs() if specs is None else specs
    data = load_data() if data is None else data
    found = []
    for entry_id, entry in specs.items():
        if entry_id not in data:
            found.append(f"{entry_id}: no data file (python -m tools.evidence run {entry_id})")
        elif data[entry_id]["spec"] != spec_hash(entry):
            found.append(f"{entry_id}: the data was made by another spec; run it again")
        elif not (book / f"{entry['chapter']}.md").is_file():
            found.append(f"{entry_id}: no chapter {entry['chapter']}.md")
        elif data[entry_id].get("code") != current_code(entry, book):
            found.append(f"{entry_id}: the chapter's code up to the cell changed since the "
                         f"sweep; run it again (python -m tools.evidence run {entry_id})")
        else:
            runs = data[entry_id]["runs"]
            if summarize(runs, entry.get("watch") or {}) != data[entry_id]["summary"]:
                found.append(f"{entry_id}: the summary does not follow from the runs")
    for entry_id in sorted(set(data) - set(specs)):
        found.append(f"evidence/data/{entry_id}.json: no spec has this id")
    for page in sorted(book.glob("*.md")):
        if page.name == PAGE.name:
            continue
        text = page.read_text(encoding="utf-8")
        for body in EV_ROLE.findall(text):
            try:
                role_text(body, specs, data)
            except EvidenceError as error:
                found.append(f"{page.name}: {error}")
        for label in re.findall(r"<(ev-[\w-]+)>`", text):
            if label not in specs:
                found.append(f"{page.name}: links the evidence entry {label}, which does not "
                             "exist")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the entries and whether their data is current")
    runner = sub.add_parser("run", help="run entries' sweeps and write their data")
    runner.add_argument("ids", nargs="+")
    runner.add_argument("--seeds", help="override the spec's seeds (the data then says so)")
    runner.add_argument("--paths", nargs="+", choices=sorted(SIMD_PATHS))
    page = sub.add_parser("render", help="write book/evidence.md from the data")
    page.add_argument("--check", action="store_true", help="fail if the page is out of date")
    args = parser.parse_args(argv)
    try:
        specs = load_specs()
        if args.command == "list":
            data = load_data()
            for entry_id, entry in specs.items():
                state = ("no data" if entry_id not in data else
                         "stale" if data[entry_id]["spec"] != spec_hash(entry) else
                         "code changed" if data[entry_id].get("code") != current_code(entry) else
                         f"{data[entry_id]['summary']['held']}/"
                         f"{data[entry_id]['summary']['runs']} held")
                print(f"{entry_id:40} {entry['chapter']:24} {state}")
            return 0
        if args.command == "run":
            for entry_id in args.ids:
                if entry_id not in specs:
                    raise EvidenceError(f"no entry {entry_id!r}; have {sorted(specs)}")
                seeds = parse_offsets(args.seeds) if args.seeds else None
                result = run(specs[entry_id], seeds, args.paths)
                if seeds is not None or args.paths:
                    # a partial sweep is not the spec's: record it under the spec's hash only
                    # when it ran exactly what the spec says
                    same = (result["seeds"] == parse_offsets(str(specs[entry_id]["seeds"]))
                            and result["paths"] == specs[entry_id]["paths"])
                    if not same:
                        result["spec"] = "partial"
                DATA.mkdir(parents=True, exist_ok=True)
                data_path(entry_id).write_text(
                    json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
                s = result["summary"]
                print(f"{entry_id}: {s['held']} of {s['runs']} runs held -> "
                      f"{data_path(entry_id).relative_to(ROOT)}")
            return 0
        text = render(specs)
        if args.check:
            if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
                print(f"{PAGE.relative_to(ROOT)} is out of date: python -m tools.evidence render")
                return 1
            return 0
        PAGE.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)} ({len(specs)} entries)")
        return 0
    except EvidenceError as error:
        print(f"evidence: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

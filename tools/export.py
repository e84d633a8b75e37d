"""Export the code that chapters teach into ``d2lite`` modules (d2l's ``#@save`` idea).

A chapter names its target module in its front matter::

    d2lite:
      export: attention

and marks each code cell to export with ``#@save`` as its first line. Running
``python -m tools.export`` rewrites ``d2lite/<module>.py`` from those cells, in order;
``python -m tools.export --check`` fails (exit 1) when a committed module has drifted.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import sys
from pathlib import Path

import jupytext

from tools.core import BOOK, ROOT, chapter_sources

PACKAGE = ROOT / "d2lite"
MARKER = "#@save"
GENERATED_MARK = "by `python -m tools.export`; edit the chapter, not this file."


def export_target(nb) -> str | None:
    """The module a notebook exports to, from its ``d2lite.export`` metadata."""
    meta = nb.metadata.get("d2lite") or {}
    target = meta.get("export")
    if target is None:
        return None
    if not isinstance(target, str) or not target.isidentifier():
        raise ValueError(f"d2lite.export must name a module, got {target!r}")
    if (PACKAGE / target).is_dir():
        raise ValueError(f"d2lite/{target}/ is a hand-written subpackage; export to another module")
    path = PACKAGE / f"{target}.py"
    if path.exists() and GENERATED_MARK not in path.read_text(encoding="utf-8"):
        raise ValueError(f"d2lite/{target}.py is hand-written; export to another module")
    return target


def saved_cells(nb) -> list[str]:
    """Source of the code cells whose first line is ``#@save``, marker removed."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.strip("\n").splitlines()
        if lines and lines[0].strip() == MARKER:
            out.append("\n".join(lines[1:]).strip("\n"))
    return out


def public_names(code: str) -> list[str]:
    """Top-level functions, classes and assigned names not starting with ``_``."""
    names = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def render_module(source: Path, nb) -> str:
    """The text of the generated module for one chapter."""
    cells = saved_cells(nb)
    if not cells:
        raise ValueError(f"{source.name} declares d2lite.export but has no {MARKER} cell")
    title = nb.metadata.get("d2lite", {}).get("summary", "")
    rel = source.relative_to(ROOT).as_posix()
    header = [
        f'"""{title}'.rstrip() if title else '"""Code taught in ' + rel + ".",
        "",
        f"Generated from {rel}",
        GENERATED_MARK,
        '"""',
        "",
        "# ruff: noqa: I001  (imports stay in the order the chapter introduces them)",
        "",
    ]
    body = "\n\n\n".join(cells)
    names = public_names(body)
    all_list = "__all__ = [\n" + "".join(f'    "{n}",\n' for n in sorted(names)) + "]\n"
    return "\n".join(header) + "\n" + body + "\n\n\n" + all_list


def generated_modules(book: Path = BOOK) -> dict[Path, str]:
    """Map each generated module's path to its expected text."""
    out: dict[Path, str] = {}
    for source in chapter_sources(book=book):
        nb = jupytext.read(source)
        target = export_target(nb)
        if target is None:
            continue
        path = PACKAGE / f"{target}.py"
        if path in out:
            raise ValueError(f"two chapters export to d2lite/{target}.py")
        out[path] = render_module(source, nb)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if modules are out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in generated_modules().items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        if args.check:
            stale.append(path)
            diff = difflib.unified_diff(
                old.splitlines(), text.splitlines(), str(path), "from the chapter", lineterm=""
            )
            print("\n".join(list(diff)[:40]))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"{len(stale)} module(s) differ from their chapters: run `python -m tools.export`")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

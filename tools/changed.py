"""Execute only the chapters whose inputs changed since they last passed (the edit–test loop).

``python -m tools.changed``          list the chapters that would run and why
``python -m tools.changed --run``    execute them (nbval, as ``make test`` does) and remember
                                     each one that passes

A chapter's fingerprint is the sha256 of what its run depends on: the chapter source, the
sources of ``d2lite`` as ``tools.colab_env.sources_digest`` hashes them for the wheel (a chapter
imports the whole library), ``requirements.txt`` and the interpreter and torch versions.
A chapter that passed with the same fingerprint is skipped; the
fingerprints of passing chapters live in ``_build/changed/<chapter>.sha256``. ``make test`` never
reads them: a fresh clone runs every chapter, as CI must.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

from tools.colab_env import sources_digest
from tools.core import BUILD, ROOT, chapter_sources

STAMPS = BUILD / "changed"
TEST_DIR = BUILD / "nbval"


def library_digest(root: Path = ROOT) -> str:
    """sha256 over the library's sources (the wheel's digest, as the Colab door uses it), the
    requirements and the interpreter and torch versions that run them."""
    h = hashlib.sha256(sources_digest().encode())
    h.update((root / "requirements.txt").read_bytes())
    h.update(platform.python_version().encode())
    try:
        import torch

        h.update(torch.__version__.encode())
    except ImportError:  # pragma: no cover - the book needs torch anyway
        pass
    return h.hexdigest()


def fingerprint(chapter: Path, library: str) -> str:
    return hashlib.sha256(library.encode() + chapter.read_bytes()).hexdigest()


def chapters(root: Path = ROOT) -> list[Path]:
    """The sources that ``make test`` executes under nbval (the chapters, in toc order)."""
    return list(chapter_sources())


def stale(root: Path = ROOT, stamps: Path = STAMPS) -> list[tuple[Path, str, str]]:
    """(chapter, fingerprint, reason) of every chapter that must run."""
    library = library_digest(root)
    out = []
    for chapter in chapters(root):
        fp = fingerprint(chapter, library)
        stamp = stamps / f"{chapter.stem}.sha256"
        if not stamp.exists():
            out.append((chapter, fp, "never passed here"))
        elif stamp.read_text().strip() != fp:
            out.append((chapter, fp, "chapter, library or environment changed"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="execute them and remember passes")
    args = parser.parse_args(argv)
    todo = stale()
    for chapter, _, reason in todo:
        print(f"{chapter.stem}: {reason}")
    if not todo:
        print("every chapter passed with today's sources; nothing to run")
        return 0
    if not args.run:
        return 0
    subprocess.run([sys.executable, "-m", "tools.notebooks", "--test-dir", str(TEST_DIR)],
                   check=True, stdout=subprocess.DEVNULL)
    STAMPS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    failed = 0
    for chapter, fp, _ in todo:
        notebook = TEST_DIR / f"{chapter.stem}.ipynb"
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "--nbval-lax",
                                 "-p", "no:cacheprovider", str(notebook)], env=env)
        stamp = STAMPS / f"{chapter.stem}.sha256"
        if result.returncode == 0:
            stamp.write_text(fp + "\n")
        else:
            stamp.unlink(missing_ok=True)
            failed += 1
    print(f"{len(todo) - failed} of {len(todo)} chapter(s) passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

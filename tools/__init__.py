"""Maintainer tools of the book (not part of the installed ``d2lite`` package).

Run them from the repository root as modules: ``python -m tools.book check``, ``python -m
tools.notebooks``, ``python -m tools.export``, ``python -m tools.bench``. What they share (the
repository's paths, which files are chapters, the environment of a chapter run) is in
``tools.core``; a program that runs in a fresh interpreter is a module of its own
(``tools.run_notebook``, ``tools.cell_runner``), never text in a string.
"""

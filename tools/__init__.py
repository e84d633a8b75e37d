"""Maintainer tools of the book (not part of the installed ``d2lite`` package).

Run them from the repository root: ``python -m tools.book check``, ``python -m tools.book
notebooks``, ``python -m tools.export``, ``python -m tools.bench``.
"""

"""The book's own prose, per language: a corpus that ships in the wheel (chapter 10).

``d2lite/book_prose.json`` is generated from the chapters by ``python -m tools.prose`` (markup
stripped, one paragraph per item), so a reader trains tokenizers and a small language model on
the book itself with nothing to download.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

__all__ = ["load_book_prose"]

LANGS = ("ko", "en")


@functools.lru_cache(maxsize=1)
def _corpus() -> dict:
    text = resources.files("d2lite").joinpath("book_prose.json").read_text(encoding="utf-8")
    return json.loads(text)


def load_book_prose(lang: str = "ko") -> list[str]:
    """The paragraphs of the book's prose in ``lang`` ('ko' or 'en'), in reading order."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return list(_corpus()[lang])

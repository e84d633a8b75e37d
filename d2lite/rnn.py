"""Recurrent networks from chapter 1.

Generated from book/01_rnn.md
by `python -m d2lite.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import torch  # noqa: F401  (placeholder until chapter 1 is written)


__all__ = [
]

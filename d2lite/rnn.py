"""Recurrent networks from chapter 1.

Generated from book/01_rnn.md by `python -m d2lite.export`; edit the chapter, not this file.
"""

import torch


__all__ = [
]

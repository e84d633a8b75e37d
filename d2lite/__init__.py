"""d2lite: the small PyTorch library of the book 어텐션과 트랜스포머 · Attention and Transformers.

``import d2lite as d2l`` gives the familiar *Dive into Deep Learning* names in one flat
namespace. Hand-written helpers come first; the modules generated from chapters (see
``tools/export.py``) follow in chapter order, so later chapters can build on earlier ones.
"""

from .utils import *
from .plotting import *
from .text import *
from .prose import *
from .hangul import *
from .data import *
from .seq2seq import *
from .train import *
from .budget import *
from .vision import *
from .views import *

__version__ = "0.1.0"

# Chapter modules, generated from book/ by `python -m tools.export`, in chapter order:
from .rnn import *
from .bptt import *
from .pooling import *
from .attention import *
from .bahdanau import *
from .multihead import *
from .positional import *
from .transformer import *
from .vit import *
from .lm import *
from .shipped import *
from .efficient import *

# Architecture diagrams (d2l.diagrams.draw_...), drawn from the modules above.
from . import diagrams  # noqa: F401  (d2l.diagrams)

"""Diagrams of the book's architectures, drawn from the models they show.

:mod:`d2lite.diagrams.core` is the vocabulary (boxes, tensors, arrows, groups, masks, caches,
residual paths, one palette); the other modules draw one architecture each from a module or
its configuration, running it on a small batch to print the shapes it really produces.
"""

from .attention import *  # noqa: F403
from .bahdanau import *  # noqa: F403
from .core import *  # noqa: F403
from .efficient import *  # noqa: F403
from .lm import *  # noqa: F403
from .lstm import *  # noqa: F403
from .multihead import *  # noqa: F403
from .positional import *  # noqa: F403
from .rnn import *  # noqa: F403
from .transformer import *  # noqa: F403
from .vit import *  # noqa: F403

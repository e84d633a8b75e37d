"""d2l 1.0's PyTorch API on top of today's PyTorch: ``from d2lite import d2l``.

The book's own API (``import d2lite as d2l``) is batch-first and validates its inputs. This
module instead follows the layouts and signatures of the ``d2l.torch`` module of *Dive into
Deep Learning* 1.0, so that code written against it (for example the PyTorch cells of its
attention chapter) runs with only the import line changed: ``from d2l import torch as d2l``
becomes ``from d2lite import d2l``. It is written from the published API (names, signatures,
tensor layouts), not copied from d2l.

Each name whose behavior or layout differs from the book's own API carries a
``__d2l_diff__ = {"ko": ..., "en": ...}`` note, read from the package's ``notes.json`` (which also
holds the book API's Korean notes and summaries); the appendix page ``d2l_compat`` lists them.

The names live in modules by job: ``aliases`` (tensor, plot and device helpers), ``framework``
(d2l 1.0's training framework), ``encoder_decoder``, ``attention_models``,
``vision_transformer`` and ``datasets`` (downloads and data modules); this package re-exports
them all under their d2l names.
"""

from __future__ import annotations

import json
from importlib import resources

# Attributes of the former single-file module, kept so that d2l.torch, d2l.np, ... still work.
import collections  # noqa: F401
import hashlib  # noqa: F401
import importlib  # noqa: F401
import inspect  # noqa: F401
import math  # noqa: F401
import os  # noqa: F401
import sys  # noqa: F401
import urllib.error  # noqa: F401
import urllib.request  # noqa: F401
import zipfile  # noqa: F401
from pathlib import Path  # noqa: F401

import numpy as np  # noqa: F401
import torch  # noqa: F401
from torch import nn  # noqa: F401
from torch.nn import functional as F  # noqa: F401

from .aliases import (
    Timer, abs, arange, argmax, astype, check_len, check_shape, concat, cos, cpu, exp, eye,
    float32, gpu, int32, int64, linspace, matmul, normal, num_gpus, numpy, ones, plot, plt,
    rand, randn, reduce_mean, reduce_sum, reshape, set_axes, set_figsize, show_heatmaps, sin,
    size, stack, tanh, tensor, try_all_gpus, try_gpu, use_svg_display, zeros,
)
from .framework import (
    Classifier, DataModule, GRU, HyperParameters, Module, ProgressBoard, RNN, Trainer, Vocab,
    add_to_class, init_seq2seq,
)
from .encoder_decoder import (
    AttentionDecoder, Decoder, Encoder, EncoderDecoder, Seq2Seq, Seq2SeqDecoder,
    Seq2SeqEncoder, bleu,
)
from .attention_models import (
    AddNorm, AdditiveAttention, DotProductAttention, MultiHeadAttention, PositionWiseFFN,
    PositionalEncoding, Seq2SeqAttentionDecoder, TransformerDecoder, TransformerDecoderBlock,
    TransformerEncoder, TransformerEncoderBlock, masked_softmax,
)
from .vision_transformer import PatchEmbedding, ViT, ViTBlock, ViTMLP
from .datasets import (  # DATA_URL and DATA_HUB: d2l's data registry, outside __all__
    DATA_HUB, DATA_URL, FashionMNIST, MTFraEng, download, extract,  # noqa: F401
)

__all__ = [
    # tensor and plot helpers
    "tensor", "ones", "zeros", "arange", "reshape", "normal", "rand", "randn", "eye", "exp",
    "abs", "sin", "cos", "tanh", "matmul", "reduce_sum", "reduce_mean", "astype", "float32",
    "int32", "int64", "concat", "stack", "numpy", "size", "argmax", "linspace", "plt",
    "use_svg_display", "set_figsize", "set_axes", "plot", "show_heatmaps", "check_shape",
    "check_len", "cpu", "gpu", "num_gpus", "try_gpu", "try_all_gpus", "Timer",
    # framework
    "HyperParameters", "ProgressBoard", "Module", "DataModule", "Trainer", "Classifier",
    "add_to_class", "init_seq2seq", "RNN", "GRU", "Vocab",
    # encoder-decoder
    "Encoder", "Decoder", "AttentionDecoder", "EncoderDecoder", "Seq2SeqEncoder",
    "Seq2SeqDecoder", "Seq2SeqAttentionDecoder", "Seq2Seq", "bleu",
    # attention
    "masked_softmax", "DotProductAttention", "AdditiveAttention", "MultiHeadAttention",
    "PositionalEncoding", "PositionWiseFFN", "AddNorm", "TransformerEncoderBlock",
    "TransformerEncoder", "TransformerDecoderBlock", "TransformerDecoder",
    "PatchEmbedding", "ViTMLP", "ViTBlock", "ViT",
    # data
    "download", "extract", "MTFraEng", "FashionMNIST",
]  # fmt: skip


# -- how names differ from d2l: notes.json, read here and by the appendix page d2l_compat ------

_NOTES = json.loads(resources.files(__name__).joinpath("notes.json").read_text(encoding="utf-8"))

#: For each name that ``import d2lite as d2l`` shares with d2l and whose docstring says (in
#: English) how it differs, the same point in Korean. The appendix page ``d2l_compat`` shows
#: the Korean note in Korean mode and the docstring's sentences in English mode, and asserts
#: that no such name lacks its Korean note.
BOOK_DIFFS_KO: dict[str, str] = _NOTES["book_diff_ko"]

# Each name of this package whose behavior or layout differs from the book's own API carries
# its note as ``__d2l_diff__ = {"ko": ..., "en": ...}`` (a subclass such as GRU shares its base's).
for _name, _note in _NOTES["d2l_diff"].items():
    if _name not in __all__:
        raise ImportError(f"notes.json: d2l_diff names {_name!r}, which d2lite.d2l does not export")
    globals()[_name].__d2l_diff__ = _note
del _name, _note

"""d2l 1.0's PyTorch API on top of today's PyTorch: ``from d2lite import d2l``.

The book's own API (``import d2lite as d2l``) is batch-first and validates its inputs. This
module instead follows the layouts and signatures of the ``d2l.torch`` module of *Dive into
Deep Learning* 1.0, so that code written against it (for example the PyTorch cells of its
attention chapter) runs with only the import line changed: ``from d2l import torch as d2l``
becomes ``from d2lite import d2l``. It is written from the published API (names, signatures,
tensor layouts), not copied from d2l.

Each name whose behaviour or layout differs from the book's own API carries a
``__d2l_diff__ = {"ko": ..., "en": ...}`` note; the appendix page ``d2l_compat`` lists them.
"""

from __future__ import annotations

import collections
import hashlib
import importlib
import inspect
import math
import os
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import torch
from matplotlib import pyplot as plt
from torch import nn
from torch.nn import functional as F

# The package's namespace holds the *function* plot, so fetch the modules by name.
_plot = importlib.import_module("d2lite.plotting")
_utils = importlib.import_module("d2lite.utils")

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

# -- tensor helpers: d2l's framework-neutral aliases ------------------------------------------

tensor = torch.tensor
ones = torch.ones
zeros = torch.zeros
arange = torch.arange
normal = torch.normal
rand = torch.rand
randn = torch.randn
eye = torch.eye
exp = torch.exp
abs = torch.abs  # noqa: A001  (d2l's name)
sin = torch.sin
cos = torch.cos
tanh = torch.tanh
matmul = torch.matmul
linspace = torch.linspace
concat = torch.cat
stack = torch.stack
float32 = torch.float32
int32 = torch.int32
int64 = torch.int64


def reshape(x, *shape):
    """``x.reshape(*shape)`` as a function."""
    return x.reshape(*shape)


def reduce_sum(x, *args, **kwargs):
    """``x.sum(...)`` as a function."""
    return x.sum(*args, **kwargs)


def reduce_mean(x, *args, **kwargs):
    """``x.mean(...)`` as a function."""
    return x.mean(*args, **kwargs)


def astype(x, dtype):
    """``x.type(dtype)`` as a function."""
    return x.type(dtype)


def numpy(x, *args, **kwargs):
    """The values of ``x`` as a NumPy array (detached, on the CPU)."""
    return x.detach().cpu().numpy(*args, **kwargs)


def size(x, *args, **kwargs):
    """Number of elements of ``x``."""
    return x.numel(*args, **kwargs)


def argmax(x, *args, **kwargs):
    """``x.argmax(...)`` as a function."""
    return x.argmax(*args, **kwargs)


def use_svg_display() -> None:
    """Draw inline figures as SVG in Jupyter (does nothing outside IPython)."""
    try:
        from matplotlib_inline import backend_inline
    except ImportError:
        return
    backend_inline.set_matplotlib_formats("svg")


set_figsize = _plot.set_figsize
set_axes = _plot.set_axes
cpu = _utils.cpu
num_gpus = _utils.num_gpus
try_gpu = _utils.try_gpu
try_all_gpus = _utils.try_all_gpus
Timer = _utils.Timer


def gpu(i: int = 0) -> torch.device:
    """The ``i``-th CUDA device (it need not exist, as in d2l)."""
    return torch.device(f"cuda:{i}")


def plot(X, Y=None, xlabel=None, ylabel=None, legend=None, xlim=None, ylim=None,
         xscale="linear", yscale="linear", fmts=("-", "m--", "g-.", "r:"), figsize=(3.5, 2.5),
         axes=None) -> None:
    """Plot curves as d2l does: on ``axes`` or the current axes (a new figure of ``figsize``
    when there is none), with a legend of any length; nothing is returned."""
    if axes is None:
        _plot.set_figsize(figsize)
        axes = plt.gca()
    _plot.plot(X, Y, xlabel=xlabel, ylabel=ylabel, legend=None, xlim=xlim, ylim=ylim,
               xscale=xscale, yscale=yscale, fmts=fmts, axes=axes)
    if legend:
        axes.legend(list(legend))


def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=(2.5, 2.5), cmap="Reds",
                  shared_scale: bool = False) -> None:
    """A grid of heatmaps; ``figsize`` is the whole figure and each panel has its own colour
    scale, as in d2l (``shared_scale=True`` gives one scale for all)."""
    _plot.show_heatmaps(matrices, xlabel, ylabel, titles=titles, figsize=figsize, cmap=cmap,
                        shared_scale=shared_scale)


show_heatmaps.__d2l_diff__ = {
    "ko": "d2l처럼 패널마다 색 범위와 색 막대가 따로입니다(shared_scale=False). 책의 "
          "show_heatmaps는 기본으로 모든 패널에 색 범위 하나를 씁니다. figsize는 둘 다 그림 전체 "
          "크기입니다.",
    "en": "Each panel has its own colour scale and colour bar, as in d2l (shared_scale=False); "
          "the book's show_heatmaps shares one scale by default. In both, figsize is the whole "
          "figure.",
}


def check_shape(a, shape) -> None:
    """Check that ``a.shape`` equals ``shape`` (raises ``AssertionError`` like d2l)."""
    got, want = tuple(a.shape), tuple(shape)
    assert got == want, f"tensor's shape {got} != expected {want}"


def check_len(a, n) -> None:
    """Check that ``len(a) == n`` (raises ``AssertionError`` like d2l)."""
    assert len(a) == n, f"list's length {len(a)} != expected length {n}"


check_shape.__d2l_diff__ = {
    "ko": "d2l처럼 AssertionError를 냅니다. 책의 check_shape는 ValueError를 내고 None을 "
          "아무 크기로 받아 줍니다.",
    "en": "Raises AssertionError as d2l does; the book's check_shape raises ValueError and "
          "lets None match any size.",
}


# -- the d2l 1.0 framework --------------------------------------------------------------------


class HyperParameters:
    """Base class whose ``save_hyperparameters`` stores the caller's arguments as attributes."""

    def save_hyperparameters(self, ignore=()):
        """Copy the arguments of the calling ``__init__`` into ``self`` and ``self.hparams``."""
        frame = inspect.currentframe().f_back
        skip = set(ignore) | {"self"}
        local_vars = frame.f_locals
        self.hparams = {k: v for k, v in local_vars.items()
                        if k not in skip and not k.startswith("_") and k != "__class__"}
        for k, v in self.hparams.items():
            setattr(self, k, v)


class ProgressBoard(HyperParameters):
    """A live training plot: ``draw(x, y, label)`` adds points, averaged over ``every_n``.

    In Jupyter the figure is redrawn in place; outside Jupyter (``display=False`` or no
    IPython) points are only collected in ``self.data``.
    """

    def __init__(self, xlabel=None, ylabel=None, xlim=None, ylim=None, xscale="linear",
                 yscale="linear", ls=("-", "--", "-.", ":"), colors=("C0", "C1", "C2", "C3"),
                 fig=None, axes=None, figsize=(3.5, 2.5), display=True):
        self.save_hyperparameters()
        self.data = collections.OrderedDict()
        self._raw = collections.OrderedDict()
        self._handle = None

    def draw(self, x, y, label, every_n=1):
        """Add the point (x, y) to the curve ``label``; one averaged point per ``every_n``."""
        every_n = max(int(every_n), 1)
        raw = self._raw.setdefault(label, [])
        points = self.data.setdefault(label, [])
        raw.append((float(x), float(y)))
        if len(raw) != every_n:
            return
        points.append((float(np.mean([p[0] for p in raw])), float(np.mean([p[1] for p in raw]))))
        raw.clear()
        if self.display:
            self._show()

    def _show(self) -> None:
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            return
        shell = get_ipython()
        if shell is None or not hasattr(shell, "kernel"):  # not a Jupyter kernel
            return
        fig = self.fig or plt.figure(figsize=self.figsize)
        if self.fig is None:
            self.fig = fig
        axes = self.axes or fig.gca()
        axes.cla()
        for (label, points), ls, color in zip(self.data.items(), _cycle(self.ls),
                                              _cycle(self.colors)):
            axes.plot([p[0] for p in points], [p[1] for p in points], linestyle=ls,
                      color=color, label=label)
        _plot.set_axes(axes, self.xlabel or "", self.ylabel or "", self.xlim, self.ylim,
                       self.xscale, self.yscale, None)
        axes.legend()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)
        plt.close(fig)


def _cycle(items):
    while True:
        yield from items


class Module(nn.Module, HyperParameters):
    """d2l 1.0's base model: ``loss``, ``forward`` (``self.net``), ``training_step``,
    ``validation_step``, ``configure_optimizers`` (SGD at ``self.lr``) and ``plot``."""

    def __init__(self, plot_train_per_epoch=2, plot_valid_per_epoch=1):
        super().__init__()
        self.save_hyperparameters()
        self.board = ProgressBoard()

    def loss(self, y_hat, y):
        raise NotImplementedError

    def forward(self, X):
        assert hasattr(self, "net"), "Neural network is defined"
        return self.net(X)

    def plot(self, key, value, train):
        """Send one loss or metric value to the live training plot."""
        assert hasattr(self, "trainer"), "Trainer is not inited"
        self.board.xlabel = "epoch"
        trainer = self.trainer
        if train:
            x = trainer.train_batch_idx / trainer.num_train_batches
            n = trainer.num_train_batches / self.plot_train_per_epoch
        else:
            x = trainer.epoch + 1
            n = trainer.num_val_batches / self.plot_valid_per_epoch
        value = value.detach().cpu() if isinstance(value, torch.Tensor) else value
        self.board.draw(x, value, ("train_" if train else "val_") + key, every_n=int(n))

    def training_step(self, batch):
        loss = self.loss(self(*batch[:-1]), batch[-1])
        self.plot("loss", loss, train=True)
        return loss

    def validation_step(self, batch):
        loss = self.loss(self(*batch[:-1]), batch[-1])
        self.plot("loss", loss, train=False)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)

    def apply_init(self, inputs, init=None):
        """Run one forward pass (to size lazy layers), then apply ``init`` to ``self.net``."""
        self.forward(*inputs)
        if init is not None:
            self.net.apply(init)


class DataModule(HyperParameters):
    """d2l 1.0's data base class: ``train_dataloader`` / ``val_dataloader`` via
    ``get_dataloader(train)``, and ``get_tensorloader`` for tensors in memory."""

    def __init__(self, root="../data", num_workers=4):
        self.save_hyperparameters()

    def get_dataloader(self, train):
        raise NotImplementedError

    def train_dataloader(self):
        return self.get_dataloader(train=True)

    def val_dataloader(self):
        return self.get_dataloader(train=False)

    def get_tensorloader(self, tensors, train, indices=slice(0, None)):
        tensors = tuple(a[indices] for a in tensors)
        dataset = torch.utils.data.TensorDataset(*tensors)
        return torch.utils.data.DataLoader(dataset, self.batch_size, shuffle=train)


class Trainer(HyperParameters):
    """d2l 1.0's training loop: ``fit(model, data)`` runs ``max_epochs`` of ``fit_epoch``."""

    def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):
        self.save_hyperparameters()
        self.gpus = [gpu(i) for i in range(min(num_gpus, _utils.num_gpus()))]

    def prepare_data(self, data):
        self.train_dataloader = data.train_dataloader()
        self.val_dataloader = data.val_dataloader()
        self.num_train_batches = len(self.train_dataloader)
        self.num_val_batches = len(self.val_dataloader) if self.val_dataloader is not None else 0

    def prepare_model(self, model):
        model.trainer = self
        model.board.xlim = [0, self.max_epochs]
        if self.gpus:
            model.to(self.gpus[0])
        self.model = model

    def fit(self, model, data):
        self.prepare_data(data)
        self.prepare_model(model)
        self.optim = model.configure_optimizers()
        self.epoch = 0
        self.train_batch_idx = 0
        self.val_batch_idx = 0
        for epoch in range(self.max_epochs):
            self.epoch = epoch
            self.fit_epoch()

    def prepare_batch(self, batch):
        if self.gpus:
            batch = [a.to(self.gpus[0]) for a in batch]
        return batch

    def fit_epoch(self):
        self.model.train()
        for batch in self.train_dataloader:
            loss = self.model.training_step(self.prepare_batch(batch))
            self.optim.zero_grad()
            with torch.no_grad():
                loss.backward()
                if self.gradient_clip_val > 0:
                    self.clip_gradients(self.gradient_clip_val, self.model)
                self.optim.step()
            self.train_batch_idx += 1
        if self.val_dataloader is None:
            return
        self.model.eval()
        for batch in self.val_dataloader:
            with torch.no_grad():
                self.model.validation_step(self.prepare_batch(batch))
            self.val_batch_idx += 1

    def clip_gradients(self, grad_clip_val, model):
        """Rescale all gradients together so that their global norm is at most the value."""
        params = [p for p in model.parameters() if p.requires_grad and p.grad is not None]
        norm = torch.sqrt(sum(torch.sum(p.grad**2) for p in params))
        if norm > grad_clip_val:
            for p in params:
                p.grad[:] *= grad_clip_val / norm


class Classifier(Module):
    """A ``Module`` with cross-entropy loss and accuracy on the validation set."""

    def validation_step(self, batch):
        Y_hat = self(*batch[:-1])
        self.plot("loss", self.loss(Y_hat, batch[-1]), train=False)
        self.plot("acc", self.accuracy(Y_hat, batch[-1]), train=False)

    def accuracy(self, Y_hat, Y, averaged=True):
        Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
        preds = Y_hat.argmax(dim=1).type(Y.dtype)
        compare = (preds == Y.reshape(-1)).type(torch.float32)
        return compare.mean() if averaged else compare

    def loss(self, Y_hat, Y, averaged=True):
        Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
        Y = Y.reshape((-1,))
        return F.cross_entropy(Y_hat, Y, reduction="mean" if averaged else "none")

    def layer_summary(self, X_shape):
        X = torch.randn(*X_shape)
        for layer in self.net:
            X = layer(X)
            print(layer.__class__.__name__, "output shape:\t", X.shape)


def add_to_class(Class):
    """Decorator: ``@add_to_class(C)`` attaches the decorated function to class ``C``."""

    def wrapper(obj):
        setattr(Class, obj.__name__, obj)

    return wrapper


def init_seq2seq(module) -> None:
    """Xavier-uniform initialisation of the weights of ``nn.Linear`` and ``nn.GRU`` layers."""
    if type(module) is nn.Linear:
        nn.init.xavier_uniform_(module.weight)
    if type(module) is nn.GRU:
        for name in module._flat_weights_names:
            if "weight" in name:
                nn.init.xavier_uniform_(module._parameters[name])


class RNN(Module):
    """A one-layer ``nn.RNN`` (time-first) wrapped as a d2l ``Module``."""

    def __init__(self, num_inputs, num_hiddens):
        super().__init__()
        self.save_hyperparameters()
        self.rnn = nn.RNN(num_inputs, num_hiddens)

    def forward(self, inputs, H=None):
        return self.rnn(inputs, H)


class GRU(RNN):
    """A (multi-layer) ``nn.GRU``, time-first: (steps, batch, inputs)."""

    def __init__(self, num_inputs, num_hiddens, num_layers, dropout=0):
        Module.__init__(self)
        self.save_hyperparameters()
        self.rnn = nn.GRU(num_inputs, num_hiddens, num_layers, dropout=dropout)


RNN.__d2l_diff__ = GRU.__d2l_diff__ = {
    "ko": "d2l처럼 시간 축이 먼저인 (스텝, 배치, 특징) 텐서를 받습니다. "
          "책의 순환망은 배치가 먼저입니다.",
    "en": "Time-first (steps, batch, features) as in d2l; "
          "the book's recurrent nets are batch-first.",
}


class Vocab:
    """d2l 1.0's vocabulary: tokens sorted alphabetically, ``<unk>`` always present."""

    def __init__(self, tokens=(), min_freq=0, reserved_tokens=()):
        tokens = list(tokens)
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        kept = [token for token, freq in self.token_freqs if freq >= min_freq]
        self.idx_to_token = sorted(set(["<unk>", *reserved_tokens, *kept]))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, "__len__") and len(indices) > 1:
            return [self.idx_to_token[int(index)] for index in indices]
        return self.idx_to_token[int(indices)] if not hasattr(indices, "__len__") else \
            self.idx_to_token[int(indices[0])]

    @property
    def unk(self):
        return self.token_to_idx["<unk>"]


Vocab.__d2l_diff__ = {
    "ko": "d2l 1.0처럼 토큰을 가나다(알파벳) 순으로 번호 매깁니다. 책의 Vocab은 예약 토큰을 "
          "앞에 두고 빈도 순으로 매깁니다.",
    "en": "Numbers tokens in sorted order as d2l 1.0 does; the book's Vocab puts the reserved "
          "tokens first and then orders by frequency.",
}


# -- encoder-decoder, time-first as in d2l ----------------------------------------------------


class Encoder(nn.Module):
    """Base encoder interface: ``forward(X, *args)``."""

    def forward(self, X, *args):
        raise NotImplementedError


class Decoder(nn.Module):
    """Base decoder interface: ``init_state(enc_all_outputs, *args)`` and ``forward(X, state)``."""

    def init_state(self, enc_all_outputs, *args):
        raise NotImplementedError

    def forward(self, X, state):
        raise NotImplementedError


class AttentionDecoder(Decoder):
    """A decoder that exposes ``attention_weights``."""

    @property
    def attention_weights(self):
        raise NotImplementedError


class EncoderDecoder(Classifier):
    """Encoder + decoder as one ``Classifier``; ``predict_step`` decodes greedily."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X, dec_X, *args):
        enc_all_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_all_outputs, *args)
        return self.decoder(dec_X, dec_state)[0]

    def predict_step(self, batch, device, num_steps, save_attention_weights=False):
        batch = [a.to(device) for a in batch]
        src, tgt, src_valid_len, _ = batch
        enc_all_outputs = self.encoder(src, src_valid_len)
        dec_state = self.decoder.init_state(enc_all_outputs, src_valid_len)
        outputs, attention_weights = [tgt[:, 0].unsqueeze(1)], []
        for _ in range(num_steps):
            Y, dec_state = self.decoder(outputs[-1], dec_state)
            outputs.append(Y.argmax(2))
            if save_attention_weights:
                attention_weights.append(self.decoder.attention_weights)
        return torch.cat(outputs[1:], 1), attention_weights


EncoderDecoder.__d2l_diff__ = {
    "ko": "d2l처럼 Classifier를 상속하고 predict_step을 가집니다. 책의 EncoderDecoder는 "
          "nn.Module이고 번역은 predict_seq2seq가 맡습니다.",
    "en": "A Classifier with predict_step as in d2l; the book's EncoderDecoder is an nn.Module "
          "and translation is done by predict_seq2seq.",
}


class Seq2SeqEncoder(Encoder):
    """GRU encoder: tokens (batch, steps) -> outputs (steps, batch, h), state (layers, batch, h)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size, num_hiddens, num_layers, dropout)
        self.apply(init_seq2seq)

    def forward(self, X, *args):
        embs = self.embedding(X.t().type(torch.int64))  # (steps, batch, embed)
        outputs, state = self.rnn(embs)
        return outputs, state


Seq2SeqEncoder.__d2l_diff__ = {
    "ko": "출력이 d2l처럼 시간 축이 먼저인 (스텝, 배치, 은닉)입니다. 책의 Seq2SeqEncoder는 "
          "(배치, 스텝, 은닉)을 돌려줍니다.",
    "en": "Outputs are time-first (steps, batch, hiddens) as in d2l; the book's Seq2SeqEncoder "
          "returns (batch, steps, hiddens).",
}


class Seq2SeqDecoder(Decoder):
    """GRU decoder fed the encoder's last-layer final state as context at every step."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)

    def init_state(self, enc_all_outputs, *args):
        return enc_all_outputs

    def forward(self, X, state):
        embs = self.embedding(X.t().type(torch.int64))
        enc_output, hidden_state = state
        context = enc_output[-1].repeat(embs.shape[0], 1, 1)
        outputs, hidden_state = self.rnn(torch.cat((embs, context), -1), hidden_state)
        outputs = self.dense(outputs).swapaxes(0, 1)  # (batch, steps, vocab)
        return outputs, [enc_output, hidden_state]


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau-style decoder over the time-first encoder outputs; ``attention_weights`` is a
    list with one (batch, 1, src_steps) tensor per decoded step, as in d2l."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (steps, batch, embed)
        outputs, self._attention_weights = [], []
        for x in X:
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights


Seq2SeqAttentionDecoder.__d2l_diff__ = {
    "ko": "d2l처럼 attention_weights가 스텝마다 (배치, 1, 키) 텐서 하나씩 담은 리스트입니다. "
          "책의 것은 (배치, 스텝, 키) 텐서 하나입니다.",
    "en": "attention_weights is d2l's list of one (batch, 1, keys) tensor per step; the book's "
          "is one (batch, steps, keys) tensor.",
}


class Seq2Seq(EncoderDecoder):
    """Encoder-decoder trained with a padding-masked cross-entropy and Adam at ``lr``."""

    def __init__(self, encoder, decoder, tgt_pad, lr):
        super().__init__(encoder, decoder)
        self.save_hyperparameters()

    def validation_step(self, batch):
        Y_hat = self(*batch[:-1])
        self.plot("loss", self.loss(Y_hat, batch[-1]), train=False)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def loss(self, Y_hat, Y):
        per_token = super().loss(Y_hat, Y, averaged=False)
        mask = (Y.reshape(-1) != self.tgt_pad).type(torch.float32)
        return (per_token * mask).sum() / mask.sum()


Seq2Seq.__d2l_diff__ = {
    "ko": "d2l처럼 Seq2Seq(encoder, decoder, tgt_pad, lr)로 만들고 Trainer로 학습합니다. "
          "책의 Seq2Seq는 (encoder, decoder)만 받고 train_seq2seq로 학습합니다.",
    "en": "Built as Seq2Seq(encoder, decoder, tgt_pad, lr) and trained by Trainer, as in d2l; "
          "the book's takes (encoder, decoder) and trains with train_seq2seq.",
}


def bleu(pred_seq: str, label_seq: str, k: int) -> float:
    """BLEU with d2l's n-gram range: n runs up to ``min(k, len(pred))``."""
    pred_tokens, label_tokens = pred_seq.split(" "), label_seq.split(" ")
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        label_grams = collections.Counter(
            " ".join(label_tokens[i:i + n]) for i in range(len_label - n + 1))
        matches = 0
        for i in range(len_pred - n + 1):
            gram = " ".join(pred_tokens[i:i + n])
            if label_grams[gram] > 0:
                matches += 1
                label_grams[gram] -= 1
        score *= math.pow(matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


bleu.__d2l_diff__ = {
    "ko": "d2l처럼 n-그램을 min(k, 예측 길이)까지만 보므로 한 토큰 예측 'a'와 정답 'a b'는 "
          "exp(-1) ≈ 0.368입니다. 책의 bleu는 없는 n-그램을 0점으로 쳐서 0을 줍니다.",
    "en": "Like d2l, n-grams run only up to min(k, prediction length), so the one-token "
          "prediction 'a' against 'a b' scores exp(-1) ≈ 0.368; the book's bleu counts the "
          "missing n-grams as zero and gives 0.",
}


# -- attention --------------------------------------------------------------------------------


def masked_softmax(X, valid_lens=None):
    """Softmax over the last axis of a 3-D ``X`` with positions past ``valid_lens`` (1-D per
    batch or 2-D per query) filled with -1e6 first, as d2l does."""
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    flat = flat.masked_fill(~keep, -1e6)
    return F.softmax(flat.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention on (batch, queries, d) and (batch, keys, d)."""

    def __init__(self, dropout, num_heads=None):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.num_heads = num_heads

    def forward(self, queries, keys, values, valid_lens=None, window_mask=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        if window_mask is not None:  # (num_windows, n, n), as in d2l's Swin-style variant
            num_windows = window_mask.shape[0]
            n, m = scores.shape[1], scores.shape[2]
            scores = scores.reshape(-1, num_windows, self.num_heads, n, m)
            scores = scores + window_mask.unsqueeze(1).unsqueeze(0)
            scores = scores.reshape(-1, n, m)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention with lazily sized projections."""

    def __init__(self, num_hiddens, dropout, **kwargs):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(Module):
    """Multi-head attention; heads are folded into the batch axis, so
    ``self.attention.attention_weights`` is (batch * num_heads, queries, keys) as in d2l."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout, num_heads)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens, window_mask=None):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens, window_mask)
        return self.W_o(self.transpose_output(output))

    def transpose_qkv(self, X):
        """(batch, n, h) -> (batch * num_heads, n, h / num_heads)."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Undo ``transpose_qkv``."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)


MultiHeadAttention.__d2l_diff__ = {
    "ko": "d2l처럼 d2l.Module이고 출력 크기에 맞춰 게으르게(lazy) 만들어지는 선형층을 씁니다. "
          "책의 것은 입력 크기를 알면 바로 만들어지고 입력 모양을 검사합니다.",
    "en": "A d2l.Module with lazily sized linear layers as in d2l; the book's is built eagerly "
          "when the input sizes are known and checks input shapes.",
}


class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding added to (batch, steps, num_hiddens) inputs."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        angles = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(angles)
        self.P[:, :, 1::2] = torch.cos(angles)

    def forward(self, X):
        X = X + self.P[:, :X.shape[1], :].to(X.device)
        return self.dropout(X)


class PositionWiseFFN(nn.Module):
    """Two dense layers (``dense1``, ``dense2``) with a ReLU between, at every position."""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation: ``ln(dropout(Y) + X)``."""

    def __init__(self, norm_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """Post-norm encoder block: self-attention and FFN, each with ``AddNorm``."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoder(Encoder):
    """Embedding (scaled by √h) + positions + ``num_blks`` blocks; ``attention_weights`` is a
    list with one (batch * num_heads, steps, steps) tensor per block, as in d2l."""

    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                 use_bias=False):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"block{i}", TransformerEncoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias))

    def forward(self, X, valid_lens):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X


TransformerEncoder.__d2l_diff__ = {
    "ko": "attention_weights가 d2l처럼 블록마다 (배치×헤드, 쿼리, 키) 텐서 하나씩 담은 "
          "리스트입니다. 책의 것은 (배치, 블록, 헤드, 쿼리, 키) 텐서 하나입니다.",
    "en": "attention_weights is d2l's list of one (batch * heads, queries, keys) tensor per "
          "block; the book's is one (batch, blocks, heads, queries, keys) tensor.",
}


class TransformerDecoderBlock(nn.Module):
    """Decoder block ``i``: masked self-attention over the cached keys, encoder-decoder
    attention, FFN; ``state[2][i]`` caches this block's inputs so far."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else torch.cat((cached, X), dim=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            dec_valid_lens = torch.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(AttentionDecoder):
    """Transformer decoder; ``attention_weights`` is d2l's pair of lists
    ``[self-attention per block, encoder-decoder attention per block]``."""

    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout):
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_blks = num_blks
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"block{i}", TransformerDecoderBlock(
                num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.LazyLinear(vocab_size)
        self._attention_weights = [[None] * num_blks, [None] * num_blks]

    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights


TransformerDecoder.__d2l_diff__ = {
    "ko": "attention_weights가 d2l처럼 [블록별 자기 어텐션, 블록별 인코더-디코더 어텐션] 두 "
          "리스트입니다. 책의 것은 (배치, 블록, 헤드, 쿼리, 키) 텐서 두 개입니다.",
    "en": "attention_weights is d2l's pair of lists [self-attention per block, encoder-decoder "
          "attention per block]; the book's is a pair of (batch, blocks, heads, queries, keys) "
          "tensors.",
}


# -- vision transformer -----------------------------------------------------------------------


def _pair(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x, x)


class PatchEmbedding(nn.Module):
    """Cut images into patches and project each: (batch, c, h, w) -> (batch, patches, h')."""

    def __init__(self, img_size=96, patch_size=16, num_hiddens=512):
        super().__init__()
        img_size, patch_size = _pair(img_size), _pair(patch_size)
        self.num_patches = (img_size[0] // patch_size[0]) * (img_size[1] // patch_size[1])
        self.conv = nn.LazyConv2d(num_hiddens, kernel_size=patch_size, stride=patch_size)

    def forward(self, X):
        return self.conv(X).flatten(2).transpose(1, 2)


class ViTMLP(nn.Module):
    """The ViT block's MLP: ``dense1`` -> GELU -> dropout -> ``dense2`` -> dropout."""

    def __init__(self, mlp_num_hiddens, mlp_num_outputs, dropout=0.5):
        super().__init__()
        self.dense1 = nn.LazyLinear(mlp_num_hiddens)
        self.gelu = nn.GELU()
        self.dropout1 = nn.Dropout(dropout)
        self.dense2 = nn.LazyLinear(mlp_num_outputs)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout2(self.dense2(self.dropout1(self.gelu(self.dense1(x)))))


ViTMLP.__d2l_diff__ = {
    "ko": "d2l처럼 층 이름이 dense1/dense2이고 크기가 게으르게 정해집니다. 책의 ViTMLP는 "
          "입력 크기를 받아 바로 만들어집니다.",
    "en": "Layers are named dense1/dense2 and lazily sized as in d2l; the book's ViTMLP is "
          "built eagerly from the input size.",
}


class ViTBlock(nn.Module):
    """Pre-norm transformer block of ViT."""

    def __init__(self, num_hiddens, norm_shape, mlp_num_hiddens, num_heads, dropout,
                 use_bias=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(norm_shape)
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.ln2 = nn.LayerNorm(norm_shape)
        self.mlp = ViTMLP(mlp_num_hiddens, num_hiddens, dropout)

    def forward(self, X, valid_lens=None):
        Y = self.ln1(X)
        X = X + self.attention(Y, Y, Y, valid_lens)
        return X + self.mlp(self.ln2(X))


class ViT(Classifier):
    """Vision Transformer: patches + [cls] token + learned positions + blocks -> logits."""

    def __init__(self, img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads, num_blks,
                 emb_dropout, blk_dropout, lr=0.1, use_bias=False, num_classes=10):
        super().__init__()
        self.save_hyperparameters()
        self.patch_embedding = PatchEmbedding(img_size, patch_size, num_hiddens)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, num_hiddens))
        num_steps = self.patch_embedding.num_patches + 1
        self.pos_embedding = nn.Parameter(torch.randn(1, num_steps, num_hiddens))
        self.dropout = nn.Dropout(emb_dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"{i}", ViTBlock(num_hiddens, num_hiddens, mlp_num_hiddens,
                                                  num_heads, blk_dropout, use_bias))
        self.head = nn.Sequential(nn.LayerNorm(num_hiddens), nn.Linear(num_hiddens, num_classes))

    def forward(self, X):
        X = self.patch_embedding(X)
        X = torch.cat((self.cls_token.expand(X.shape[0], -1, -1), X), 1)
        X = self.dropout(X + self.pos_embedding)
        for blk in self.blks:
            X = blk(X)
        return self.head(X[:, 0])


ViT.__d2l_diff__ = {
    "ko": "d2l처럼 Classifier여서 Trainer로 학습합니다. 책의 ViT는 nn.Module이고 "
          "in_channels로 크기를 바로 정할 수 있습니다.",
    "en": "A Classifier trained by Trainer as in d2l; the book's ViT is an nn.Module that can "
          "be sized eagerly with in_channels.",
}


# -- data: downloaded on demand, verified ----------------------------------------------------

#: Where d2l's data sets live.
DATA_URL = "http://d2l-data.s3-accelerate.amazonaws.com/"

#: file name -> (url, algorithm, digest). fra-eng.zip is pinned by the SHA-1 that d2l
#: publishes for it (no SHA-256 of the archive is published); the Fashion-MNIST files by the
#: SHA-256 digests of Zalando Research's release (``d2lite.vision.FASHION_MNIST_FILES``).
DATA_HUB: dict[str, tuple[str, str, str]] = {
    "fra-eng.zip": (DATA_URL + "fra-eng.zip", "sha1", "94646ad1522d915e7b0f9296181140edcf86a4f5"),
}


def _digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _progress(done: int, total: int | None, name: str, stream=None) -> None:
    stream = stream or sys.stderr
    if total:
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        stream.write(f"\r{name} [{bar}] {done / 2**20:.1f}/{total / 2**20:.1f} MiB")
    else:
        stream.write(f"\r{name} {done / 2**20:.1f} MiB")
    stream.flush()


def download(url: str, folder: str | os.PathLike = "../data", digest: str | None = None,
             algorithm: str = "sha256", timeout: float = 60.0) -> str:
    """Download ``url`` into ``folder`` (once) with a progress bar; return the file's path.

    A cached file is reused when its digest matches. Without a network connection this
    raises ``OSError`` naming the URL and the place to put the file by hand; a file whose
    digest differs raises ``ValueError`` and is not kept.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / url.rstrip("/").split("/")[-1]
    if path.exists() and (digest is None or _digest(path, algorithm) == digest):
        return str(path)
    tmp = path.with_name(path.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
            total = response.headers.get("Content-Length")
            total = int(total) if total else None
            done = 0
            for block in iter(lambda: response.read(1 << 16), b""):
                out.write(block)
                done += len(block)
                _progress(done, total, path.name)
        sys.stderr.write("\n")
    except (urllib.error.URLError, OSError) as err:
        tmp.unlink(missing_ok=True)
        raise OSError(
            f"could not download {url} ({err}). Are you offline? Download it elsewhere and "
            f"put it at {path.resolve()}"
        ) from err
    if digest is not None:
        got = _digest(tmp, algorithm)
        if got != digest:
            tmp.unlink()
            raise ValueError(f"{algorithm} of {url} is {got}, expected {digest}")
    os.replace(tmp, path)
    return str(path)


def extract(filename: str | os.PathLike, folder: str | os.PathLike | None = None) -> str:
    """Unpack a zip archive next to it (or into ``folder``); return the folder."""
    filename = Path(filename)
    if filename.suffix != ".zip":
        raise ValueError(f"only zip archives can be extracted, got {filename}")
    folder = Path(folder) if folder is not None else filename.parent
    with zipfile.ZipFile(filename) as archive:
        archive.extractall(folder)
    return str(folder)


class MTFraEng(DataModule):
    """The English-French pairs d2l trains on, downloaded on demand (``fra-eng.zip``).

    ``arrays`` = (src, tgt_input, src_valid_len, tgt_label); vocabularies keep tokens seen at
    least twice; every sentence is padded or cut to ``num_steps``.
    """

    def __init__(self, batch_size, num_steps=9, num_train=512, num_val=128, root="../data"):
        super().__init__(root=root)
        self.save_hyperparameters()
        self.arrays, self.src_vocab, self.tgt_vocab = self._build_arrays(self._download())

    def _download(self) -> str:
        url, algorithm, digest = DATA_HUB["fra-eng.zip"]
        folder = extract(download(url, self.root, digest, algorithm))
        with open(Path(folder) / "fra-eng" / "fra.txt", encoding="utf-8") as f:
            return f.read()

    def _preprocess(self, text: str) -> str:
        text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
        out = []
        for i, char in enumerate(text):
            if i > 0 and char in ",.!?" and text[i - 1] != " ":
                out.append(" ")
            out.append(char)
        return "".join(out)

    def _tokenize(self, text: str, max_examples=None):
        src, tgt = [], []
        for i, line in enumerate(text.split("\n")):
            if max_examples and i > max_examples:
                break
            parts = line.split("\t")
            if len(parts) == 2:
                src.append([t for t in f"{parts[0]} <eos>".split(" ") if t])
                tgt.append([t for t in f"{parts[1]} <eos>".split(" ") if t])
        return src, tgt

    def _build_arrays(self, raw_text, src_vocab=None, tgt_vocab=None):
        def build(sentences, vocab, is_tgt=False):
            t = self.num_steps
            sentences = [s[:t] if len(s) > t else s + ["<pad>"] * (t - len(s)) for s in sentences]
            if is_tgt:
                sentences = [["<bos>", *s] for s in sentences]
            if vocab is None:
                vocab = Vocab(sentences, min_freq=2)
            array = torch.tensor([vocab[s] for s in sentences])
            valid_len = (array != vocab["<pad>"]).type(torch.int32).sum(1)
            return array, vocab, valid_len

        src, tgt = self._tokenize(self._preprocess(raw_text), self.num_train + self.num_val)
        src_array, src_vocab, src_valid_len = build(src, src_vocab)
        tgt_array, tgt_vocab, _ = build(tgt, tgt_vocab, True)
        return ((src_array, tgt_array[:, :-1], src_valid_len, tgt_array[:, 1:]),
                src_vocab, tgt_vocab)

    def get_dataloader(self, train):
        idx = slice(0, self.num_train) if train else slice(self.num_train, None)
        return self.get_tensorloader(self.arrays, train, idx)

    def build(self, src_sentences, tgt_sentences):
        raw_text = "\n".join(f"{s}\t{t}" for s, t in zip(src_sentences, tgt_sentences))
        arrays, _, _ = self._build_arrays(raw_text, self.src_vocab, self.tgt_vocab)
        return arrays


class FashionMNIST(DataModule):
    """Fashion-MNIST as d2l 1.0's data module: images (batch, 1, h, w) in [0, 1], resized to
    ``resize``; the four archives are downloaded on demand and checked by SHA-256."""

    MIRROR = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"

    def __init__(self, batch_size=64, resize=(28, 28), root="../data"):
        super().__init__(root=root)
        self.save_hyperparameters()
        vision = importlib.import_module("d2lite.vision")

        folder = Path(root) / "FashionMNIST"
        paths = {name: download(self.MIRROR + name, folder, digest, "sha256")
                 for name, digest in vision.FASHION_MNIST_FILES.items()}

        def split(prefix):  # kept as uint8; converted and resized batch by batch
            images = vision.read_idx(paths[f"{prefix}-images-idx3-ubyte.gz"])
            labels = vision.read_idx(paths[f"{prefix}-labels-idx1-ubyte.gz"])
            return torch.from_numpy(images.copy()), torch.from_numpy(labels.copy()).long()

        self.train = split("train")
        self.val = split("t10k")

    def _collate(self, batch):
        X = torch.stack([x for x, _ in batch]).unsqueeze(1).float() / 255
        if tuple(X.shape[-2:]) != _pair(self.resize):
            X = F.interpolate(X, size=_pair(self.resize), mode="bilinear", align_corners=False)
        return X, torch.stack([y for _, y in batch])

    def text_labels(self, indices):
        vision = importlib.import_module("d2lite.vision")

        return [vision.FASHION_MNIST_LABELS[int(i)] for i in indices]

    def get_dataloader(self, train):
        data = torch.utils.data.TensorDataset(*(self.train if train else self.val))
        return torch.utils.data.DataLoader(data, self.batch_size, shuffle=train,
                                           collate_fn=self._collate)

    def visualize(self, batch, nrows=1, ncols=8, labels=()):
        X, y = batch
        if not labels:
            labels = self.text_labels(y)
        fig, axes = plt.subplots(nrows, ncols, figsize=(1.2 * ncols, 1.4 * nrows), squeeze=False)
        for ax, img, label in zip(axes.flat, X.squeeze(1), labels):
            ax.imshow(img.numpy(), cmap="gray")
            ax.set_title(label)
            ax.axis("off")


FashionMNIST.__d2l_diff__ = {
    "ko": "torchvision 없이 네 압축 파일을 SHA-256으로 확인하며 내려받고, 크기 조정은 "
          "배치마다 쌍선형 보간으로 합니다.",
    "en": "Needs no torchvision: the four archives are downloaded and checked by SHA-256, and "
          "each batch is resized by bilinear interpolation.",
}
MTFraEng.__d2l_diff__ = {
    "ko": "d2l이 공개한 SHA-1로 압축 파일을 확인하고, 오프라인이면 파일을 둘 경로를 알려 주는 "
          "OSError를 냅니다.",
    "en": "Checks the archive against d2l's published SHA-1 and, offline, raises an OSError "
          "that says where to put the file.",
}


# -- how the book's own names differ from d2l, in Korean ------------------------------------
#: For each name that ``import d2lite as d2l`` shares with d2l and whose docstring says (in
#: English) how it differs, the same point in Korean. The appendix page ``d2l_compat`` shows
#: the Korean note in Korean mode and the docstring's sentences in English mode, and asserts
#: that no such name lacks its Korean note.
BOOK_DIFFS_KO: dict[str, str] = {
    "AttentionDecoder": "마지막 순전파의 어텐션 가중치를 보관합니다. predict_seq2seq는 "
                        "source_attention_weights(배치, 스텝, 원문 위치, 행의 합 1)를 "
                        "읽고, d2l처럼 스텝마다 (배치, 1, 원문 위치) 텐서를 담은 "
                        "리스트도 받습니다.",
    "AddNorm": "d2l과 달리 X와 Y의 모양이 다르면 브로드캐스팅하지 않고 ValueError를 냅니다.",
    "AdditiveAttention": "query_size와 key_size를 주면 보통의 Linear로 만들고, 빼면 d2l처럼 "
                         "첫 호출 때 입력 크기를 정합니다(nn.LazyLinear).",
    "LSTMScratch": "d2l과 달리 출력을 리스트가 아닌 텐서 하나로 쌓아 돌려주고, forget_bias와 "
                   "copy_from을 더했습니다.",
    "MaskedSoftmaxCELoss": "d2l 0.17판의 시퀀스별 손실입니다: (배치, 스텝, 어휘), (배치, 스텝), "
                           "(배치,) → (배치,).",
    "MultiHeadAttention": "d2l은 늘 nn.LazyLinear를 쓰지만, 여기서는 query_size, key_size, "
                          "value_size를 주면 입력 크기를 확인하는 보통의 nn.Linear를 씁니다.",
    "PatchEmbedding": "in_channels=None이면 d2l처럼 첫 호출 때 채널 수를 정합니다. d2l과 달리 "
                      "패치 크기로 나누어떨어지지 않는 이미지 크기는 ValueError입니다.",
    "PositionWiseFFN": "d2l은 입력 크기를 늘 추론하지만(nn.LazyLinear), 여기서는 num_inputs로 "
                       "보통의 nn.Linear를 만들 수 있고 정수 입력은 ValueError입니다.",
    "PositionalEncoding": "d2l과 달리 P는 버퍼여서 .to(device)와 함께 옮겨지고, float64로 계산한 "
                          "뒤 반올림하며, 홀수 num_hiddens는 거절합니다.",
    "RNNScratch": "d2l은 파이썬 리스트를 돌려주지만, 여기서는 출력을 텐서 하나로 쌓습니다.",
    "Seq2Seq": "d2l의 Seq2Seq와 달리 손실, 옵티마이저, 패딩 번호를 갖지 않습니다. 패딩을 가리는 "
               "train_seq2seq로 훈련합니다.",
    "Seq2SeqAttentionDecoder": "attention_weights는 마지막 순전파의 가중치 (배치, 스텝, 원문 "
                               "스텝)으로, d2l의 리스트와 달리 텐서 하나입니다.",
    "Seq2SeqDecoder": "d2l과 달리 배치 축이 먼저이고, 문맥은 인코더 맨 위 층의 마지막 상태입니다.",
    "Seq2SeqEncoder": "d2l과 달리 배치 축이 먼저이고, 패딩은 GRU에 들어가지 않습니다.",
    "TransformerDecoder": "d2l은 한 토큰씩 디코딩할 때마다 위치 0의 인코딩을 더하지만, 여기서는 "
                          "캐시된 토큰 수만큼 위치를 옮깁니다. attention_weights는 텐서 "
                          "두 개입니다.",
    "TransformerDecoderBlock": "d2l은 훈련 모드에서만 인과 마스크를 쓰지만, 여기서는 평가 "
                               "모드에서도 "
                               "마스크가 유지되어 목표 문장 전체를 한 번에 다시 돌릴 수 있습니다.",
    "TransformerEncoder": "d2l의 attention_weights는 블록마다 (배치×헤드, 쿼리, 키) 텐서를 담은 "
                          "리스트이지만, 여기서는 (배치, 블록, 헤드, 쿼리, 키) 텐서 하나입니다.",
    "TransformerEncoderBlock": "d2l과 달리 블록이 attention_weights를 (배치, 헤드, 쿼리, 키)로 "
                               "보여 주고, [1, 스텝] 밖의 유효 길이는 ValueError입니다.",
    "ViT": "d2l의 ViT(d2l.Classifier)와 달리 평범한 nn.Module이고 d2l.train_classifier로 "
           "훈련합니다. lr은 저장만 하고, in_channels로 크기를 바로 정할 수 있습니다.",
    "ViTBlock": "d2l과 달리 마지막 호출의 어텐션 가중치를 (배치, 헤드, 스텝, 스텝) 모양으로 "
                "attention_weights에 남깁니다.",
    "ViTMLP": "num_inputs=None이면 d2l처럼 첫 호출 때 입력 폭을 정하고, d2l과 달리 num_inputs로 "
              "고정할 수도 있습니다.",
    "Vocab": "d2l과 달리 특수 토큰 네 개가 늘 앞에 오고(<pad>가 0), to_tokens는 범위 밖 번호를 "
             "거절합니다.",
    "bleu": "공식은 d2l과 같지만 토큰 리스트도 받고, n 단어보다 짧은 예측은 0으로 나누는 대신 "
            "0점입니다(d2l은 한 토큰 예측 'a'와 정답 'a b'에 0.368을 줍니다).",
    "grad_clipping": "d2l과 달리 클리핑 전의 노름을 돌려주고, 양수가 아닌 theta는 "
                     "ValueError입니다.",
    "plot": "d2l처럼 아무것도 돌려주지 않아 셀 끝에 써도 <Axes>가 찍히지 않습니다. 축을 더 "
            "꾸미려면 먼저 fig, ax = plt.subplots()로 만들고 axes=ax로 넘깁니다.",
    "predict_seq2seq": "d2l과 달리 결과 문장을 다시 이어 붙이고(한국어 조사 포함) 가중치를 텐서 "
                       "하나로 돌려줍니다.",
    "show_heatmaps": "figsize는 d2l처럼 그림 전체 크기입니다. 기본값 shared_scale=True는 모든 "
                     "패널에 색 범위 하나와 색 막대 하나를 쓰고, False이면 d2l처럼 패널마다 "
                     "범위와 색 막대가 따로입니다. 아무것도 돌려주지 않습니다.",
    "truncate_pad": "d2l과 같고, num_steps가 양수가 아니면 ValueError를 냅니다.",
}

"""d2l 1.0's training framework: ``HyperParameters``, ``ProgressBoard``, ``Module``,
``DataModule``, ``Trainer``, ``Classifier``, ``add_to_class``, and the time-first ``RNN`` /
``GRU`` and d2l 1.0's ``Vocab`` that its models and data modules build on."""

from __future__ import annotations

import collections
import importlib
import inspect

import numpy as np
import torch
from matplotlib import pyplot as plt
from torch import nn
from torch.nn import functional as F

from .aliases import gpu

# The package's namespace holds the *function* plot, so fetch the modules by name.
_plot = importlib.import_module("d2lite.plotting")
_utils = importlib.import_module("d2lite.utils")


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
        first = next(self.net.parameters(), None)  # the input goes where the layers are
        X = torch.randn(*X_shape, device=first.device if first is not None else None)
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

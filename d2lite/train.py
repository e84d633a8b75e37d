"""One training loop for every chapter that trains a model (translation, image classification).

:func:`fit` owns the loop: device placement, the optimiser, gradient clipping, a progress bar,
an optional time budget, per-epoch evaluation, a returned history and the loss figure.
What one batch means is a function ``batch_loss(net, batch) -> (mean_loss, weight)``;
:func:`train_seq2seq` and :func:`train_classifier` are thin wrappers that supply it.

In a notebook that a person runs, a progress bar shows and the figure is redrawn while training
(at most every few seconds); when the run ends, or when the notebook is executed without a
person (the book build, nbval, ``CI`` set), one static figure in both languages is left, drawn
by ``d2l.bilingual``, and no progress bar is printed.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterable

import torch
from matplotlib import pyplot as plt
from torch import nn
from torch.nn import functional as F

from . import checks
from .plotting import bilingual
from .plotting import plot as _curves
from .seq2seq import _real_tokens, masked_cross_entropy
from .text import Vocab
from .utils import is_watched, progress, synchronize, try_gpu

__all__ = [
    "accuracy",
    "fit",
    "plot_history",
    "seq2seq_batch_loss",
    "train_classifier",
    "train_seq2seq",
]

BatchLoss = Callable[[nn.Module, tuple], tuple[torch.Tensor, float]]

# Labels of the curves that the chapters draw, in both languages.
_LABELS = {
    "loss": ("훈련 손실", "train loss"),
    "train_acc": ("훈련 정확도", "train accuracy"),
    "valid_acc": ("검증 정확도", "validation accuracy"),
    "test_acc": ("테스트 정확도", "test accuracy"),
    "valid_bleu": ("검증 BLEU", "validation BLEU"),
    "test_bleu": ("테스트 BLEU", "test BLEU"),
    "valid_loss": ("검증 손실", "validation loss"),
}


def _label(key: str, t: Callable[[str, str], str]) -> str:
    ko, en = _LABELS.get(key, (key, key))
    return t(ko, en)


def plot_history(
    history: dict,
    title: tuple[str, str] | None = None,
    caption: tuple[str, str] | None = None,
) -> None:
    """Draw a history's curves against the epoch, once per language (``d2l.bilingual``)."""
    keys = [k for k in history if k not in ("epoch", "seconds") and history[k]]
    if not keys or not history.get("epoch"):
        raise ValueError(f"history has no curves to draw: keys {sorted(history)}")

    # Losses and scores (accuracy, BLEU) have different units: losses on the left axis, scores
    # on a second axis on the right, each axis labelled, one legend for all curves.
    losses = [k for k in keys if "loss" in k]
    scores = [k for k in keys if k not in losses]

    @bilingual(caption=caption)
    def _(t):
        _, ax = plt.subplots(figsize=(4.4, 2.6))
        handles = []
        for group, axes in ((losses, ax), (scores, None)):
            if not group:
                continue
            if axes is None:
                axes = ax.twinx() if losses else ax
            for key in group:
                epochs = history["epoch"][-len(history[key]) :]
                fmt = _FMTS[keys.index(key) % len(_FMTS)]
                _curves(epochs, history[key], axes=axes, xlabel=t("에포크", "epoch"),
                        fmts=(fmt,))
                handles.append(axes.get_lines()[-1])
            axes.set_ylabel(", ".join(_label(k, t) for k in group))
            if axes is not ax:
                axes.grid(False)  # one grid, the loss axis's
        ax.legend(handles, [_label(k, t) for k in losses + scores])
        if title:
            ax.set_title(t(*title))


_FMTS = ("-", "m--", "g-.", "r:", "c-")


class _LivePlot:
    """Redraws the curves in a notebook that a person is watching, at most every few seconds."""

    def __init__(self, enabled: bool, interval: float = 3.0) -> None:
        self.handle = None
        self.interval = interval
        self.last = time.perf_counter()
        if not enabled:
            return
        from IPython.display import HTML, display

        self.handle = display(HTML(""), display_id=True)

    def update(self, history: dict) -> None:
        if self.handle is None or time.perf_counter() - self.last < self.interval:
            return
        from IPython.display import Image

        fig, ax = plt.subplots(figsize=(4, 2.6))
        for key in (k for k in history if k not in ("epoch", "seconds") and history[k]):
            ax.plot(history["epoch"][-len(history[key]) :], history[key], label=key)
        ax.set_xlabel("epoch")
        ax.legend()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=72, bbox_inches="tight")
        plt.close(fig)
        self.handle.update(Image(buf.getvalue()))
        self.last = time.perf_counter()

    def close(self) -> None:
        if self.handle is not None:
            from IPython.display import HTML

            self.handle.update(HTML(""))  # the static bilingual figure replaces it


def fit(
    net: nn.Module,
    train_iter: Iterable,
    num_epochs: int,
    lr: float,
    batch_loss: BatchLoss,
    device: torch.device | None = None,
    optimizer: str | torch.optim.Optimizer = "adam",
    weight_decay: float = 0.0,
    clip_grad: float | None = 1.0,
    max_seconds: float | None = None,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
    plot: bool = True,
    caption: tuple[str, str] | None = None,
    desc: str | None = None,
) -> dict[str, list[float]]:
    """Train ``net`` for ``num_epochs`` (or until ``max_seconds`` of wall time) and return
    the history ``{"epoch", "loss", "seconds", *evaluate keys}``, one entry per epoch (the
    seconds since the start, read after waiting for ``device``).

    ``batch_loss(net, batch)`` gets the batch already on ``device`` and returns the mean loss
    and its weight (e.g. the number of tokens). Gradients are clipped to norm ``clip_grad``
    (``None``: no clipping). ``evaluate(net)`` runs after every epoch in eval mode. With
    ``plot`` the curves are drawn at the end (``caption``: a (Korean, English) pair).
    """
    if not isinstance(net, nn.Module):
        raise ValueError(f"net must be an nn.Module, got {type(net).__name__} {net!r:.60}")
    if not callable(batch_loss):
        raise ValueError(f"batch_loss must be a function (net, batch) -> (loss, weight), "
                         f"got {type(batch_loss).__name__}")
    num_epochs = checks.check_scalar(num_epochs, "num_epochs", int, low=1)
    lr = checks.check_scalar(lr, "lr", float, low=0, low_open=True)
    weight_decay = checks.check_scalar(weight_decay, "weight_decay", float, low=0)
    if clip_grad is not None:  # 0 would zero every gradient, a negative norm ascend the loss
        clip_grad = checks.check_scalar(clip_grad, "clip_grad", float, low=0, low_open=True)
    if max_seconds is not None:
        max_seconds = checks.check_scalar(max_seconds, "max_seconds", float, low=0, low_open=True)
    device = device if device is not None else try_gpu()
    net.to(device)
    if isinstance(optimizer, str):
        params = [p for p in net.parameters() if p.requires_grad]
        choices = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
        if optimizer not in choices:
            raise ValueError(f"optimizer must be one of {sorted(choices)}, got {optimizer!r}")
        optimizer = choices[optimizer](params, lr=lr, weight_decay=weight_decay)
    history: dict[str, list[float]] = {"epoch": [], "loss": [], "seconds": []}
    live = _LivePlot(plot and is_watched())
    epochs = range(1, num_epochs + 1)
    synchronize(device)
    start = time.perf_counter()
    for epoch in progress(epochs, total=num_epochs, desc=desc):  # silent unless watched
        net.train()
        total, weight = 0.0, 0.0
        for batch in train_iter:
            batch = tuple(x.to(device) if isinstance(x, torch.Tensor) else x for x in batch)
            optimizer.zero_grad(set_to_none=True)
            loss, n = batch_loss(net, batch)
            loss.backward()
            if clip_grad is not None:
                nn.utils.clip_grad_norm_(net.parameters(), clip_grad)
            optimizer.step()
            n = float(n)
            total += float(loss.detach()) * n
            weight += n
        if weight == 0:
            raise ValueError("train_iter yielded no batches")
        history["epoch"].append(epoch)
        history["loss"].append(total / weight)
        if evaluate is not None:
            net.eval()
            with torch.no_grad():
                for key, value in evaluate(net).items():
                    history.setdefault(key, []).append(float(value))
        synchronize(device)  # a GPU's queued work belongs to this epoch's time
        history["seconds"].append(time.perf_counter() - start)
        live.update(history)
        if max_seconds is not None and history["seconds"][-1] >= max_seconds:
            break
    live.close()
    net.eval()
    if plot:
        plot_history(history, caption=caption)
    return history


def seq2seq_batch_loss(tgt_vocab: Vocab) -> BatchLoss:
    """Teacher forcing: the decoder reads ``<bos>`` + the target shifted right, and the masked
    cross-entropy scores its prediction of every real target token (weight: their count)."""

    def batch_loss(net: nn.Module, batch: tuple) -> tuple[torch.Tensor, float]:
        X, X_valid_len, Y, Y_valid_len = batch
        bos = torch.full((Y.shape[0], 1), tgt_vocab.bos, dtype=Y.dtype, device=Y.device)
        dec_input = torch.cat([bos, Y[:, :-1]], dim=1)  # (batch, num_steps)
        Y_hat = net(X, dec_input, X_valid_len)
        # the weight is the count of tokens the loss averages over (a -100 label is not one)
        weight = _real_tokens(Y, checks.check_valid_lens(Y_valid_len, *Y.shape, values=False)).sum()
        return masked_cross_entropy(Y_hat, Y, Y_valid_len), float(weight)

    return batch_loss


def train_seq2seq(
    net: nn.Module,
    data_iter: Iterable,
    lr: float,
    num_epochs: int,
    tgt_vocab: Vocab,
    device: torch.device | None = None,
    clip_grad: float | None = 1.0,
    max_seconds: float | None = None,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
    plot: bool = True,
    caption: tuple[str, str] | None = None,
) -> dict[str, list[float]]:
    """Train an encoder–decoder on batches ``(X, X_valid_len, Y, Y_valid_len)`` with teacher
    forcing; the history's ``loss`` is the mean cross-entropy per target token."""
    return fit(
        net, data_iter, num_epochs, lr, seq2seq_batch_loss(tgt_vocab), device=device,
        clip_grad=clip_grad, max_seconds=max_seconds, evaluate=evaluate, plot=plot,
        caption=caption,
    )  # fmt: skip


def accuracy(net: nn.Module, data_iter: Iterable, device: torch.device | None = None) -> float:
    """Fraction of examples ``(X, y)`` whose arg-max logit equals the label."""
    if device is None:
        first = next(net.parameters(), None)
        device = first.device if first is not None else try_gpu()
    was_training = net.training
    net.eval()
    correct = total = 0
    with torch.no_grad():
        for X, y in data_iter:
            logits = net(X.to(device))
            if logits.dim() != 2 or logits.shape[0] != y.shape[0]:
                raise ValueError(
                    f"expected logits of shape ({y.shape[0]}, classes), got {tuple(logits.shape)}"
                )
            correct += int((logits.argmax(dim=1) == y.to(logits.device)).sum())
            total += y.shape[0]
    net.train(was_training)
    if total == 0:
        raise ValueError("data_iter yielded no examples")
    return correct / total


def _classifier_loss(net: nn.Module, batch: tuple) -> tuple[torch.Tensor, float]:
    X, y = batch
    return F.cross_entropy(net(X), y), float(y.shape[0])


def train_classifier(
    net: nn.Module,
    train_iter: Iterable,
    test_iter: Iterable | None,
    num_epochs: int,
    lr: float,
    device: torch.device | None = None,
    optimizer: str | torch.optim.Optimizer = "adam",
    weight_decay: float = 0.0,
    clip_grad: float | None = None,
    max_seconds: float | None = None,
    plot: bool = True,
    caption: tuple[str, str] | None = None,
) -> dict[str, list[float]]:
    """Train a classifier on ``(X, y)`` batches with cross-entropy; the history has ``loss``
    and, with ``test_iter``, ``test_acc`` after every epoch."""
    device = device if device is not None else try_gpu()

    def evaluate(model: nn.Module) -> dict[str, float]:
        return {"test_acc": accuracy(model, test_iter, device)}

    return fit(
        net, train_iter, num_epochs, lr, _classifier_loss, device=device, optimizer=optimizer,
        weight_decay=weight_decay, clip_grad=clip_grad, max_seconds=max_seconds,
        evaluate=evaluate if test_iter is not None else None, plot=plot, caption=caption,
    )  # fmt: skip

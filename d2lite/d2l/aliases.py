"""d2l's framework-neutral tensor aliases (``tensor``, ``reduce_sum``, ...), its plot
helpers and its device helpers, on top of ``d2lite.plotting`` and ``d2lite.utils``."""

from __future__ import annotations

import importlib

import torch
from matplotlib import pyplot as plt

# The package's namespace holds the *function* plot, so fetch the modules by name.
_plot = importlib.import_module("d2lite.plotting")
_utils = importlib.import_module("d2lite.utils")

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


def check_shape(a, shape) -> None:
    """Check that ``a.shape`` equals ``shape`` (raises ``AssertionError`` like d2l)."""
    got, want = tuple(a.shape), tuple(shape)
    assert got == want, f"tensor's shape {got} != expected {want}"


def check_len(a, n) -> None:
    """Check that ``len(a) == n`` (raises ``AssertionError`` like d2l)."""
    assert len(a) == n, f"list's length {len(a)} != expected length {n}"


def _pair(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x, x)

"""Small helpers that every chapter uses: devices, seeds, shape checks, timing, counting."""

from __future__ import annotations

import importlib.util
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from numbers import Integral

import numpy as np
import torch

from . import checks

__all__ = [
    "Timer",
    "check_shape",
    "count_flops",
    "cpu",
    "generator",
    "gpu",
    "is_watched",
    "num_gpus",
    "progress",
    "seed_offset",
    "set_seed",
    "synchronize",
    "try_all_gpus",
    "try_gpu",
    "unattended",
]

_DEVICE_ENV = "D2LITE_DEVICE"
_CUBLAS_ENV = "CUBLAS_WORKSPACE_CONFIG"


def _ask_cublas_for_a_deterministic_workspace() -> None:
    """Deterministic cuBLAS (:func:`set_seed`) needs ``CUBLAS_WORKSPACE_CONFIG`` before cuBLAS
    starts, which is at the process's first CUDA matrix product: ``import d2lite`` sets it
    (``:4096:8``) unless the reader has set it."""
    os.environ.setdefault(_CUBLAS_ENV, ":4096:8")


_ask_cublas_for_a_deterministic_workspace()
_SEED_OFFSET_ENV = "D2LITE_SEED_OFFSET"


def cpu() -> torch.device:
    """The CPU device."""
    return torch.device("cpu")


def gpu(i: int = 0) -> torch.device:
    """The i-th CUDA device (it need not exist)."""
    i = checks.check_scalar(i, "i", int, low=0)
    return torch.device(f"cuda:{i}")


def num_gpus() -> int:
    """How many CUDA devices PyTorch can see."""
    return torch.cuda.device_count()


def unattended() -> bool:
    """Whether the code runs under a test, a build or CI rather than for a person.

    True under pytest (``PYTEST_CURRENT_TEST``), with ``CI`` set, and in a notebook kernel that
    an executor drives (nbval, nbclient, Jupyter Book: they send cells with ``allow_stdin=False``,
    see :func:`is_watched`). A plain Python program or an interactive notebook (Colab, Jupyter)
    is not unattended.
    """
    if os.environ.get("CI") or os.environ.get("PYTEST_CURRENT_TEST"):
        return True
    kernel = _ipython_kernel()
    return kernel is not None and not bool(getattr(kernel, "_allow_stdin", False))


def try_gpu(i: int = 0) -> torch.device:
    """The i-th GPU if there is one, else the CPU.

    The environment variable ``D2LITE_DEVICE`` decides first: ``cpu`` forces the CPU (so runs
    are deterministic), ``cuda`` demands a GPU and fails loudly when there is none, ``auto``
    takes a GPU whenever there is one. Unset, a person's run (Colab, Jupyter, a Python program)
    gets the GPU when there is one, as in d2l, while the book's tests and website build
    (:func:`unattended`) compute on the CPU even on a machine with a GPU, so that the published
    outputs are the CPU's; set ``D2LITE_DEVICE=cuda`` to run those on the GPU.
    """
    i = checks.check_scalar(i, "i", int, low=0)
    wanted = os.environ.get(_DEVICE_ENV, "").strip().lower()
    if wanted not in ("", "auto", "cpu", "cuda"):
        raise ValueError(f"{_DEVICE_ENV} must be one of 'cpu', 'cuda' or 'auto', got {wanted!r}")
    if wanted == "cpu" or (wanted == "" and unattended()):
        return cpu()
    if num_gpus() > i:
        return gpu(i)
    if wanted == "cuda":
        raise RuntimeError(
            f"{_DEVICE_ENV}=cuda but PyTorch sees {num_gpus()} GPU(s); cannot use cuda:{i}"
        )
    return cpu()


def try_all_gpus() -> list[torch.device]:
    """All GPUs, or ``[cpu]`` when there are none (respects ``D2LITE_DEVICE``)."""
    first = try_gpu(0)
    if first.type == "cpu":
        return [first]
    return [gpu(i) for i in range(num_gpus())]


def seed_offset() -> int:
    """The offset that every seed of the book is shifted by: ``$D2LITE_SEED_OFFSET``, else 0.

    A chapter's claims must hold for any seed, not only for the one it was written with. Setting
    ``D2LITE_SEED_OFFSET=3`` runs the whole book with other random numbers (other initial
    weights, data, shuffles), without editing a chapter: :func:`set_seed`, :func:`generator` and
    every seeded data function of ``d2lite`` add this offset to the seed they are given.
    """
    raw = os.environ.get(_SEED_OFFSET_ENV, "").strip()
    if not raw:
        return 0
    try:
        offset = int(raw)
    except ValueError:
        offset = -1
    if offset < 0:
        raise ValueError(f"{_SEED_OFFSET_ENV} must be a non-negative integer, got {raw!r}")
    return offset


def _seed(seed: int) -> int:
    """``seed`` checked, plus the run's :func:`seed_offset`."""
    if not isinstance(seed, Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed) + seed_offset()


def set_seed(seed: int = 0) -> int:
    """Seed Python, NumPy and PyTorch so that runs repeat exactly; return the seed used.

    The seed used is ``seed + seed_offset()``: 0 unless ``D2LITE_SEED_OFFSET`` is set.

    On a GPU it also turns on PyTorch's deterministic algorithms for the whole process
    (``torch.use_deterministic_algorithms(True, warn_only=True)``: an operation without a
    deterministic version warns instead of failing), and wherever the compiler (TorchInductor)
    is already loaded, so that its flag stays in step. On a CPU-only process without the compiler
    it leaves the switch off: the CPU kernels the book uses give the same result on every run
    anyway, and the call would load the compiler (about 2 s per process) for nothing. On a GPU
    it keeps float32 at full
    precision: since Ampere, cuDNN computes convolutions and RNNs (and cuBLAS, where allowed,
    matrix products) in TF32, whose 10-bit mantissa moves a result by about 1e-3, so a chapter's
    tolerance would mean one thing on a CPU and another on a GPU.

    Deterministic cuBLAS also needs ``CUBLAS_WORKSPACE_CONFIG``, which cuBLAS reads once, when
    the process's first CUDA matrix product starts it. ``import d2lite`` therefore sets it
    (to ``:4096:8``, unless it is set already); it takes effect when d2lite is imported before
    any CUDA work, as in every chapter. Set it before starting Python otherwise.
    """
    used = _seed(seed)
    random.seed(used)
    np.random.seed(used % 2**32)
    torch.manual_seed(used)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    if torch.cuda.is_available() or "torch._inductor" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    return used


def synchronize(device: str | torch.device | None = None) -> None:
    """Wait until ``device`` has finished the work queued on it; nothing to wait for on a CPU.

    A GPU computes in the background: a call returns as soon as its work is queued. Around GPU
    work, read a clock only after ``synchronize(device)``, or the time is that of queueing.
    ``device=None`` means the current CUDA device when there is one.
    """
    if device is None:
        device = torch.device("cuda") if torch.cuda.is_available() else cpu()
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
    elif device.type == "xpu":
        torch.xpu.synchronize(device)


def generator(seed: int = 0, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` of its own, seeded with ``seed + seed_offset()``.

    A cell that draws from its own generator leaves the global random stream untouched, so the
    cells after it repeat whatever it draws.
    """
    return torch.Generator(device=device).manual_seed(_seed(seed))


def _shape_str(shape: Iterable[object]) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"


def check_shape(a: torch.Tensor | np.ndarray, shape: Sequence[int | None]) -> None:
    """Raise ``ValueError`` unless ``a.shape`` equals ``shape`` (``None`` matches any size)."""
    if not hasattr(a, "shape"):
        raise ValueError(f"expected a tensor or array, got {type(a).__name__}")
    try:
        expected = tuple(shape)
    except TypeError:
        raise ValueError(f"shape must be a sequence of ints, got {shape!r}") from None
    actual = tuple(a.shape)
    ok = len(actual) == len(expected) and all(
        e is None or e == s for e, s in zip(expected, actual)
    )
    if not ok:
        raise ValueError(f"expected shape {_shape_str(expected)}, got {_shape_str(actual)}")


class Timer:
    """Record wall-clock intervals: ``start()``, ``stop()``, then ``sum()`` or ``avg()``.

    With a GPU ``device``, ``start()`` and ``stop()`` first wait for the work queued on it
    (:func:`synchronize`), so an interval holds the GPU's work, not only its queueing.
    """

    def __init__(self, device: str | torch.device | None = None) -> None:
        self.device = cpu() if device is None else torch.device(device)
        self.times: list[float] = []
        self.start()

    def start(self) -> None:
        synchronize(self.device)
        self._tik = time.perf_counter()

    def stop(self) -> float:
        synchronize(self.device)
        self.times.append(time.perf_counter() - self._tik)
        return self.times[-1]

    def sum(self) -> float:
        return float(sum(self.times))

    def avg(self) -> float:
        return self.sum() / len(self.times) if self.times else 0.0


def count_flops(fn: Callable[[], object]) -> int:
    """Floating-point operations of ``fn()``: a multiply-add counts two.

    PyTorch's ``FlopCounterMode`` counts them: matrix products, convolutions and attention
    kernels (elementwise operations such as ``tanh`` count nothing), in the forward pass and in
    any backward pass that ``fn`` runs. Unlike a timing, the count is the same on every machine.
    The fused RNN kernels of oneDNN (CPU) and cuDNN (GPU) hide their products from the counter,
    so both are off while ``fn`` runs: ``nn.GRU`` and ``nn.LSTM`` are counted step by step.
    """
    if not callable(fn):
        raise ValueError(f"count_flops expects a function of no arguments, got {type(fn).__name__}")
    from torch.utils.flop_counter import FlopCounterMode

    with warnings.catch_warnings():  # turning oneDNN off warns about TF32 on Intel GPUs
        warnings.simplefilter("ignore", UserWarning)
        with torch.backends.mkldnn.flags(enabled=False), torch.backends.cudnn.flags(enabled=False):
            with FlopCounterMode(display=False, custom_mapping=_attention_flops()) as counter:
                fn()
    return int(counter.get_total_flops())


#: PyTorch's fused attention kernels (CPU, CUDA's flash, memory-efficient and cuDNN kernels, the
#: overridable one of other accelerators): forward ops take (query, key, value, ...), backward
#: ops (grad_out, query, key, value, ...).
_SDPA_KERNELS = (
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
)


def _attention_flops() -> dict:
    """FLOP formulas for the fused attention kernels that PyTorch's counter lacks (in this
    version of PyTorch at least the CPU's), so that an attention counts alike on every device."""
    from torch.utils import flop_counter

    if not hasattr(flop_counter, "sdpa_flop_count"):
        return {}

    def forward_flops(query, key, value, *args, out_shape=None, **kwargs) -> int:
        return flop_counter.sdpa_flop_count(query, key, value)

    def backward_flops(grad_out, query, key, value, *args, out_shape=None, **kwargs) -> int:
        return flop_counter.sdpa_backward_flop_count(grad_out, query, key, value)

    known = getattr(flop_counter, "flop_registry", {})
    mapping = {}
    for name in _SDPA_KERNELS:
        for op_name, formula in ((name, forward_flops), (f"{name}_backward", backward_flops)):
            op = getattr(torch.ops.aten, op_name, None)
            if op is not None and op not in known:
                mapping[op] = formula
    return mapping


def is_watched() -> bool:
    """Whether a person runs this notebook (Jupyter, Colab), not a batch executor.

    Executors such as nbclient (the book build) and nbval (the tests) send their cells with
    ``allow_stdin=False``; the kernel keeps that flag, while interactive front ends allow
    ``input()``. ``CI`` in the environment always means nobody is watching.
    """
    if os.environ.get("CI"):
        return False
    return bool(getattr(_ipython_kernel(), "_allow_stdin", False))


def _ipython_kernel() -> object | None:
    """The running Jupyter kernel, or None in plain Python and terminal IPython."""
    if "IPython" not in sys.modules:  # no IPython loaded: not in a kernel, and no import cost
        return None
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None)


def progress(iterable: Iterable, total: int | None = None, desc: str | None = None, **kwargs):
    """A tqdm progress bar for a person watching; silent under executors, tests and CI.

    The bar is a notebook widget where ipywidgets is installed (Colab), text elsewhere. Unlike
    ``tqdm.auto``, a Jupyter without ipywidgets gets the text bar without a warning.
    """
    from tqdm.std import tqdm

    disable = kwargs.pop("disable", not is_watched())
    if not disable and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.notebook import tqdm
    return tqdm(iterable, total=total, desc=desc, disable=disable, leave=False, **kwargs)

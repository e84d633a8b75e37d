"""Unit tests for the hand-written helpers in d2lite.utils."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import d2lite as d2l
from d2lite import utils


def test_check_shape_accepts_match_and_wildcards():
    d2l.check_shape(torch.zeros(2, 3), (2, 3))
    d2l.check_shape(np.zeros((4, 5, 6)), (4, None, 6))


@pytest.mark.parametrize(
    "shape, expected, message",
    [
        ((2, 3), (3, 2), r"expected shape \(3, 2\), got \(2, 3\)"),
        ((2, 3), (2, 3, 1), r"expected shape \(2, 3, 1\), got \(2, 3\)"),
        ((2, 3, 4), (2, None), r"expected shape \(2, \*\), got \(2, 3, 4\)"),
    ],
)
def test_check_shape_names_expected_and_actual(shape, expected, message):
    with pytest.raises(ValueError, match=message):
        d2l.check_shape(torch.zeros(shape), expected)


def test_check_shape_rejects_non_tensors():
    with pytest.raises(ValueError, match="expected a tensor or array, got list"):
        d2l.check_shape([1, 2], (2,))
    with pytest.raises(ValueError, match="sequence of ints"):
        d2l.check_shape(torch.zeros(2), 2)


def test_set_seed_repeats_torch_numpy_and_python():
    import random

    d2l.set_seed(7)
    a = (torch.rand(3), np.random.rand(3), random.random())
    d2l.set_seed(7)
    b = (torch.rand(3), np.random.rand(3), random.random())
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    d2l.set_seed(8)
    assert not torch.equal(torch.rand(3), a[0])


def test_set_seed_keeps_float32_at_full_precision_on_a_gpu():
    # TF32 (cuDNN's default since Ampere) would move GPU results by about 1e-3
    before = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        d2l.set_seed(0)
        assert not torch.backends.cudnn.allow_tf32
        assert not torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


@pytest.mark.parametrize("gpu", [False, True])
def test_set_seed_turns_on_deterministic_algorithms_through_the_public_api_on_a_gpu(gpu):
    # A fresh process. cuBLAS reads CUBLAS_WORKSPACE_CONFIG when it starts (the first CUDA
    # matrix product), so importing d2lite sets it, before set_seed could. Where a GPU is
    # (faked here), set_seed sets ATen's flag and the compiler's through
    # torch.use_deterministic_algorithms, with warn_only so that an operation without a
    # deterministic version still runs. A CPU-only process does not load the compiler for it.
    env = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
    code = (
        "import os, sys, torch, d2lite as d2l\n"
        f"torch.cuda.is_available = lambda: {gpu}\n"
        "print(os.environ['CUBLAS_WORKSPACE_CONFIG'])\n"
        "assert not torch.are_deterministic_algorithms_enabled()\n"
        "d2l.set_seed(0)\n"
        "print(torch.are_deterministic_algorithms_enabled(),\n"
        "      torch.is_deterministic_algorithms_warn_only_enabled(),\n"
        "      'torch._inductor' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [":4096:8", *[str(gpu)] * 3]


def test_a_readers_own_cublas_workspace_stays(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    utils._ask_cublas_for_a_deterministic_workspace()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    utils._ask_cublas_for_a_deterministic_workspace()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_set_seed_keeps_the_compilers_flag_in_step_when_it_is_loaded():
    import torch._inductor.config as inductor_config

    before = inductor_config.deterministic
    try:
        inductor_config.deterministic = False
        d2l.set_seed(0)
        assert inductor_config.deterministic is True
    finally:
        inductor_config.deterministic = before


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_set_seed_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="non-negative int"):
        d2l.set_seed(bad)


def test_the_seed_offset_shifts_every_seed_of_the_book(monkeypatch):
    monkeypatch.delenv("D2LITE_SEED_OFFSET", raising=False)
    assert d2l.seed_offset() == 0 and d2l.set_seed(3) == 3
    base = (torch.rand(2), torch.rand(2, generator=d2l.generator(3)))
    monkeypatch.setenv("D2LITE_SEED_OFFSET", "4")
    assert d2l.seed_offset() == 4 and d2l.set_seed(3) == 7
    shifted = (torch.rand(2), torch.rand(2, generator=d2l.generator(3)))
    assert not torch.equal(base[0], shifted[0]) and not torch.equal(base[1], shifted[1])
    d2l.set_seed(7 - 4)
    assert torch.equal(torch.rand(2), shifted[0])
    monkeypatch.setenv("D2LITE_SEED_OFFSET", "0")
    assert torch.equal(torch.rand(2, generator=d2l.generator(7)), shifted[1])


def test_the_seed_offset_reaches_the_seeded_data(monkeypatch):
    monkeypatch.delenv("D2LITE_SEED_OFFSET", raising=False)
    base = d2l.make_enko_corpus(50, 10, 10, seed=0).train
    order = next(iter(d2l.load_array([torch.arange(20)], 20, seed=0)))[0]
    monkeypatch.setenv("D2LITE_SEED_OFFSET", "1")
    assert d2l.make_enko_corpus(50, 10, 10, seed=0).train != base
    assert d2l.make_enko_corpus(50, 10, 10, seed=0).train == d2l.make_enko_corpus(
        50, 10, 10, seed=0).train  # fmt: skip
    assert not torch.equal(next(iter(d2l.load_array([torch.arange(20)], 20, seed=0)))[0], order)


@pytest.mark.parametrize("raw", ["-1", "x", "1.5"])
def test_a_bad_seed_offset_is_refused_with_its_name(monkeypatch, raw):
    monkeypatch.setenv("D2LITE_SEED_OFFSET", raw)
    with pytest.raises(ValueError, match="D2LITE_SEED_OFFSET must be a non-negative integer"):
        d2l.set_seed(0)


def test_set_seed_accepts_numpy_integers():
    assert d2l.set_seed(np.int64(5)) == 5


def test_try_gpu_honours_the_environment(monkeypatch):
    monkeypatch.setenv("D2LITE_DEVICE", "cpu")
    assert d2l.try_gpu() == torch.device("cpu")
    assert d2l.try_all_gpus() == [torch.device("cpu")]
    monkeypatch.setenv("D2LITE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="'cpu', 'cuda' or 'auto'"):
        d2l.try_gpu()


def test_try_gpu_cuda_demand_fails_loudly_without_a_gpu(monkeypatch):
    monkeypatch.setenv("D2LITE_DEVICE", "cuda")
    if torch.cuda.is_available():
        assert d2l.try_gpu().type == "cuda"
    else:
        with pytest.raises(RuntimeError, match="D2LITE_DEVICE=cuda"):
            d2l.try_gpu()


def _one_gpu(monkeypatch):
    """Pretend that PyTorch sees one GPU (only the choice is tested: nothing runs there)."""
    monkeypatch.setattr(utils, "num_gpus", lambda: 1)


def test_tests_and_builds_compute_on_the_cpu_even_with_a_gpu(monkeypatch):
    _one_gpu(monkeypatch)
    monkeypatch.delenv("D2LITE_DEVICE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert os.environ.get("PYTEST_CURRENT_TEST")  # this is a test: the CPU
    assert d2l.unattended() and d2l.try_gpu() == torch.device("cpu")
    assert d2l.try_all_gpus() == [torch.device("cpu")]
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setenv("CI", "true")  # CI: the CPU
    assert d2l.try_gpu() == torch.device("cpu")
    monkeypatch.delenv("CI")
    # a notebook kernel driven by an executor (nbval, Jupyter Book) sends allow_stdin=False
    monkeypatch.setattr(utils, "_ipython_kernel", lambda: type("K", (), {"_allow_stdin": False}))
    assert d2l.unattended() and d2l.try_gpu() == torch.device("cpu")
    # the website's outputs come from the GPU only when asked for
    for wanted in ("cuda", "auto"):
        monkeypatch.setenv("D2LITE_DEVICE", wanted)
        assert d2l.try_gpu() == torch.device("cuda:0")


def test_a_reader_gets_the_gpu_without_setting_anything(monkeypatch):
    _one_gpu(monkeypatch)
    for name in ("D2LITE_DEVICE", "CI", "PYTEST_CURRENT_TEST"):
        monkeypatch.delenv(name, raising=False)
    # Colab or Jupyter, run by a person (allow_stdin), and a plain Python program: the GPU
    monkeypatch.setattr(utils, "_ipython_kernel", lambda: type("K", (), {"_allow_stdin": True}))
    assert not d2l.unattended() and d2l.try_gpu() == torch.device("cuda:0")
    monkeypatch.setattr(utils, "_ipython_kernel", lambda: None)
    assert not d2l.unattended() and d2l.try_gpu() == torch.device("cuda:0")
    assert d2l.try_gpu(1) == torch.device("cpu")  # there is no second GPU
    monkeypatch.setenv("D2LITE_DEVICE", "cpu")  # and the reader can still ask for the CPU
    assert d2l.try_gpu() == torch.device("cpu")


def test_timer_waits_for_its_device_before_reading_the_clock(monkeypatch):
    waited = []
    monkeypatch.setattr(utils, "synchronize", lambda device=None: waited.append(str(device)))
    timer = d2l.Timer("cuda:0")  # nothing runs on the GPU: only the waits are counted
    timer.stop()
    assert waited == ["cuda:0", "cuda:0"] and len(timer.times) == 1
    waited.clear()
    d2l.Timer().stop()
    assert waited == ["cpu", "cpu"]  # a no-op there


def test_synchronize_waits_for_a_gpu_only(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(device))
    d2l.synchronize("cpu")
    d2l.synchronize(torch.device("cpu"))
    assert calls == []
    d2l.synchronize("cuda:0")
    assert calls == [torch.device("cuda:0")]


def test_fit_reads_its_clock_after_waiting_for_the_device(monkeypatch):
    from d2lite import train

    order = []
    monkeypatch.setattr(train, "synchronize", lambda device: order.append(("wait", str(device))))
    clock = time.perf_counter
    monkeypatch.setattr(train.time, "perf_counter", lambda: (order.append(("clock",)), clock())[1])
    X = torch.randn(8, 3, generator=d2l.generator(0))
    data = d2l.load_array([X, X.sum(1, keepdim=True)], 4, seed=0)
    net = nn.Linear(3, 1)
    history = d2l.fit(net, data, 1, 0.01, lambda net, b: (((net(b[0]) - b[1]) ** 2).mean(), 4),
                      device="cpu", plot=False)
    assert len(history["seconds"]) == 1
    # the start and the epoch's end: two clock reads right after a wait, the last one last
    pair = [("wait", "cpu"), ("clock",)]
    waited = [i for i in range(1, len(order)) if order[i - 1 : i + 1] == pair]
    assert len(waited) == 2 and order.count(("wait", "cpu")) == 2
    assert order[-2:] == [("wait", "cpu"), ("clock",)]


def test_every_fused_attention_kernel_of_pytorch_has_a_flop_formula():
    # The CUDA kernels (flash, memory-efficient, cuDNN) and the CPU's are counted alike: by
    # PyTorch's own formulas where it has them, else by the ones d2lite adds.
    from torch.utils import flop_counter

    mapped = set(utils._attention_flops()) | set(flop_counter.flop_registry)
    fused = [getattr(torch.ops.aten, name) for name in dir(torch.ops.aten)
             if name.startswith("_scaled_dot_product_") and "_math" not in name]
    assert len(fused) >= 8  # forward and backward of CPU, flash, efficient, cuDNN
    assert [op for op in fused if op not in mapped] == []
    q = torch.randn(2, 3, 8, 4, requires_grad=True)
    counted = d2l.count_flops(lambda: F.scaled_dot_product_attention(q, q, q).sum().backward())
    # 2 b h n m d per product: QK^T and PV forward; the backward computes QK^T again, then
    # dV, dP, dQ and dK
    assert counted == 7 * (2 * 2 * 3 * 8 * 8 * 4)


def test_timer_accumulates():
    timer = d2l.Timer()
    time.sleep(0.02)  # sleep lasts at least this long, so the interval has a lower bound
    first = timer.stop()
    timer.start()
    second = timer.stop()
    assert first >= 0.02 and timer.times == [first, second]
    assert timer.sum() == pytest.approx(first + second)
    assert timer.avg() == pytest.approx((first + second) / 2)


def test_count_flops_counts_a_matrix_product_and_its_backward():
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, 5)
    assert d2l.count_flops(lambda: a @ b) == 2 * 3 * 4 * 5
    # backward: the gradient of a is (3, 5) @ (5, 4), one more product of the same size
    assert d2l.count_flops(lambda: (a @ b).sum().backward()) == 2 * (2 * 3 * 4 * 5)
    assert d2l.count_flops(lambda: torch.tanh(a)) == 0  # elementwise work is not counted


@pytest.mark.parametrize("batch_first", [True, False])
def test_count_flops_sees_inside_fused_rnns(batch_first):
    """LSTMs have four gate blocks and GRUs three: the products are in the ratio 4 : 3."""
    x = torch.randn(2, 6, 5) if batch_first else torch.randn(6, 2, 5)
    counts = {}
    for cls in (nn.LSTM, nn.GRU):
        rnn = cls(5, 8, num_layers=2, batch_first=batch_first)
        counts[cls] = d2l.count_flops(lambda rnn=rnn: rnn(x)[0].sum().backward())
    assert counts[nn.GRU] > 0 and counts[nn.LSTM] * 3 == counts[nn.GRU] * 4
    assert torch.backends.mkldnn.enabled  # the fused kernels are back on afterwards


def test_count_flops_counts_the_fused_attention_kernel_like_its_matrix_products():
    q, k, v = torch.randn(2, 4, 17, 8), torch.randn(2, 4, 9, 8), torch.randn(2, 4, 9, 8)
    fused = d2l.count_flops(lambda: nn.functional.scaled_dot_product_attention(q, k, v))
    taught = d2l.count_flops(lambda: torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v)
    assert fused == taught == 2 * (2 * 2 * 4 * 17 * 9 * 8)  # scores and weighted sum
    q.requires_grad_()
    assert d2l.count_flops(
        lambda: nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()
    ) > 2 * fused  # the backward pass is counted too


def test_count_flops_rejects_what_it_cannot_call():
    message = r"count_flops expects a function of no arguments, got Tensor"
    with pytest.raises(ValueError, match=message):
        d2l.count_flops(torch.ones(2))


def test_progress_is_silent_in_ci(monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    assert list(d2l.progress(range(3))) == [0, 1, 2]
    assert capsys.readouterr().err == ""


def test_progress_draws_text_without_ipywidgets_and_warns_nothing(monkeypatch, capsys):
    """A Jupyter without ipywidgets gets a text bar; tqdm.auto would warn 'IProgress not found'."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(utils, "is_watched", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # importing it now raises ImportError
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = d2l.progress(range(3), desc="epochs")
        assert type(bar).__module__ == "tqdm.std" and not bar.disable
        assert list(bar) == [0, 1, 2]
    assert "epochs" in capsys.readouterr().err  # the text bar is drawn on stderr

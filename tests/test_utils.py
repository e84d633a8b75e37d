"""Unit tests for the hand-written helpers in d2lite.utils."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import d2lite as d2l


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


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_set_seed_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="non-negative int"):
        d2l.set_seed(bad)


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


def test_timer_accumulates():
    timer = d2l.Timer()
    time.sleep(0.02)  # sleep lasts at least this long, so the interval has a lower bound
    first = timer.stop()
    timer.start()
    second = timer.stop()
    assert first >= 0.02 and timer.times == [first, second]
    assert timer.sum() == pytest.approx(first + second)
    assert timer.avg() == pytest.approx((first + second) / 2)


def test_progress_is_silent_in_ci(monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    assert list(d2l.progress(range(3))) == [0, 1, 2]
    assert capsys.readouterr().err == ""

"""tools/portable.py: the settings that make a chapter run look like another machine's."""

from __future__ import annotations

import pytest

from tools import portable


def test_the_default_is_another_seed_and_another_simd_path(monkeypatch):
    monkeypatch.delenv("D2LITE_PORTABLE_OFFSET", raising=False)
    monkeypatch.delenv("D2LITE_PORTABLE_SIMD", raising=False)
    env = portable.portable_env()
    assert int(env["D2LITE_SEED_OFFSET"]) > 0
    assert env["ATEN_CPU_CAPABILITY"] and env["MKL_ENABLE_INSTRUCTIONS"]


def test_the_default_path_is_narrower_than_the_cpus_own():
    assert portable.default_simd({"avx2", "avx512f", "sse4_2"}) == "avx2"
    assert portable.default_simd({"avx2", "fma", "sse4_2"}) == "sse42"  # AVX2 is its own path
    assert portable.default_simd(set()) == "sse42"
    assert portable.default_simd() in ("avx2", "sse42")


def test_the_make_variables_choose_offset_and_path(monkeypatch):
    monkeypatch.setenv("D2LITE_PORTABLE_OFFSET", "3")
    monkeypatch.setenv("D2LITE_PORTABLE_SIMD", "sse42")
    env = portable.portable_env()
    assert env["D2LITE_SEED_OFFSET"] == "3" and env["ATEN_CPU_CAPABILITY"] == "default"
    monkeypatch.setenv("D2LITE_PORTABLE_OFFSET", "")  # `make test` passes empty when not given
    monkeypatch.setenv("D2LITE_PORTABLE_SIMD", "")
    assert portable.portable_env()["D2LITE_SEED_OFFSET"] == str(portable.DEFAULT_OFFSET)


def test_an_unknown_path_is_refused():
    with pytest.raises(ValueError, match="SIMD path must be one of"):
        portable.portable_env(0, "neon")


def test_chapters_are_found_by_number_or_stem():
    assert [p.stem for p in portable.chapter_sources(["02"])] == ["02_bptt_lstm"]
    with pytest.raises(SystemExit, match="no chapter"):
        portable.chapter_sources(["99"])


def test_a_run_gets_only_its_own_paths_kernel_settings(monkeypatch):
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX512")  # this shell's, not the run's
    monkeypatch.delenv("D2LITE_SEED_OFFSET", raising=False)
    env = portable.run_env("avx2")
    assert env["MKL_ENABLE_INSTRUCTIONS"] == "AVX2" and env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert "MKL_ENABLE_INSTRUCTIONS" not in portable.run_env("native")
    assert env["D2LITE_FIG_LANG"] == "en" and "D2LITE_SEED_OFFSET" not in env

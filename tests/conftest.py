"""Shared fixtures: the built website, built once per test run and shared by xdist workers.

`site` builds ``_build/html`` with the command of ``make book`` (every chapter executed or
taken from the execution cache, warnings as errors) unless this test run already built it, or,
outside ``make test``, unless the last passing build is newer than everything it is made from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from filelock import FileLock

from tools.core import ROOT
from tools.website import serve

BUILD = ROOT / "_build"
SITE = BUILD / "html"
STAMP = BUILD / ".site-built"  # written after a build that passed with -W
RUN_STAMP = BUILD / ".site-run"  # the test run that built the site
# Everything the site is made from: a file newer than the stamp means a rebuild.
SOURCES = [
    "_config.yml",
    "_toc.yml",
    "references.bib",
    "book/*.md",
    "book/*.csv",
    "_ext/*.py",
    "_static/*",
    "_templates/*",
    "d2lite/**/*.py",
    "d2lite/**/*.json",
]


def build_command() -> list[str]:
    """The command of `make book`: execute every chapter, warnings are errors."""
    jb = Path(sys.executable).with_name("jupyter-book")
    return [str(jb), "build", ".", "--builder", "html", "-W", "-n", "--keep-going"]


def site_is_fresh() -> bool:
    """Whether the last build passed and nothing it is made from changed since."""
    if not ((SITE / "index.html").is_file() and STAMP.is_file()):
        return False
    files = [p for pattern in SOURCES for p in ROOT.glob(pattern) if p.is_file()]
    return STAMP.stat().st_mtime >= max(p.stat().st_mtime for p in files)


@pytest.fixture(scope="session")
def site() -> Path:
    """Build the website once per test run (xdist workers share it) and return its folder."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid-{os.getpid()}")
    BUILD.mkdir(exist_ok=True)
    with FileLock(str(BUILD / ".site.lock")):
        built_this_run = RUN_STAMP.is_file() and RUN_STAMP.read_text() == run_id
        if (built_this_run and (SITE / "index.html").is_file()) or site_is_fresh():
            return SITE
        started = time.time()
        env = dict(os.environ, D2LITE_STRICT_FONTS="1")
        env.pop("MPLBACKEND", None)  # kernels keep the inline backend, so figures show
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        # --all: Sphinx rewrites no page when only an extension's code (_ext) changed
        proc = subprocess.run(
            [*build_command(), "--all"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000,
        )
        log = BUILD / "site-build.log"
        log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
        if proc.returncode != 0:
            STAMP.unlink(missing_ok=True)
            tail = (proc.stdout + proc.stderr)[-6000:]
            pytest.fail(f"the website build failed (exit {proc.returncode}, log {log}):\n{tail}")
        # Sphinx 7.4 keeps its old copy of a static file that changed since the last build, and
        # copies nothing when no page is out of date (a stylesheet-only change): the project's
        # _static is copied over the site's after every build.
        shutil.copytree(ROOT / "_static", SITE / "_static", dirs_exist_ok=True)
        STAMP.write_text(f"built in {time.time() - started:.0f} s\n", encoding="utf-8")
        RUN_STAMP.write_text(run_id, encoding="utf-8")
    return SITE


def _predict_source_weights(net, src_vocab, tgt_vocab, num_steps: int, real: int):
    """Greedy-decode "I go home ." with <eos> forbidden, so every step gives a row, and check
    the weights: (num_steps, num_steps), rows summing to 1, no weight on the padding after the
    ``real`` source positions. Returns them."""
    import torch

    import d2lite as d2l

    with torch.no_grad():
        net.decoder.dense.bias[tgt_vocab.eos] = -1e4
    _, tokens, attn = d2l.predict_seq2seq(
        net, "I go home .", src_vocab, tgt_vocab, num_steps, save_attention_weights=True,
        return_tokens=True,
    )  # fmt: skip
    assert len(tokens) == num_steps and attn.shape == (num_steps, num_steps)
    assert torch.allclose(attn.sum(dim=1), torch.ones(num_steps), atol=1e-5)
    assert float(attn[:, real:].abs().max()) == 0.0
    return attn


@pytest.fixture
def predict_source_weights():
    """The checks every attention decoder's predict_seq2seq weights must pass."""
    return _predict_source_weights


# -- the browser tests' shared fixtures (tests/test_site*.py): one server, one browser ---------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Nothing outside the site: every other host name fails to resolve, at no cost per request.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]

# -- serving the site -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def built_site(site: Path) -> Path:
    """``_build/html``, built once per run by the ``site`` fixture of tests/conftest.py."""
    return site


@pytest.fixture(scope="session")
def server(built_site: Path) -> Iterator[str]:
    """The built site served on a free port of 127.0.0.1; yields its base URL."""
    with serve(built_site) as url:
        yield url


def chromium_path() -> str:
    path = os.environ.get("D2LITE_CHROMIUM", "/usr/bin/chromium")
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"no Chromium at {path}: run `make browser` (installs Debian's chromium as root), "
            "or point D2LITE_CHROMIUM at a Chromium/Chrome executable"
        )
    return path


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium from the system; Playwright gives each launch a fresh profile dir."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


def is_outside(url: str) -> bool:
    """Whether a request leaves the site served on 127.0.0.1 (inline data never does)."""
    return not url.startswith(("data:", "blob:")) and urlparse(url).hostname != "127.0.0.1"


@pytest.fixture
def context(browser):
    """A fresh browser context (empty localStorage) that records requests leaving 127.0.0.1."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.outside_requests = []

    def record(request):
        if is_outside(request.url):
            ctx.outside_requests.append(request.url)

    ctx.on("request", record)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()



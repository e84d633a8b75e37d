"""What `make test` needs for the browser tests: tools/ensure_browser.sh finds a Chromium or
says in one line what to install (installing nothing itself; `make browser` installs Debian's
packages as root), and a Korean font is present (never boxes for Hangul)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tools.core import ROOT

SCRIPT = ROOT / "tools" / "ensure_browser.sh"


def _run(tmp_path: Path, tools: dict[str, str], env: dict[str, str] | None = None,
         args: tuple[str, ...] | list[str] = ()):
    """Run the script as a non-root user whose PATH holds only ``tools`` (name -> script)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "grep", "cat"):
        (bin_dir / name).symlink_to(shutil.which(name))
    tools = {"id": "echo 1000", "python-without-playwright": "exit 1", **tools}
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!{shutil.which('sh')}\n{body}\n")
        (bin_dir / name).chmod(0o755)
    full_env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PY": "python-without-playwright"}
    return subprocess.run([str(bin_dir / "bash"), str(SCRIPT), *args],
                          env={**full_env, **(env or {})}, capture_output=True, text=True,
                          timeout=60)  # fmt: skip


HOW = ("apt-get install chromium fontconfig fonts-nanum nodejs (as root: make browser), or set "
       "D2LITE_CHROMIUM; then run make test again")


def test_no_chromium_and_no_font_is_one_clear_line(tmp_path):
    proc = _run(tmp_path, {})
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "make test: the browser tests need a Chromium and a Korean font (none in "
        f"'fc-list :lang=ko') and Node.js (no node on PATH): {HOW}"
    ]


def test_a_chromium_on_path_is_found_but_a_missing_font_still_fails(tmp_path):
    proc = _run(tmp_path, {"chromium": "exit 0"})
    assert proc.stdout.strip() == str(tmp_path / "bin" / "chromium")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "make test: the browser tests need a Korean font (none in 'fc-list :lang=ko') and "
        f"Node.js (no node on PATH): {HOW}"
    )


def test_finding_installs_nothing_even_as_root(tmp_path):
    """make test runs the script without --install: no apt-get, no `playwright install` (a
    download from outside the package registries), even as root with apt-get at hand."""
    log = tmp_path / "calls.log"
    record = f'echo "${{0##*/}} $*" >> {log}; exit 1'
    proc = _run(tmp_path, {"id": "echo 0", "apt-get": record, "python-without-playwright": record})
    assert proc.returncode == 1
    calls = log.read_text().splitlines() if log.exists() else []
    assert calls == ["python-without-playwright -"]  # only asks Playwright where its Chromium is


def test_install_uses_only_debian_packages_and_needs_root(tmp_path):
    log = tmp_path / "calls.log"
    proc = _run(tmp_path, {"apt-get": f'echo "apt-get $*" >> {log}'}, args=["--install"])
    assert proc.returncode == 1 and not log.exists()  # not root: nothing is tried
    assert ("as root run: apt-get update && apt-get install -y chromium fontconfig fonts-nanum "
            "nodejs") in proc.stderr
    root = tmp_path / "root"
    root.mkdir()
    proc = _run(root, {"id": "echo 0", "apt-get": f'echo "apt-get $*" >> {log}'},
                args=["--install"])
    calls = log.read_text().splitlines()
    assert [c.split()[:2] for c in calls] == [["apt-get", "update"], ["apt-get", "install"]]
    assert calls[1].split()[-4:] == ["chromium", "fontconfig", "fonts-nanum", "nodejs"]


def test_chromium_and_korean_font_pass(tmp_path):
    fc_list = "echo '/f/NanumGothic.ttf: NanumGothic,나눔고딕:style=Regular'"
    proc = _run(tmp_path, {"my-chrome": "exit 0", "fc-list": fc_list, "node": "exit 0"},
                env={"D2LITE_CHROMIUM": str(tmp_path / "bin" / "my-chrome")})  # fmt: skip
    assert (proc.returncode, proc.stdout.strip()) == (0, str(tmp_path / "bin" / "my-chrome"))


def test_a_missing_node_is_named_alone(tmp_path):
    fc_list = "echo '/f/NanumGothic.ttf: NanumGothic,나눔고딕:style=Regular'"
    proc = _run(tmp_path, {"chromium": "exit 0", "fc-list": fc_list})
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"make test: the browser tests need Node.js (no node on PATH): {HOW}")


def test_a_chromium_that_is_not_executable_is_refused(tmp_path):
    proc = _run(tmp_path, {}, env={"D2LITE_CHROMIUM": "/no/such/chrome"})
    assert proc.returncode == 1
    assert "D2LITE_CHROMIUM/CHROMIUM=/no/such/chrome is not an executable" in proc.stderr


@pytest.mark.book
def test_a_korean_font_is_installed_for_the_browser():
    """Chromium draws Hangul with a system font: without one the screenshots show boxes."""
    assert shutil.which("fc-list"), "fc-list is missing: install fontconfig and fonts-nanum"
    fonts = subprocess.run(["fc-list", ":lang=ko"], capture_output=True, text=True).stdout
    assert fonts.strip(), "no Korean font (fc-list :lang=ko is empty): install fonts-nanum"

#!/usr/bin/env bash
# Find what the browser tests (tests/test_site.py) need, a Chromium and a Hangul font, and
# install what is missing where that needs no root or where we are root.
#
#   tools/ensure_browser.sh     prints the Chromium to use on stdout and exits 0; when there is
#                               no Chromium or no Korean font it prints ONE line on stderr saying
#                               what to install and exits 1 (stdout still names a Chromium if one
#                               was found, so the other browser checks can run).
#
# The Chromium, in this order: $D2LITE_CHROMIUM or $CHROMIUM (when set, it must be executable);
# a system chromium / chromium-browser / google-chrome on PATH; the Chromium Playwright already
# installed; `playwright install chromium` (needs the network, no root); Debian's chromium with
# apt-get (root only). The Korean font: `fc-list :lang=ko`, else fonts-nanum with apt-get (root).
# PY names the Python that has Playwright (default: python3).
set -uo pipefail

PY="${PY:-python3}"
missing=()
chromium=""

playwright_chromium() {
  "$PY" - <<'EOF' 2>/dev/null
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    print(p.chromium.executable_path)
EOF
}

is_root_with_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

apt_install() {
  echo "ensure_browser: installing $* with apt-get" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

wanted="${D2LITE_CHROMIUM:-${CHROMIUM:-}}"
if [ -n "$wanted" ]; then
  if [ -x "$wanted" ]; then
    chromium="$wanted"
  else
    echo "ensure_browser: D2LITE_CHROMIUM/CHROMIUM=$wanted is not an executable" >&2
    exit 1
  fi
fi
if [ -z "$chromium" ]; then
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if path="$(command -v "$name")"; then chromium="$path"; break; fi
  done
fi
if [ -z "$chromium" ]; then
  path="$(playwright_chromium)"
  if [ -n "$path" ] && [ -x "$path" ]; then chromium="$path"; fi
fi
if [ -z "$chromium" ]; then
  echo "ensure_browser: trying 'playwright install chromium' (needs the network)" >&2
  if timeout 600 "$PY" -m playwright install chromium >/dev/null 2>&1; then
    path="$(playwright_chromium)"
    if [ -n "$path" ] && [ -x "$path" ]; then chromium="$path"; fi
  else
    echo "ensure_browser: 'playwright install chromium' failed (no network?)" >&2
  fi
fi
if [ -z "$chromium" ] && is_root_with_apt && apt_install chromium; then
  chromium="$(command -v chromium || true)"
fi
[ -n "$chromium" ] || missing+=("a Chromium (Debian: chromium; or 'playwright install chromium'; or set D2LITE_CHROMIUM)")

# Without a Korean font Chromium draws Hangul as empty boxes in the screenshots.
has_korean_font() { command -v fc-list >/dev/null && fc-list :lang=ko | grep -q .; }
if ! has_korean_font; then
  if is_root_with_apt; then apt_install fontconfig fonts-nanum; fi
  has_korean_font || missing+=("a Korean font (Debian: fonts-nanum; check with 'fc-list :lang=ko')")
fi

[ -n "$chromium" ] && echo "$chromium"
if [ ${#missing[@]} -gt 0 ]; then
  msg="${missing[0]}"
  for m in "${missing[@]:1}"; do msg="$msg and $m"; done
  echo "make test: the browser tests need $msg: install it, then run make test again" >&2
  exit 1
fi
exit 0

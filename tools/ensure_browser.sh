#!/usr/bin/env bash
# Find what the browser tests (tests/test_site.py, tests/test_views_browser.py) need: a Chromium
# and a Korean font. It installs nothing and uses no network unless asked to with --install.
#
#   tools/ensure_browser.sh            prints the Chromium to use on stdout and exits 0; when there
#                                      is no Chromium or no Korean font it prints ONE line on stderr
#                                      saying what is missing and the command that installs it, and
#                                      exits 1 (stdout still names a Chromium if one was found, so
#                                      the other browser checks can run). make test runs this.
#   tools/ensure_browser.sh --install  (make browser) first installs what is missing from Debian's
#                                      packages with apt-get (root only): chromium, fontconfig,
#                                      fonts-nanum, nodejs. Then it finds them as above.
#
# The Chromium, in this order: $D2LITE_CHROMIUM or $CHROMIUM (when set, it must be executable);
# a chromium / chromium-browser / google-chrome on PATH; a Chromium that Playwright installed
# earlier. The Korean font: any in `fc-list :lang=ko`.
# PY names the Python that has Playwright (default: python3).
set -uo pipefail

PY="${PY:-python3}"
PACKAGES="chromium fontconfig fonts-nanum nodejs"
HOW="apt-get install chromium fontconfig fonts-nanum nodejs (as root: make browser), or set D2LITE_CHROMIUM"
missing=()
chromium=""

find_chromium() {
  local wanted="${D2LITE_CHROMIUM:-${CHROMIUM:-}}" name path
  if [ -n "$wanted" ]; then
    [ -x "$wanted" ] && echo "$wanted"
    return
  fi
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if path="$(command -v "$name")"; then echo "$path"; return; fi
  done
  # A Chromium that `playwright install` put in its cache before (this script never downloads).
  path="$("$PY" - <<'EOF' 2>/dev/null
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    print(p.chromium.executable_path)
EOF
)"
  if [ -n "$path" ] && [ -x "$path" ]; then echo "$path"; fi
}

has_korean_font() { command -v fc-list >/dev/null && fc-list :lang=ko | grep -q .; }

# Node.js checks the attention views' script (node --check, tests/test_views_browser.py).
has_node() { [ -n "${D2LITE_NODE:-}" ] && [ -x "$D2LITE_NODE" ] || command -v node >/dev/null; }

if [ "${1:-}" = "--install" ]; then
  if [ -z "$(find_chromium)" ] || ! has_korean_font || ! has_node; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
      echo "make browser: installing needs root and apt-get; as root run: apt-get update && apt-get install -y $PACKAGES" >&2
      exit 1
    fi
    echo "make browser: apt-get install $PACKAGES (Debian's packages)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null ||
      { echo "make browser: apt-get install $PACKAGES failed" >&2; exit 1; }
  fi
elif [ -n "${1:-}" ]; then
  echo "usage: tools/ensure_browser.sh [--install]" >&2
  exit 2
fi

wanted="${D2LITE_CHROMIUM:-${CHROMIUM:-}}"
if [ -n "$wanted" ] && [ ! -x "$wanted" ]; then
  echo "ensure_browser: D2LITE_CHROMIUM/CHROMIUM=$wanted is not an executable" >&2
  exit 1
fi
chromium="$(find_chromium)"
[ -n "$chromium" ] || missing+=("a Chromium")
# Without a Korean font Chromium draws Hangul as empty boxes in the screenshots.
has_korean_font || missing+=("a Korean font (none in 'fc-list :lang=ko')")
has_node || missing+=("Node.js (no node on PATH)")

[ -n "$chromium" ] && echo "$chromium"
if [ ${#missing[@]} -gt 0 ]; then
  msg="${missing[0]}"
  for m in "${missing[@]:1}"; do msg="$msg and $m"; done
  echo "make test: the browser tests need $msg: $HOW; then run make test again" >&2
  exit 1
fi
exit 0

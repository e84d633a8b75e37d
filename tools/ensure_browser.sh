#!/usr/bin/env bash
# Make sure the browser tests (tests/test_site.py) can run: Debian's Chromium and a Hangul font.
# Installs what is missing with apt-get (non-interactive) when running as root; otherwise it
# says what to install and fails. Playwright never downloads a browser in this project.
#   CHROMIUM=/path/to/chrome tools/ensure_browser.sh   # use another Chromium/Chrome instead
set -euo pipefail

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
packages=()
if [ ! -x "$CHROMIUM" ]; then
  if [ "$CHROMIUM" != /usr/bin/chromium ]; then
    echo "ensure_browser: CHROMIUM=$CHROMIUM is not an executable" >&2
    exit 1
  fi
  packages+=(chromium)
fi
# Without a Korean font, Chromium draws Hangul as empty boxes in the screenshots.
if ! { command -v fc-list >/dev/null && fc-list :lang=ko | grep -q .; }; then
  if command -v apt-get >/dev/null || [ ${#packages[@]} -gt 0 ]; then
    packages+=(fonts-nanum)
  fi
fi
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "ensure_browser: the browser tests need: ${packages[*]}" >&2
  echo "  install them, e.g. 'sudo apt-get install -y ${packages[*]}' on Debian/Ubuntu," >&2
  echo "  or run 'make test CHROMIUM=/path/to/chromium' with a Chromium/Chrome you have." >&2
  exit 1
fi
echo "ensure_browser: installing ${packages[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
test -x "$CHROMIUM"

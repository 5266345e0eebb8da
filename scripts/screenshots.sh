#!/usr/bin/env bash
# Regenerates the catalog screenshots in src/img/screenshots (npm run screenshots) from the component tests in
# Chromium. It refuses to run without a font covering Chinese: Chromium would draw every character of the zh-Hans
# screenshot as an empty box (pkg/packaging's tofu check fails on such an image). As root with apt-get it installs
# Debian's fonts-noto-cjk first.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./scripts/node.sh

has_cjk_font() { [ -n "$(fc-list :lang=zh 2>/dev/null)" ]; }
if ! has_cjk_font && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "screenshots.sh: no font covers Chinese (fc-list :lang=zh); installing Debian's fonts-noto-cjk" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fonts-noto-cjk >&2
fi
if ! has_cjk_font; then
  echo "screenshots.sh: no font covers Chinese ('fc-list :lang=zh' lists none), so query-editor-zh-Hans.png would show" >&2
  echo "               empty boxes. Install one (Debian/Ubuntu: apt-get install fonts-noto-cjk) and run this again." >&2
  exit 1
fi
[ -d node_modules ] || npm install --no-audit --no-fund
SCREENSHOTS=1 exec npx playwright test -c playwright-ct.config.ts -g "screenshot|Chinese" "$@"

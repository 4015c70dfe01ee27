#!/usr/bin/env bash
# Installs what the playback tests need: Chromium (Debian package) and, under testdata/player,
# hls.js, dash.js and playwright-core from the npm registry.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "chromium is missing: installing it with apt-get"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
  else
    echo "chromium is missing: install it, the browser playback tests need it" >&2
    exit 1
  fi
fi
if [ -f testdata/player/package.json ] && [ ! -d testdata/player/node_modules ]; then
  (cd testdata/player && npm ci --no-audit --no-fund --silent)
fi

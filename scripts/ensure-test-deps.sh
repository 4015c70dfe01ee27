#!/usr/bin/env bash
# Installs what the playback tests need: Chromium (Debian package), node and npm, and, under
# testdata/player, hls.js, dashjs and playwright-core from the npm registry (package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""

# apt_install PKG... installs Debian packages, or says what to install and fails without apt-get.
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$* missing: install it, the browser playback tests need it" >&2
    exit 1
  fi
  echo "$* missing: installing with apt-get"
  if [ -z "$updated" ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  pkgs=()
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
  apt_install "${pkgs[@]}"
fi
# playwright-core refuses Node older than 20; Debian bookworm's own nodejs is 18.
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "node $(node --version) is too old: playwright-core (testdata/player) needs Node 20 or newer;" >&2
  echo "install Node 20+ (Debian bookworm's nodejs package is 18)" >&2
  exit 1
fi

# npm ci writes node_modules/.package-lock.json; a lock file newer than it means a stale install.
player=testdata/player
stamp=$player/node_modules/.package-lock.json
if [ -f $player/package-lock.json ] && { [ ! -f $stamp ] || [ $player/package-lock.json -nt $stamp ]; }; then
  echo "installing the browser players in $player (npm ci)"
  (cd $player && npm ci --no-audit --no-fund --loglevel=error)
  touch $stamp
fi

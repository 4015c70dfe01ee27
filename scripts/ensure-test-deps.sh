#!/usr/bin/env bash
# Installs what the playback tests need: Chromium (Debian package), node and npm, and, under
# testdata/player, hls.js, dashjs and playwright-core from the npm registry (package-lock.json), for
# the playback harness (play.mjs) and the web console test (console.mjs);
# the players of the compatibility suite (internal/compat): MediaInfo, GStreamer, VLC; and libsrt's
# srt-tools (srt-live-transmit), the SRT tests' reference peer; Prometheus (prometheus, promtool)
# for the metrics tests; PostgreSQL (postgresql) for the storage suites on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""

# apt_install [--no-install-recommends] PKG... installs Debian packages, or says what to install
# and fails without apt-get.
apt_install() {
  local opts=()
  if [ "$1" = --no-install-recommends ]; then
    opts+=("$1")
    shift
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$* missing: install it, the playback tests need it" >&2
    exit 1
  fi
  echo "$* missing: installing with apt-get"
  if [ -z "$updated" ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${opts[@]}" "$@"
}

# installed PKG tells whether a Debian package is installed.
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi

# The compatibility suite's players: MediaInfo; GStreamer's command-line tools (gst-launch-1.0;
# gst-discoverer-1.0 and gst-play-1.0 are in plugins-base-apps) with the demuxers and decoders
# of what sluice writes (good: qtdemux, flvdemux, avidemux; bad: h264parse; libav: the
# decoders); VLC headless (vlc-bin is cvlc, vlc-plugin-base has the demuxers and decoders).
# Nothing they recommend is needed: no display, no sound card.
compat_pkgs=(mediainfo gstreamer1.0-tools gstreamer1.0-plugins-base-apps gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-libav vlc-bin vlc-plugin-base)
compat_bins=(mediainfo gst-launch-1.0 gst-discoverer-1.0 gst-play-1.0 cvlc)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${compat_pkgs[@]}"; do
    installed "$pkg" || missing+=("$pkg")
  done
else
  for bin in "${compat_bins[@]}"; do
    command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt_install --no-install-recommends "${missing[@]}"
fi

# libsrt's own tools (srt-live-transmit): the SRT stack's interop tests and the srt-relay
# benchmark run them as the reference peer.
if ! command -v srt-live-transmit >/dev/null 2>&1; then
  apt_install --no-install-recommends srt-tools
fi

# Prometheus and promtool: the metrics tests run a real Prometheus that scrapes sluice, and
# check the exposition with promtool.
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  apt_install --no-install-recommends prometheus
fi

# PostgreSQL's server (initdb, postgres): the storage suites run again on a throwaway cluster
# (internal/testutil/pgtest). Debian keeps the programs in /usr/lib/postgresql/<version>/bin; the
# package also makes the "postgres" user the cluster runs as when the tests run as root.
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! command -v initdb >/dev/null 2>&1; then
  apt_install --no-install-recommends postgresql
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

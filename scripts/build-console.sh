#!/usr/bin/env bash
# Builds the web console's third-party assets: installs hls.js and dash.js from the npm registry
# at the versions internal/console/web/package-lock.json pins (npm ci), and copies their browser
# builds and licences into internal/console/ui/vendor, which the binary embeds. Node and npm are
# installed with apt-get when missing (as ensure-ffmpeg.sh does for ffmpeg). Our own HTML, JS
# and CSS need no build step: they are embedded as written.
set -euo pipefail
cd "$(dirname "$0")/.."
web=internal/console/web
vendor=internal/console/ui/vendor

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    pkgs=()
    command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
    command -v npm >/dev/null 2>&1 || pkgs+=(npm)
    echo "${pkgs[*]} missing: installing with apt-get (the console's hls.js and dash.js come from npm)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}"
  else
    echo "node and npm are missing: install Node.js (18 or newer), then run make console again" >&2
    exit 1
  fi
fi

# npm ci writes node_modules/.package-lock.json; a lock file newer than it means a stale install.
stamp=$web/node_modules/.package-lock.json
if [ ! -f $stamp ] || [ $web/package-lock.json -nt $stamp ]; then
  echo "installing the console's front-end libraries in $web (npm ci)"
  (cd $web && npm ci --no-audit --no-fund --loglevel=error)
  touch $stamp
fi

mods=$web/node_modules
mkdir -p $vendor
# Each file: source under node_modules, name in the vendor folder.
files=(
  "hls.js/dist/hls.min.js:hls.min.js"
  "hls.js/dist/hls.worker.js:hls.worker.js"
  "hls.js/LICENSE:hls.js.LICENSE.txt"
  "dashjs/dist/modern/umd/dash.mediaplayer.min.js:dash.mediaplayer.min.js"
  "dashjs/LICENSE.md:dash.js.LICENSE.txt"
)
for f in "${files[@]}"; do
  src=$mods/${f%%:*}
  dst=$vendor/${f##*:}
  if [ ! -f "$src" ]; then
    echo "build-console: $src is missing after npm ci" >&2
    exit 1
  fi
  cp "$src" "$dst.tmp"
  mv "$dst.tmp" "$dst"
done
echo "console assets built in $vendor"

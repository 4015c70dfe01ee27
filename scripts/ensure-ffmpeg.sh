#!/usr/bin/env bash
# Installs ffmpeg (with ffprobe) when it is missing; sluice uses it only for transcoding and the
# generated test stream.
set -euo pipefail
if command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if command -v apt-get >/dev/null 2>&1; then
  echo "ffmpeg is missing: installing it with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ffmpeg
else
  echo "ffmpeg is missing. Install it with your package manager (e.g. 'brew install ffmpeg'," >&2
  echo "'dnf install ffmpeg'), or point SLUICE_FFMPEG at an ffmpeg binary, then run make again." >&2
  exit 1
fi

#!/usr/bin/env bash
# Captures the libsrt sessions the crypt tests decrypt (see README.md in this folder).
# Needs ffmpeg, srt-live-transmit (libsrt 1.5.1) and tshark; run as a user that may capture on lo.
# Usage: bash capture.sh   (from this folder; rewrites the *.pcap files here)
set -euo pipefail
cd "$(dirname "$0")"

pass='sluice-crypt-test'    # the passphrase of every capture; the tests use it
wrong='not-the-passphrase'  # the other side's passphrase in the bad-secret capture
srtport=47010               # SRT port captured on 127.0.0.1
udpport=47011               # where ffmpeg sends the clip to the sending srt-live-transmit

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The clip: 2 s of testsrc and a 1 kHz sine, about 1 Mbit/s, MPEG-TS.
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i sine=frequency=1000:sample_rate=48000 \
  -t 2 -c:v libx264 -preset ultrafast -b:v 900k -g 25 -c:a aac -b:a 64k \
  -f mpegts "$work/clip.ts"

# capture NAME COUNT PKTSIZE LISTENER-URI-QUERY CALLER-URI-QUERY DIRECTION
# DIRECTION "up": the caller sends, the listener receives; "down": the listener sends, the caller receives.
capture() {
  local name=$1 count=$2 pktsize=$3 lq=$4 cq=$5 dir=$6
  rm -f "$name.pcap"
  tshark -q -i lo -f "udp port $srtport" -F pcap -w "$work/$name.pcap" -c "$count" -a duration:20 \
    2>"$work/tshark.log" &
  local tsh=$!
  for _ in $(seq 50); do grep -q Capturing "$work/tshark.log" && break; sleep 0.1; done
  if [ "$dir" = up ]; then
    srt-live-transmit -q "srt://:$srtport?mode=listener&$lq" file://con >/dev/null 2>&1 &
    pids+=($!)
    sleep 0.3
    srt-live-transmit -q -chunk:"$pktsize" "udp://127.0.0.1:$udpport" "srt://127.0.0.1:$srtport?$cq" >/dev/null 2>&1 &
    pids+=($!)
  else
    srt-live-transmit -q -chunk:"$pktsize" "udp://127.0.0.1:$udpport" "srt://:$srtport?mode=listener&$lq" >/dev/null 2>&1 &
    pids+=($!)
    sleep 0.3
    srt-live-transmit -q "srt://127.0.0.1:$srtport?$cq" file://con >/dev/null 2>&1 &
    pids+=($!)
  fi
  sleep 0.5
  ffmpeg -hide_banner -loglevel error -re -i "$work/clip.ts" -c copy \
    -f mpegts "udp://127.0.0.1:$udpport?pkt_size=$pktsize" || true
  sleep 0.5
  kill "$tsh" 2>/dev/null || true
  wait "$tsh" || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pids=()
  sleep 0.3
  cp "$work/$name.pcap" "$name.pcap"
  echo "$name.pcap: $(stat -c %s "$name.pcap") bytes"
}

# The caller (sender) chooses the key length; the listener takes it from the KM.
capture aes128 130 1316 "passphrase=$pass" "passphrase=$pass&pbkeylen=16" up
capture aes192 130 1316 "passphrase=$pass" "passphrase=$pass&pbkeylen=24" up
capture aes256 130 1316 "passphrase=$pass" "passphrase=$pass&pbkeylen=32" up
# HSv5: the listener sends, encrypting with the keys of the caller's KM.
capture listener-sends 130 1316 "passphrase=$pass" "passphrase=$pass&pbkeylen=16" down
# Key refresh every 200 packets, announced 50 packets before, with 376-byte payloads (2 TS packets).
# libsrt 1.5.1 sends the second refresh in some runs only: keep a capture with two (see README.md).
# (libsrt 1.5.1 with its GnuTLS/nettle back end aborts the sender with kmrefreshrate=128&kmpreannounce=32.)
capture refresh 800 376 "passphrase=$pass" "passphrase=$pass&pbkeylen=16&kmrefreshrate=200&kmpreannounce=50" up
# Without enforced encryption a listener answers a KM it cannot open with the short KMRSP (KM state).
capture badsecret 12 1316 "passphrase=$wrong&enforcedencryption=false" "passphrase=$pass&enforcedencryption=false" up
capture nosecret 12 1316 "enforcedencryption=false" "passphrase=$pass&enforcedencryption=false" up

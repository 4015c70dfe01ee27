#!/usr/bin/env bash
# Records libsrt 1.5.1 sessions on loopback into libsrt.pcap (see README.md). Needs tshark,
# ffmpeg built with libsrt, srt-live-transmit and Go (for the lossy relay). Ports 40001-40079.
set -u
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/relay" ../../../link/testdata/lossyrelay
ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i sine=frequency=440 \
  -t 4 -c:v libx264 -b:v 1M -g 25 -c:a aac -f mpegts "$work/in.ts"
in=$work/in.ts
tshark -i lo -f "udp portrange 40001-40079" -w "$work/libsrt.pcap" -q 2>/dev/null &
tsh=$!
sleep 2
stop() { for p in "$@"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
# listen URL starts an srt-live-transmit listener at URL that throws away what it receives; its
# pid is in l.
listen() { srt-live-transmit -q "$1" file://con >/dev/null 2>&1 & l=$!; }
# relay FROM TO LOSS starts the lossy relay from FROM to TO; its pid is in r.
relay() { "$work/relay" -l "$1" -t "$2" -loss "$3" >/dev/null & r=$!; }
# publish SECONDS URL [ffmpeg input options] sends the clip to URL in real time, for at most
# SECONDS.
publish() {
  local secs=$1 url=$2; shift 2
  timeout "$secs" ffmpeg -hide_banner -loglevel error -re "$@" -i "$in" -c copy -f mpegts "$url"
}

# 1. ffmpeg caller with a stream id -> srt-live-transmit listener, no encryption.
listen "srt://127.0.0.1:40001?mode=listener&latency=200"; sleep 0.5
publish 10 "srt://127.0.0.1:40001?streamid=publish/live/cam1&pkt_size=1316&latency=200000"
sleep 1; stop $l

# 2. the same through a relay dropping 5 % of datagrams both ways: NAKs, retransmissions.
listen "srt://127.0.0.1:40011?mode=listener&latency=120"
relay 127.0.0.1:40010 127.0.0.1:40011 0.05; sleep 0.5
publish 10 "srt://127.0.0.1:40010?pkt_size=1316&latency=120000"
sleep 1; stop $l $r

# 3. encrypted, each key length.
port=40020
for kl in 16 24 32; do
  listen "srt://127.0.0.1:$port?mode=listener&passphrase=sluice-secret-1&pbkeylen=$kl"; sleep 0.5
  publish 6 "srt://127.0.0.1:$port?passphrase=sluice-secret-1&pbkeylen=$kl&pkt_size=1316" -t 2
  sleep 1; stop $l
  port=$((port+1))
done

# 4. a wrong passphrase, then none, against a listener with one: both rejected.
listen "srt://127.0.0.1:40030?mode=listener&passphrase=sluice-secret-1"; sleep 0.5
publish 5 "srt://127.0.0.1:40030?passphrase=another-secret&pkt_size=1316&connect_timeout=1000" -t 1
publish 5 "srt://127.0.0.1:40030?pkt_size=1316&connect_timeout=1000" -t 1
stop $l

# 5. an idle caller (UDP input without data): keep-alives, then a shutdown.
listen "srt://127.0.0.1:40040?mode=listener"; sleep 0.5
srt-live-transmit -q udp://127.0.0.1:40049 "srt://127.0.0.1:40040" >/dev/null 2>&1 &
c=$!; sleep 3.5
kill -INT $c; wait $c 2>/dev/null; sleep 0.5; stop $l

# 6. a key refresh every 200 packets (KMREQ/KMRSP as user-defined control packets).
listen "srt://127.0.0.1:40050?mode=listener&passphrase=sluice-secret-1"; sleep 0.5
publish 10 "srt://127.0.0.1:40050?passphrase=sluice-secret-1&pkt_size=1316&kmrefreshrate=200&kmpreannounce=50"
sleep 1; stop $l

# 7. a fast unpaced stream (about 30 MB from stdin) through a relay dropping 3 %: light and
#    small ACKs, long NAK lists.
listen "srt://127.0.0.1:40061?mode=listener&latency=20"
relay 127.0.0.1:40060 127.0.0.1:40061 0.03; sleep 0.5
head -c 30000000 /dev/urandom | timeout 10 srt-live-transmit -q file://con "srt://127.0.0.1:40060?latency=20" >/dev/null 2>&1
sleep 1; stop $l $r

sleep 1
kill -INT $tsh; wait $tsh
cp "$work/libsrt.pcap" "${1:-/tmp/libsrt.pcap}"
echo "capture written to ${1:-/tmp/libsrt.pcap}"

#!/usr/bin/env python3
"""Writes Go fuzz seeds (testdata/fuzz/<Target>/libsrt-*) from a capture made by capture.sh.

Usage: extract.py libsrt.pcap   (run from this folder; needs tshark)
"""
import collections
import os
import subprocess
import sys

pcap = sys.argv[1]
out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e", "udp.payload"],
                     check=True, capture_output=True, text=True).stdout
packets = [bytes.fromhex(line.strip()) for line in out.splitlines() if line.strip()]

def kind(p):
    if len(p) < 16:
        return "short"
    if p[0] & 0x80 == 0:
        kk = (p[4] >> 3) & 3
        if kk:
            return "data-encrypted"
        if p[4] & 0x04:
            return "data-retransmitted"
        return "data-small" if len(p) < 1000 else "data"
    t = ((p[0] & 0x7F) << 8) | p[1]
    names = {0: "handshake", 1: "keepalive", 2: "ack", 3: "nak", 4: "congestion", 5: "shutdown",
             6: "ackack", 7: "dropreq", 8: "peererror", 0x7FFF: "user"}
    return names.get(t, "control-%04x" % t)

# How many distinct packets to keep per kind and length (per kind for data packets).
keep = {"handshake": 4, "nak": 3, "ack": 6, "ackack": 2, "keepalive": 2, "shutdown": 2,
        "user": 4, "data": 2, "data-small": 3, "data-retransmitted": 2, "data-encrypted": 4}
targets = {
    "handshake": ["FuzzParseHandshake", "FuzzParseControl", "FuzzParsePacket"],
    "ack": ["FuzzParseACK", "FuzzParseControl", "FuzzParsePacket"],
    "nak": ["FuzzNAKReader", "FuzzParseControl", "FuzzParsePacket"],
    "user": ["FuzzParseControl", "FuzzParsePacket"],
}
seen = set()
count = collections.Counter()
written = collections.Counter()
for p in packets:
    k = kind(p)
    if p in seen or k not in keep:
        continue
    seen.add(p)
    key = (k, 0 if k.startswith("data") else len(p))
    if count[key] >= keep[k]:
        continue
    count[key] += 1
    if k.startswith("data"):
        names = ["FuzzParseData", "FuzzParsePacket"]
    else:
        names = targets.get(k, ["FuzzParseControl", "FuzzParsePacket"])
    lit = "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\' else "\\x%02x" % b for b in p)
    for t in names:
        d = os.path.join("..", "fuzz", t)
        os.makedirs(d, exist_ok=True)
        name = "libsrt-%s-%d-%d" % (k, len(p), count[key])
        with open(os.path.join(d, name), "w") as f:
            f.write('go test fuzz v1\n[]byte("%s")\n' % lit)
        written[t] += 1
for t, n in sorted(written.items()):
    print(t, n)

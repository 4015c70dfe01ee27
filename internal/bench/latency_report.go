package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Markdown renders the latency comparison: the method, one row per playback, and the CPU of
// the low-latency player against the classic one.
func (o *LatencyOutcome) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, `## Glass-to-glass latency (%s)

Publisher: ffmpeg makes a 1280x720 30 fps test picture at its pace (`+"`realtime`"+`), sets each frame's
timestamp to the wall clock as it leaves that filter and draws it on the frame as a row of 27 blocks of
40 px (a marker, 24 bits of the time in milliseconds modulo 2^24 in Gray code, a parity block, a marker:
internal/bench/stamp.go); H.264 as the bench clip (High, veryfast, 3850 kbit/s) but with a key frame every
second and `+"`-tune zerolatency`"+`, AAC 128 kbit/s, published over SRT (200 ms latency) to the player's SRT
listen input, or to the reference's. Each arm starts a fresh sluice (or the reference) and waits until the
HLS playlist lists two segments. Then headless Chromium plays it with hls.js (and then with dash.js), %v
each after playback starts; about every 100 ms, on a displayed frame (requestVideoFrameCallback), the page
(testdata/player/stamp.js) copies the blocks onto a canvas, decodes them and records Date.now() − stamp:
the publisher and the browser share this machine's clock. Stalls are the video element's waiting events
after playback began. CPU is sluice's (with its children) over its playbacks, as in the other scenarios.
One run of each arm; the figures are over that run's reads. The goal of issue 16 is low-latency HLS
p50 ≤ 1.5 s and DASH ≤ 2.0 s, no stalls, CPU ≤ 1.2× the classic player.

`, LatencyScenario, o.Window)
	b.WriteString("| player | setup |\n|---|---|\n")
	for _, a := range o.Arms {
		fmt.Fprintf(&b, "| %s | %s |\n", a.Name, a.Setup)
	}
	b.WriteString("\n| player | played as | with | p50 (s) | p95 (s) | stalls | stamps read | unreadable | note |\n|---|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range o.Results {
		p50, p95 := math.NaN(), math.NaN()
		if len(r.Latencies) > 0 {
			p50, p95 = r.Quantile(0.5).Seconds(), r.Quantile(0.95).Seconds()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %d | %d | %s |\n", r.Arm, strings.ToUpper(r.Kind), r.Player,
			num(p50), num(p95), r.Stalls, len(r.Latencies), r.Undecoded, oneLine(r.Err))
	}
	classic, okC := o.CPU["classic"]
	ll, okL := o.CPU["low-latency"]
	if okC && okL {
		ratio := math.NaN()
		if classic.CPUPercent() > 0 {
			ratio = ll.CPUPercent() / classic.CPUPercent()
		}
		fmt.Fprintf(&b, "\nCPU of sluice over its playbacks (%% of one core): low-latency %s, classic %s, ratio %s (goal ≤ 1.2); peak RSS %d MiB and %d MiB.\n",
			num(ll.CPUPercent()), num(classic.CPUPercent()), num(ratio), ll.PeakRSS>>20, classic.PeakRSS>>20)
	}
	if len(o.Errors) > 0 {
		b.WriteString("\nFailed runs:\n\n")
		for _, e := range o.Errors {
			b.WriteString("- " + oneLine(e) + "\n")
		}
	}
	return b.String()
}

// latencyWindowDefault is how long each playback of the latency comparison lasts.
const latencyWindowDefault = 60 * time.Second

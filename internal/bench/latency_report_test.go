package bench

import (
	"strings"
	"testing"
	"time"
)

// TestLatencyMarkdown: quantiles are nearest-rank over the reads, a playback without reads shows
// n/a and its reason, and the CPU line gives the low-latency player's share over the classic one.
func TestLatencyMarkdown(t *testing.T) {
	var ms []time.Duration
	for i := 1; i <= 100; i++ {
		ms = append(ms, time.Duration(i)*10*time.Millisecond)
	}
	r := LatencyResult{Arm: "classic", Kind: "hls", Player: "hls.js 1.7.4", Latencies: ms, Stalls: 2, Undecoded: 1}
	if p50, p95 := r.Quantile(0.5), r.Quantile(0.95); p50 != 500*time.Millisecond || p95 != 950*time.Millisecond {
		t.Fatalf("p50 %v p95 %v, want 500ms 950ms", p50, p95)
	}
	o := &LatencyOutcome{Window: time.Minute, Arms: LatencyArms(), Results: []LatencyResult{
		r, {Arm: "low-latency", Kind: "dash", Player: "dash.js 5.2.1", Err: "did not start playing within 20 s"},
	}, CPU: map[string]Usage{
		"classic":     {CPU: 6 * time.Second, Wall: time.Minute},
		"low-latency": {CPU: 9 * time.Second, Wall: time.Minute},
	}}
	md := o.Markdown()
	for _, want := range []string{
		"| classic | HLS | hls.js 1.7.4 | 0.500 | 0.950 | 2 | 100 | 1 |  |",
		"| low-latency | DASH | dash.js 5.2.1 | n/a | n/a | 0 | 0 | 0 | did not start playing within 20 s |",
		"low-latency 15.0, classic 10.0, ratio 1.50",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

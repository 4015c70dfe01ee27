package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

// TestLowLatencyPlayer: a low-latency player (low_latency, default part_duration_ms) of the
// test stream transcoded to a 1 s GOP, with 1 s fragments, serves LL-HLS (parts, preload
// hint, blocking reload by part) and its watch page asks for hls.js lowLatencyMode; hls.js
// in lowLatencyMode plays it 22 s in headless Chromium without a stall (the log shows
// hls.latency), and DASH from the same segments still probes.
func TestLowLatencyPlayer(t *testing.T) {
	browser.Require(t)
	ts := startFFmpegServer(t)
	vodPort := testutil.FreePort(t)
	body := lowLatencyTestVideo("ll", vodPort)
	id := ts.create("vod", body)
	base := fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/", vodPort, id, id)

	testutil.Eventually(t, 40*time.Second, "playlist served", func() bool {
		code, _ := httpGet(t, base+"index.m3u8")
		return code == http.StatusOK
	})
	_, pl := httpGet(t, base+"index.m3u8")
	// The default 333 ms parts are 8 frames of 40 ms: PART-TARGET says 320 ms, and the
	// hold-back is three of them.
	for _, tag := range []string{"#EXT-X-VERSION:9", "#EXT-X-PART-INF:PART-TARGET=0.320", "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES",
		"PART-HOLD-BACK=0.960", "#EXT-X-PART:", "#EXT-X-PRELOAD-HINT:TYPE=PART"} {
		if !strings.Contains(pl, tag) {
			t.Errorf("low-latency playlist lacks %s:\n%s", tag, pl)
		}
	}
	var part string
	for _, l := range strings.Split(pl, "\n") {
		if strings.HasPrefix(l, "#EXT-X-PART:") {
			_, uri, _ := strings.Cut(l, `URI="`)
			part, _, _ = strings.Cut(uri, `"`)
		}
	}
	if code, data := httpGet(t, base+part); code != http.StatusOK || !strings.Contains(data, "moof") {
		t.Errorf("part %s: %d, %d bytes", part, code, len(data))
	}
	if code, watch := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", vodPort)); code != http.StatusOK || !strings.Contains(watch, `data-low-latency="true"`) {
		t.Errorf("watch page: %d, no data-low-latency=\"true\"", code)
	}
	hasCodecs(t, base+"index.mpd")

	res := browser.Play(t, "hls", base+"index.m3u8", 22*time.Second, browser.LowLatency())
	if l := res.Latency; l != nil {
		t.Logf("hls.js latency on a low-latency player: last %.2f s, mean %.2f s, max %.2f s", l.Last, l.Mean, l.Max)
	}
	if !res.OK || res.PlayedSeconds < 18 || res.Stalls != 0 || res.Latency == nil || !res.Latency.LowLatencyMode {
		t.Errorf("hls.js lowLatencyMode: %s; warnings %q", res, res.Warnings)
	}

	// dash.js from the same segments: the MPD's availabilityTimeComplete="false" turns its
	// low-latency mode on, the ServiceDescription sets its target (3 parts + 500 ms), and it
	// fetches the segment in progress as it is written (chunked).
	res = browser.Play(t, "dash", base+"index.mpd", 22*time.Second, browser.LowLatency())
	if l := res.Latency; l != nil {
		t.Logf("dash.js latency on a low-latency player: last %.2f s, mean %.2f s, max %.2f s, target %v", l.Last, l.Mean, l.Max, derefOr(l.Target))
	}
	if !res.OK || res.PlayedSeconds < 18 || res.Stalls != 0 || res.Latency == nil || !res.Latency.LowLatencyMode {
		t.Errorf("dash.js low-latency mode: %s; warnings %q", res, res.Warnings)
	}
	// The target is the ServiceDescription's 1.499 s (3 × 333 ms + 500 ms): dash.js plays
	// about there, far under a classic player's 3 fragment sizes behind.
	if l := res.Latency; l != nil && (l.Target == nil || *l.Target > 2 || l.Mean > 3.5) {
		t.Errorf("dash.js latency: target %v s, mean %.2f s; want the MPD's target (about 1.5 s) and playback near it", derefOr(l.Target), l.Mean)
	}
}

// derefOr is *p, or -1 for nil (for logs).
func derefOr(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

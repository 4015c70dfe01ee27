package app

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// sourceKbps is the total bitrate of testutil.Source(1000): 1000 kbit/s video, 64 kbit/s audio.
const sourceKbps = 1064.0

// stat is one entry of getStat.
type stat struct {
	ID      string  `json:"id"`
	Bitrate float64 `json:"bitrate"`
	FPS     float64 `json:"fps"`
	BytesIn int64   `json:"bytes_in"`
	State   string  `json:"state"`
}

func (ts *testServer) stat(module, id string) stat {
	ts.t.Helper()
	var all []stat
	ts.call("/api/"+module+"/getStat", nil, http.StatusOK, &all)
	for _, s := range all {
		if s.ID == id {
			return s
		}
	}
	ts.t.Fatalf("%s getStat has no %s", module, id)
	return stat{}
}

// checkBitrate waits for media, then takes the median of several getStat samples and checks
// it is within 15 % of the source's bitrate, and the frame rate near 25.
func (ts *testServer) checkBitrate(module, id string) {
	ts.t.Helper()
	testutil.Eventually(ts.t, 30*time.Second, module+" "+id+" receives media", func() bool {
		return ts.stat(module, id).BytesIn > 0
	})
	time.Sleep(3 * time.Second) // a full 2 s averaging window
	var rates, fps []float64
	for range 8 {
		s := ts.stat(module, id)
		rates = append(rates, s.Bitrate)
		fps = append(fps, s.FPS)
		time.Sleep(500 * time.Millisecond)
	}
	sort.Float64s(rates)
	sort.Float64s(fps)
	med, medFPS := rates[len(rates)/2], fps[len(fps)/2]
	ts.t.Logf("%s %s: median bitrate %.0f kbit/s (source %.0f), fps %.1f", module, id, med, sourceKbps, medFPS)
	if med < 0.85*sourceKbps || med > 1.15*sourceKbps {
		ts.t.Errorf("%s %s: bitrate %.0f kbit/s, want within 15 %% of %.0f (samples %v)", module, id, med, sourceKbps, rates)
	}
	if medFPS < 20 || medFPS > 30 {
		ts.t.Errorf("%s %s: fps %.1f, want about 25", module, id, medFPS)
	}
}

func (ts *testServer) create(module string, body map[string]any) string {
	ts.t.Helper()
	var c created
	ts.call("/api/"+module+"/create", body, http.StatusCreated, &c)
	return c.ID
}

func playerBody(name string, port int, input map[string]any) map[string]any {
	return map[string]any{
		"vod_name": name, "vod_port": port, "input": input,
		"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 2, "hls_fragment_length": 20, "dash_fragment_size": 2, "dash_fragment_length": 20,
	}
}

func restreamBody(name string, input map[string]any) map[string]any {
	return map[string]any{
		"restream_name": name, "input": input,
		"output": map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://127.0.0.1:9"},
	}
}

func recordingBody(name string, input map[string]any) map[string]any {
	return map[string]any{"recording_name": name, "recording_type": "RECORDING_STREAM_TO_FILE", "input": input, "output_format": "mp4"}
}

func listenInput(kind string, port int, transport string) map[string]any {
	return map[string]any{"input_type": kind, "input_stream_listen_port": map[string]any{"port": port, "transport": transport}}
}

func urlInput(kind, url string) map[string]any {
	return map[string]any{"input_type": kind, "input_stream_url": url}
}

func rtmpURL(port int, key string) string {
	return fmt.Sprintf("rtmp://127.0.0.1:%d/live/%s", port, key)
}

func storageKey(port int, transport string) storage.PortKey {
	return storage.PortKey{Port: port, Transport: transport}
}

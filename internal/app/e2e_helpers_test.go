package app

import (
	"fmt"
	"net/http"
	"testing"
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

	Discontinuities int64        `json:"discontinuities"`
	State           string       `json:"state"`
	SRT             []srtLinkDoc `json:"srt"`
}

// srtLinkDoc is an SRT connection's statistics in getStat, getActiveStreams and the records.
type srtLinkDoc struct {
	Role            string  `json:"role"`
	Peer            string  `json:"peer"`
	RTTMs           float64 `json:"rtt_ms"`
	LatencyMs       int64   `json:"latency_ms"`
	PeerLatencyMs   int64   `json:"peer_latency_ms"`
	PacketsSent     uint64  `json:"packets_sent"`
	PacketsReceived uint64  `json:"packets_received"`
	BytesSent       uint64  `json:"bytes_sent"`
	BytesReceived   uint64  `json:"bytes_received"`
	RecvKbps        float64 `json:"recv_kbps"`
	SendKbps        float64 `json:"send_kbps"`
}

// srtLinkOf waits until getStat shows the process's SRT link in role with data flowing, and
// returns it.
func (ts *testServer) srtLinkOf(module, id, role string) srtLinkDoc {
	ts.t.Helper()
	var got srtLinkDoc
	testutil.Eventually(ts.t, 30*time.Second, module+" "+id+" SRT "+role+" link with data", func() bool {
		for _, l := range ts.stat(module, id).SRT {
			if l.Role == role && (l.PacketsReceived > 0 || l.PacketsSent > 0) {
				got = l
				return true
			}
		}
		return false
	})
	return got
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

// checkBitrate waits for media, then for the reported bitrate to settle within 15 % of the
// source's for three samples in a row, a second apart, with the frame rate near 25. A publisher
// that started behind real time (a loaded machine, a peer that waited for its client) bursts
// until it caught up; the settled rate is what the input really carries.
func (ts *testServer) checkBitrate(module, id string) {
	ts.t.Helper()
	ts.checkBitrateOf(module, id, sourceKbps)
}

// checkBitrateOf is checkBitrate against a given source bitrate (kbit/s).
func (ts *testServer) checkBitrateOf(module, id string, sourceKbps float64) {
	ts.t.Helper()
	testutil.Eventually(ts.t, 30*time.Second, module+" "+id+" receives media", func() bool {
		return ts.stat(module, id).BytesIn > 0
	})
	var seen []string
	inRow := 0
	deadline := time.Now().Add(45 * time.Second)
	for inRow < 3 {
		if time.Now().After(deadline) {
			ts.t.Fatalf("%s %s: bitrate never settled within 15 %% of %.0f kbit/s at about 25 fps; samples %v", module, id, sourceKbps, seen)
		}
		time.Sleep(time.Second)
		s := ts.stat(module, id)
		seen = append(seen, fmt.Sprintf("%.0f@%.1f", s.Bitrate, s.FPS))
		if s.Bitrate >= 0.85*sourceKbps && s.Bitrate <= 1.15*sourceKbps && s.FPS >= 20 && s.FPS <= 30 {
			inRow++
		} else {
			inRow = 0
		}
	}
	ts.t.Logf("%s %s: bitrate settled at %s kbit/s@fps (source %.0f kbit/s); samples %v", module, id, seen[len(seen)-1], sourceKbps, seen)
}

func (ts *testServer) create(module string, body map[string]any) string {
	ts.t.Helper()
	return ts.calls().Create(module, body)
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

// testVideoPlayer is the body of a player of the generated test stream (640x360, 25 fps,
// 800 kbit/s) on port, listing 12 s of media.
func testVideoPlayer(name string, port int) map[string]any {
	body := playerBody(name, port, map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO",
		"resolution_width": 640, "resolution_height": 360, "encoding_rate": 25, "test_video_bitrate": 800})
	body["hls_fragment_length"], body["dash_fragment_length"] = 12, 12
	return body
}

// lowLatencyTestVideo is testVideoPlayer in low-latency mode: 1 s fragments, the stream
// transcoded to a 1 s GOP (zerolatency).
func lowLatencyTestVideo(name string, port int) map[string]any {
	body := testVideoPlayer(name, port)
	body["hls_fragment_size"], body["dash_fragment_size"] = 1, 1
	body["low_latency"] = true
	body["transcoding"] = map[string]any{"video_transcoding": "libx264", "gop": 25, "preset": "ultrafast",
		"tune": "zerolatency", "output_video_bitrate": 800}
	return body
}

// waitBound waits until a listener holds the port (binding it fails).
func waitBound(t *testing.T, port int, transport string) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, "listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(port, transport))
	})
}

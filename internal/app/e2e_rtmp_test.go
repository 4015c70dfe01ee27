package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestRTMPServerModuleInput(t *testing.T) {
	ts := startFFmpegServer(t)

	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	rs := ts.create("restream", restreamBody("cam1-out", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam1"}))

	// A second process reads the same stream as from a hardware encoder (timestamp repair on).
	hw := ts.create("recording", recordingBody("cam1-hw", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_HARDWARE", "input_server_id": srv, "input_stream_id": "cam1"}))

	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam1"))...)
	ts.checkBitrate("restream", rs)
	ts.checkBitrate("recording", hw)

	var streams []map[string]any
	ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
	if len(streams) != 1 || streams[0]["stream_id"] != "cam1" || !strings.HasPrefix(streams[0]["publisher"].(string), "127.0.0.1:") {
		t.Fatalf("active streams %v", streams)
	}
	if b, _ := streams[0]["bitrate"].(float64); b < 0.85*sourceKbps || b > 1.15*sourceKbps {
		t.Errorf("active stream bitrate %v kbit/s, want about %v", streams[0]["bitrate"], sourceKbps)
	}
	pub.Stop()
	testutil.Eventually(t, 15*time.Second, "publisher gone from getActiveStreams", func() bool {
		ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
		return len(streams) == 0
	})
}

// TestRTMPServerModulePasswords: a module with publish and play passwords refuses an encoder
// without the publish password or with another, and takes one that gives it, under the bare key
// cam1. A restream reads cam1 from the module and relays it into the same module in process
// (OUTPUT_TYPE_LOCAL_RTMP_URL, which needs no password, its key's query cut off) as cam2; an
// RTMP player of cam2 needs the play password. No password shows in getActiveStreams, the
// publisher events or the logs.
func TestRTMPServerModulePasswords(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts, logs := startServerLogging(t, "--log-level", "debug")
	t.Cleanup(ts.stop)
	const pubPass, playPass, wrong = "enc0der-Pass.1", "v1ewer~Pass_22", "wr0ng-Pass.333"
	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "guarded", "server_port": port,
		"server_publish_password": pubPass, "server_play_password": playPass})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	events := ts.follow("id="+srv+"&type=publisher_connected,publisher_disconnected", "")
	defer events.close()
	ts.create("restream", map[string]any{"restream_name": "relay",
		"input": map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam1"},
		// The key written as for OBS: its query is cut off in process.
		"output": map[string]any{"output_type": "OUTPUT_TYPE_LOCAL_RTMP_URL", "output_stream_url": rtmpURL(port, ""),
			"output_stream_key": "cam2?password=" + pubPass}})

	for _, url := range []string{rtmpURL(port, "cam1"), rtmpURL(port, "cam1?password="+wrong)} {
		if err := testutil.FFmpeg(t, append(testutil.Source(1000), "-t", "3", "-f", "flv", url)...).Wait(30 * time.Second); err == nil {
			t.Fatalf("an encoder published to %s", url)
		}
	}
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam1?password="+pubPass))...)

	// Both keys are published: cam1 by the encoder, cam2 by the restream, in process.
	var streams []map[string]any
	testutil.Eventually(t, 30*time.Second, "cam1 and cam2 published", func() bool {
		ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
		return len(streams) == 2
	})
	raw, _ := json.Marshal(streams)
	if !strings.Contains(string(raw), `"stream_id":"cam1"`) || !strings.Contains(string(raw), `"stream_id":"cam2"`) {
		t.Fatalf("active streams %s", raw)
	}
	got := events.upTo(10*time.Second, "two publisher_connected", nil, 2, isType("publisher_connected"))

	// An RTMP player of the relayed stream needs the play password.
	play := func(query string) error {
		return testutil.FFmpeg(t, "-i", rtmpURL(port, "cam2"+query), "-t", "2", "-f", "null", "-").Wait(40 * time.Second)
	}
	if err := play(""); err == nil {
		t.Fatal("played without the play password")
	}
	if err := play("?password=" + pubPass); err == nil {
		t.Fatal("played with the publish password")
	}
	if err := play("?password=" + playPass); err != nil {
		t.Fatalf("play with the play password: %v", err)
	}

	seen, _ := json.Marshal(got)
	for _, secret := range []string{pubPass, playPass, wrong} {
		if strings.Contains(string(seen), secret) || strings.Contains(logs.String(), secret) {
			t.Fatalf("password %q in the events or logs", secret)
		}
	}
	if !strings.Contains(logs.String(), "rtmp: publish refused") || !strings.Contains(logs.String(), "rtmp: play refused") {
		t.Fatal("no refusal logged")
	}
}

func TestRTMPListenInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	vod := ts.create("vod", playerBody("rtmp-listen", testutil.FreePort(t), listenInput("INPUT_TYPE_RTMP_LISTEN", port, "tcp")))
	waitBound(t, port, "TCP")
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "anything"))...)
	ts.checkBitrate("vod", vod)
}

func TestRTMPURLInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	// ffmpeg is the remote RTMP server here; sluice plays from it.
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", "-listen", "1", rtmpURL(port, "feed"))...)
	rec := ts.create("recording", recordingBody("pull", urlInput("INPUT_TYPE_RTMP_URL", rtmpURL(port, "feed"))))
	ts.checkBitrate("recording", rec)
}

// TestRTMPListenInputPassword: an RTMP listen input whose address sets a password refuses an
// encoder without it or with another, and takes one that gives it, under any app and key. The
// password shows in no log line or event; the record reads back as stored, as an SRT listen
// input's passphrase does.
func TestRTMPListenInputPassword(t *testing.T) {
	const secret, wrong = "l1sten-Pass.42", "l1sten-Pass.43"
	checkListenCredentials(t, "INPUT_TYPE_RTMP_LISTEN", "rtmp://0.0.0.0:PORT/live/cam?password="+secret, "rtmp: publish refused",
		[][]string{
			{"-f", "flv", "rtmp://127.0.0.1:PORT/live/cam"},
			{"-f", "flv", "rtmp://127.0.0.1:PORT/live/cam?password=" + wrong},
		},
		[]string{"-f", "flv", "rtmp://127.0.0.1:PORT/other/key?password=" + secret},
		secret, wrong)
}

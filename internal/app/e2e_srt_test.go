package app

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// srtURL is an SRT address for ffmpeg, whose latency option is in microseconds.
func srtURL(port int, query string) string {
	return fmt.Sprintf("srt://127.0.0.1:%d?latency=200000&%s", port, query)
}

func TestSRTServerModule(t *testing.T) {
	ts := startFFmpegServer(t)
	dir := t.TempDir()
	port, outPort := testutil.FreePort(t), testutil.FreePort(t)
	srv := ts.create("srt-servers", map[string]any{"server_name": "Studio A", "server_port": port})
	waitState(t, ts, "/api/srt-servers/getById", srv, "running")

	// A restream reads the published stream and sends it out over SRT to an ffmpeg listener.
	outFile := filepath.Join(dir, "out.ts")
	recv := testutil.FFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?mode=listener", outPort), "-c", "copy", "-t", "6", outFile)
	rs := ts.create("restream", map[string]any{"restream_name": "srt-relay",
		"input":  map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srv, "input_stream_id": "publisher/studio-a/cam1"},
		"output": map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d", outPort)}})
	// A second process reads the same stream as from a hardware encoder (timestamp repair on),
	// named in the Haivision stream-id form.
	hw := ts.create("recording", recordingBody("srt-hw", map[string]any{
		"input_type": "INPUT_TYPE_SRT_HARDWARE", "input_server_id": srv, "input_stream_id": "#!::r=cam1,m=publish"}))
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "streamid=publisher/studio-a/cam1"))...)
	// The restream's SRT output shows its link while its receiver (6 s) reads: the receiver's
	// address, packets sent.
	if out := ts.srtLinkOf("restream", rs, "output"); out.Peer != fmt.Sprintf("127.0.0.1:%d", outPort) || out.BytesSent == 0 {
		t.Fatalf("restream output link %+v", out)
	}
	ts.checkBitrate("restream", rs)
	ts.checkBitrate("recording", hw)

	var streams []struct {
		StreamID  string     `json:"stream_id"`
		Publisher string     `json:"publisher"`
		RTTMs     *float64   `json:"rtt_ms"`
		SRT       srtLinkDoc `json:"srt"`
	}
	ts.call("/api/srt-servers/getActiveStreams", map[string]any{"id": srv}, http.StatusOK, &streams)
	if len(streams) != 1 || !strings.Contains(streams[0].StreamID, "cam1") || !strings.HasPrefix(streams[0].Publisher, "127.0.0.1:") ||
		streams[0].RTTMs == nil || streams[0].SRT.Role != "publisher" || streams[0].SRT.Peer != streams[0].Publisher ||
		streams[0].SRT.PacketsReceived == 0 || streams[0].SRT.LatencyMs != 200 {
		t.Fatalf("active streams %+v", streams)
	}
	if err := recv.Wait(60 * time.Second); err != nil {
		t.Fatalf("SRT output receiver: %v", err)
	}
	checkReceived(t, outFile)

	// A player of the module gets the same stream with a receiver stream id.
	playFile := filepath.Join(dir, "play.ts")
	if err := testutil.FFmpeg(t, "-i", srtURL(port, "streamid=receiver/studio-a/cam1"), "-c", "copy", "-t", "6", playFile).Wait(60 * time.Second); err != nil {
		t.Fatalf("SRT receiver: %v", err)
	}
	checkReceived(t, playFile)
}

func TestSRTListenInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	vod := ts.create("vod", playerBody("srt-listen", testutil.FreePort(t), listenInput("INPUT_TYPE_SRT_LISTEN", port, "udp")))
	testutil.Eventually(t, 15*time.Second, "SRT listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(port, "UDP"))
	})
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "streamid=anything"))...)
	ts.checkBitrate("vod", vod)
	// The input's link: the publisher's packets, the negotiated latency (200 ms both sides),
	// and the rate near the source's; the record shows it too.
	in := ts.srtLinkOf("vod", vod, "input")
	if in.LatencyMs != 200 || in.RecvKbps < 0.8*sourceKbps || !strings.HasPrefix(in.Peer, "127.0.0.1:") {
		t.Fatalf("SRT listen input link %+v", in)
	}
	var rec struct {
		SRT []srtLinkDoc `json:"srt"`
	}
	ts.call("/api/vod/getById", map[string]any{"id": vod}, http.StatusOK, &rec)
	if len(rec.SRT) != 1 || rec.SRT[0].Role != "input" || rec.SRT[0].PacketsReceived == 0 {
		t.Fatalf("player record's srt %+v", rec.SRT)
	}
}

// TestSRTURLOptionsChecked: an SRT address with an option the stack does not know, or a
// listen input asked to call, is refused at create with 400 naming it; known ones pass.
func TestSRTURLOptionsChecked(t *testing.T) {
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	body := restreamBody("typo", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"})
	body["output"] = map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": "srt://127.0.0.1:9000?latncy=200&streamid=x"}
	ts.call("/api/restream/create", body, http.StatusBadRequest, &e)
	if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "output_stream_url") || !strings.Contains(e.Error.Message, "latncy") {
		t.Fatalf("unknown option: %+v", e)
	}
	ts.call("/api/vod/create", playerBody("caller", testutil.FreePort(t), map[string]any{"input_type": "INPUT_TYPE_SRT_LISTEN",
		"input_stream_listen_port": map[string]any{"port": testutil.FreePort(t), "transport": "UDP"},
		"input_stream_url":         "srt://:9000?mode=caller"}), http.StatusBadRequest, &e)
	if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") || !strings.Contains(e.Error.Message, "mode=caller") {
		t.Fatalf("listen input in caller mode: %+v", e)
	}
	ts.create("recording", recordingBody("known", urlInput("INPUT_TYPE_SRT_URL",
		"srt://127.0.0.1:9000?latency=300&rcvbuf=4000000&peeridletimeo=3000&passphrase=0123456789&pbkeylen=24")))
}

func TestSRTURLInput(t *testing.T) {
	ts := startFFmpegServer(t)
	port := testutil.FreePort(t)
	// ffmpeg listens; sluice calls it.
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(port, "mode=listener"))...)
	rec := ts.create("recording", recordingBody("srt-call", urlInput("INPUT_TYPE_SRT_URL", fmt.Sprintf("srt://127.0.0.1:%d?latency=200", port))))
	ts.checkBitrate("recording", rec)
	if in := ts.srtLinkOf("recording", rec, "input"); in.Peer != fmt.Sprintf("127.0.0.1:%d", port) || in.LatencyMs != 200 {
		t.Fatalf("SRT caller input link %+v", in)
	}
}

// TestSRTRendezvous: a restream sends what it pulls from ffmpeg to an SRT rendezvous peer, and
// that peer is a recording whose input is the other end of the rendezvous, with a passphrase:
// the recording gets the source's bitrate, and both links show the other's bound address. A
// third record binding the same local port fails with the bind error as its last_error.
func TestSRTRendezvous(t *testing.T) {
	ts := startFFmpegServer(t)
	src, a, b := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(src, "mode=listener"))...)
	const pass = "passphrase=rendezvous-secret"
	body := restreamBody("rdv-out", urlInput("INPUT_TYPE_SRT_URL", fmt.Sprintf("srt://127.0.0.1:%d?latency=200", src)))
	body["output"] = map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL",
		"output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d?mode=rendezvous&localport=%d&latency=200&%s", b, a, pass)}
	rs := ts.create("restream", body)
	rec := ts.create("recording", recordingBody("rdv-in", urlInput("INPUT_TYPE_SRT_URL",
		fmt.Sprintf("srt://127.0.0.1:%d?mode=rendezvous&port=%d&latency=300&%s", a, b, pass))))
	ts.checkBitrate("recording", rec)
	if in := ts.srtLinkOf("recording", rec, "input"); in.Peer != fmt.Sprintf("127.0.0.1:%d", a) || in.LatencyMs != 300 {
		t.Errorf("rendezvous input link %+v, want the peer at port %d and 300 ms", in, a)
	}
	if out := ts.srtLinkOf("restream", rs, "output"); out.Peer != fmt.Sprintf("127.0.0.1:%d", b) || out.LatencyMs != 300 {
		t.Errorf("rendezvous output link %+v, want the peer at port %d and 300 ms (the larger wish)", out, b)
	}
	// The bound port is no port claim: a second record binding it fails and says why.
	dup := ts.create("recording", recordingBody("rdv-dup", urlInput("INPUT_TYPE_SRT_URL",
		fmt.Sprintf("srt://127.0.0.1:%d?mode=rendezvous&localport=%d", a, b))))
	var r struct {
		LastError string `json:"last_error"`
	}
	testutil.Eventually(t, 20*time.Second, "the bind error in the second record's last_error", func() bool {
		ts.call("/api/recording/getById", map[string]any{"id": dup}, http.StatusOK, &r)
		return strings.Contains(r.LastError, "address already in use")
	})
}

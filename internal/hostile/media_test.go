package hostile

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// Real peers after an attack.
const (
	// publishKbps is the real publisher's video bitrate (testutil.Source: 640x360, 25 fps, a
	// key frame a second, and AAC).
	publishKbps = 500
	// playSeconds is how much media the real player (or SRT receiver) reads.
	playSeconds = 3
	// minVideoFrames is the fewest decodable video frames playSeconds of 25 fps must hold:
	// playback may start a little late or end a little early.
	minVideoFrames = 40
	// minAudioFrames is the fewest AAC frames (1 024 samples at 48 kHz: 47 a second) likewise.
	minAudioFrames = 60
	// mediaTimeout bounds each step of the proof (playlist ready, playback finished).
	mediaTimeout = 45 * time.Second
)

// playerBody is a player of input whose playlist is ready quickly: 1 s fragments, the
// playlist once 2 exist, a 6 s window; DASH shares HLS's segments.
func playerBody(name string, port int, input map[string]any) map[string]any {
	return map[string]any{
		"vod_name": name, "vod_port": port, "input": input,
		"initial_live_manifest_size": 2, "live_sync_duration_count": 2,
		"hls_fragment_size": 1, "hls_fragment_length": 6, "dash_fragment_size": 1, "dash_fragment_length": 6,
	}
}

// listenInput is a listen input on port.
func listenInput(kind string, port int, transport string) map[string]any {
	return map[string]any{"input_type": kind, "input_stream_listen_port": map[string]any{"port": port, "transport": transport}}
}

// tinyTestVideo is a test-stream input cheap enough to run dozens of at once (an ffmpeg child
// each).
func tinyTestVideo() map[string]any {
	return map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 160,
		"resolution_height": 90, "encoding_rate": 10, "test_video_bitrate": 100}
}

// hlsURL is a player's HLS playlist on its own port.
func hlsURL(id string, vodPort int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/index.m3u8", vodPort, id, id)
}

// publish starts a real publisher: ffmpeg encoding testutil.Source to the output args. It
// stops when the test ends (or when the caller stops it).
func publish(t *testing.T, out ...string) *testutil.Process {
	t.Helper()
	return testutil.FFmpeg(t, append(testutil.Source(publishKbps), out...)...)
}

// rtmpOut is ffmpeg's output arguments for an RTMP publisher.
func rtmpOut(port int, key string) []string {
	return []string{"-f", "flv", fmt.Sprintf("rtmp://127.0.0.1:%d/live/%s", port, key)}
}

// srtOut is ffmpeg's output arguments for an SRT publisher (libsrt; latency in microseconds).
func srtOut(port int, query string) []string {
	return []string{"-f", "mpegts", fmt.Sprintf("srt://127.0.0.1:%d?latency=200000&%s", port, query)}
}

// udpOut is ffmpeg's output arguments for an MPEG-TS publisher over UDP.
func udpOut(port int) []string {
	return []string{"-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port)}
}

// playHLS proves that the player plays: its playlist lists segments, and ffmpeg reading it for
// playSeconds gets decodable H.264 640x360 and AAC (the publisher's). The publisher must be
// running.
func playHLS(t *testing.T, id string, vodPort int) {
	t.Helper()
	started := time.Now()
	url := hlsURL(id, vodPort)
	var last string
	deadline := time.Now().Add(mediaTimeout)
	for {
		code, body := get(url)
		if code == http.StatusOK && strings.Count(body, "#EXTINF") >= 2 {
			break
		}
		last = fmt.Sprintf("%d %.200s", code, body)
		if time.Now().After(deadline) {
			t.Fatalf("player %s: no playlist with segments within %v; last answer %s", id, mediaTimeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := filepath.Join(t.TempDir(), "played.ts")
	if err := testutil.FFmpeg(t, "-i", url, "-t", strconv.Itoa(playSeconds), "-c", "copy", "-f", "mpegts", out).Wait(mediaTimeout); err != nil {
		t.Fatalf("player %s: ffmpeg reading %s: %v", id, url, err)
	}
	checkMedia(t, out)
	t.Logf("a real player read %d s of player %s (%v from the publisher's start to the end of playback)", playSeconds, id, time.Since(started).Round(100*time.Millisecond))
}

// receiveSRT proves that an SRT receiver (ffmpeg with libsrt) gets the stream at url.
func receiveSRT(t *testing.T, url string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "received.ts")
	if err := testutil.FFmpeg(t, "-i", url, "-t", strconv.Itoa(playSeconds), "-c", "copy", "-f", "mpegts", out).Wait(mediaTimeout); err != nil {
		t.Fatalf("SRT receiver %s: %v", url, err)
	}
	checkMedia(t, out)
}

// checkMedia asserts that file holds decodable H.264 640x360 and AAC: the real publisher's.
func checkMedia(t *testing.T, file string) {
	t.Helper()
	p := testutil.FFprobe(t, file, true)
	var video, audio bool
	var seen []string
	for _, s := range p.Streams {
		n, _ := strconv.Atoi(s.NbFrames)
		seen = append(seen, fmt.Sprintf("%s %s %dx%d %d frames", s.CodecType, s.CodecName, s.Width, s.Height, n))
		switch {
		case s.CodecType == "video" && s.CodecName == "h264" && s.Width == 640 && s.Height == 360 && n >= minVideoFrames:
			video = true
		case s.CodecType == "audio" && s.CodecName == "aac" && n >= minAudioFrames:
			audio = true
		}
	}
	if !video || !audio {
		t.Fatalf("%s: want h264 640x360 (%d frames or more) and aac (%d or more), got %v", filepath.Base(file), minVideoFrames, minAudioFrames, seen)
	}
}

// get fetches url and returns its status and body ("" and 0 when it failed).
func get(url string) (int, string) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// player is a player record the proof after an attack uses.
type player struct {
	id, input string
	port      int // vod_port
	inPort    int // its listen input's port, if any
}

// rtmpPlayer creates a player fed by an RTMP listen input.
func (s *server) rtmpPlayer(name string) player {
	s.t.Helper()
	return s.listenPlayer(name, "INPUT_TYPE_RTMP_LISTEN", "TCP")
}

// listenPlayer creates a player fed by a listen input of type input on a free port (its
// transport TCP or UDP) and waits for it to wait for a publisher.
func (s *server) listenPlayer(name, input, transport string) player {
	s.t.Helper()
	var in int
	id, port := s.createOnPort("vod", func(p int) map[string]any {
		in = testutil.FreePort(s.t)
		return playerBody(name, p, listenInput(input, in, transport))
	})
	s.waitState("vod", id, "waiting", 10*time.Second)
	return player{id: id, input: input, port: port, inPort: in}
}

// prove publishes to the player's RTMP listen input and plays the player.
func (p player) prove(t *testing.T) {
	t.Helper()
	publish(t, rtmpOut(p.inPort, "after")...)
	playHLS(t, p.id, p.port)
}

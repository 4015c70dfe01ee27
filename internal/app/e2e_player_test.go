package app

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// extinfs returns the EXTINF durations of a media playlist.
func extinfs(playlist string) []float64 {
	var out []float64
	for _, l := range strings.Split(playlist, "\n") {
		if v, ok := strings.CutPrefix(l, "#EXTINF:"); ok {
			d, _ := strconv.ParseFloat(strings.TrimSuffix(strings.Split(v, ",")[0], ","), 64)
			out = append(out, d)
		}
	}
	return out
}

func hasCodecs(t *testing.T, url string) {
	t.Helper()
	p := testutil.FFprobe(t, url, false)
	var v, a bool
	for _, s := range p.Streams {
		v = v || (s.CodecName == "h264" && s.Width == 640 && s.Height == 360)
		a = a || s.CodecName == "aac"
	}
	if !v || !a {
		t.Fatalf("ffprobe %s: want h264 640x360 and aac, got %+v", url, p.Streams)
	}
}

// TestPlayerFromTestStream: the generated test stream (key frame every 2 s) becomes HLS and
// DASH on the player's port; the playlist appears in time, ffprobe finds the codecs, segments
// follow the fragment size, the window the fragment length, and both play in a browser.
func TestPlayerFromTestStream(t *testing.T) {
	browser.Require(t)
	ts := startFFmpegServer(t)
	vodPort := testutil.FreePort(t)
	body := testVideoPlayer("pattern", vodPort)
	id := ts.create("vod", body)
	var rec map[string]any
	ts.call("/api/vod/getById", map[string]any{"id": id}, http.StatusOK, &rec)
	hlsURL, dashURL := rec["hls_url"].(string), rec["dash_url"].(string)
	if !strings.Contains(hlsURL, fmt.Sprintf(":%d/hls/%s/%s/index.m3u8", vodPort, id, id)) {
		t.Fatalf("hls_url %s", hlsURL)
	}
	hlsURL = strings.Replace(hlsURL, "localhost", "127.0.0.1", 1)
	dashURL = strings.Replace(dashURL, "localhost", "127.0.0.1", 1)

	// Warming up: a JSON 404 until initial_live_manifest_size (3) segments of 2 s exist.
	testutil.Eventually(t, 30*time.Second, "first media", func() bool { return ts.stat("vod", id).BytesIn > 0 })
	first := time.Now()
	code, msg := httpGet(t, hlsURL)
	if code != http.StatusNotFound || !strings.Contains(msg, "warming up") {
		t.Fatalf("before 3 segments: %d %s", code, msg)
	}
	testutil.Eventually(t, 3*2*time.Second+2*time.Second+time.Second, "playlist served", func() bool {
		code, _ := httpGet(t, hlsURL)
		return code == http.StatusOK
	})
	t.Logf("playlist served %v after the first media", time.Since(first).Round(10*time.Millisecond))

	hasCodecs(t, hlsURL)
	hasCodecs(t, dashURL)
	// The main port serves the same files.
	if code, _ := httpGet(t, strings.Replace(hlsURL, fmt.Sprint(vodPort), strings.Split(ts.base, ":")[2], 1)); code != http.StatusOK {
		t.Fatalf("main port playlist: %d", code)
	}

	// Let the window fill, then check segment durations and the window.
	time.Sleep(14 * time.Second)
	_, pl := httpGet(t, hlsURL)
	durs := extinfs(pl)
	total := 0.0
	for _, d := range durs {
		total += d
		if d < 2-0.1 || d >= 2+2 {
			t.Errorf("EXTINF %.3f not within one GOP (2 s) of hls_fragment_size 2", d)
		}
	}
	if total < 12-2 || total > 12+2*2+2 {
		t.Errorf("window %.1f s, want about hls_fragment_length 12 (+ grace)\n%s", total, pl)
	}
	for _, tag := range []string{"#EXT-X-VERSION:7", "#EXT-X-MAP:", "#EXT-X-PROGRAM-DATE-TIME:", "#EXT-X-START:TIME-OFFSET=-8"} {
		if !strings.Contains(pl, tag) {
			t.Errorf("playlist lacks %s:\n%s", tag, pl)
		}
	}

	for _, c := range []struct{ kind, url string }{{"hls", hlsURL}, {"dash", dashURL}} {
		res := browser.Play(t, c.kind, c.url, 16*time.Second)
		t.Logf("%s: played %.1f s, errors %v", c.kind, res.PlayedSeconds, res.Errors)
		if res.PlayedSeconds < 10 || len(res.Errors) > 0 {
			t.Errorf("%s did not play 10 s: %+v", c.kind, res)
		}
	}
}

// rtmpPlayer makes a player named name of an RTMP listen input, with fragments of fragment
// seconds and an initial manifest of 2, and returns the input's port (bound) and the HLS
// playlist's URL.
func rtmpPlayer(t *testing.T, ts *testServer, name string, fragment int) (int, string) {
	t.Helper()
	inPort, vodPort := testutil.FreePort(t), testutil.FreePort(t)
	body := playerBody(name, vodPort, listenInput("INPUT_TYPE_RTMP_LISTEN", inPort, "tcp"))
	body["hls_fragment_size"], body["initial_live_manifest_size"] = fragment, 2
	id := ts.create("vod", body)
	waitBound(t, inPort, "TCP")
	return inPort, fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/index.m3u8", vodPort, id, id)
}

// TestPlayerDiscontinuity: a publisher that stops and comes back gives one EXT-X-DISCONTINUITY
// and the playlist goes on.
func TestPlayerDiscontinuity(t *testing.T) {
	ts := startFFmpegServer(t)
	inPort, url := rtmpPlayer(t, ts, "gap", 1)
	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(inPort, "a"))...)
	testutil.Eventually(t, 30*time.Second, "playlist", func() bool { c, _ := httpGet(t, url); return c == 200 })
	time.Sleep(3 * time.Second)
	pub.Stop()
	time.Sleep(2 * time.Second)
	_, before := httpGet(t, url)
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(inPort, "b"))...)
	testutil.Eventually(t, 30*time.Second, "segments after the gap", func() bool {
		_, pl := httpGet(t, url)
		return strings.Count(pl, "#EXT-X-DISCONTINUITY\n") == 1 && len(extinfs(pl)) > len(extinfs(before))+2
	})
	_, pl := httpGet(t, url)
	if n := strings.Count(pl, "#EXT-X-DISCONTINUITY\n"); n != 1 {
		t.Fatalf("%d discontinuities, want 1:\n%s", n, pl)
	}
	hasCodecs(t, url)
}

// hevcEncode is Source's encoding with libx265 instead of libx264.
func hevcSource() []string {
	return append(testutil.Pattern{Realtime: true}.Args(),
		"-c:v", "libx265", "-preset", "ultrafast", "-b:v", "600k", "-pix_fmt", "yuv420p",
		"-x265-params", "keyint=25:min-keyint=25:scenecut=0:log-level=error", "-c:a", "aac", "-b:a", "64k")
}

// TestPlayerSources: an SRT listen input, an RTMP server module input and an H.265 source each
// become HLS and DASH in time, with the source's codecs.
func TestPlayerSources(t *testing.T) {
	ts := startFFmpegServer(t)
	modPort := testutil.FreePort(t)
	mod := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": modPort})
	waitState(t, ts, "/api/rtmp-servers/getById", mod, "running")

	cases := []struct {
		name    string
		input   func(port int) map[string]any
		publish func(port int) []string
		video   string
	}{
		{"srt-listen", func(p int) map[string]any { return listenInput("INPUT_TYPE_SRT_LISTEN", p, "udp") },
			func(p int) []string { return append(testutil.Source(1000), "-f", "mpegts", srtURL(p, "streamid=cam")) }, "h264"},
		{"rtmp-module", func(int) map[string]any {
			return map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": mod, "input_stream_id": "cam"}
		}, func(int) []string { return append(testutil.Source(1000), "-f", "flv", rtmpURL(modPort, "cam")) }, "h264"},
		{"h265-udp", func(p int) map[string]any { return listenInput("INPUT_TYPE_UDP_LISTEN", p, "udp") },
			func(p int) []string {
				return append(hevcSource(), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", p))
			}, "hevc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inPort, vodPort := testutil.FreePort(t), testutil.FreePort(t)
			body := playerBody("src-"+c.name, vodPort, c.input(inPort))
			body["hls_fragment_size"], body["dash_fragment_size"] = 1, 1
			id := ts.create("vod", body)
			base := fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/", vodPort, id, id)
			time.Sleep(time.Second) // the input binds its port
			pub := testutil.FFmpeg(t, c.publish(inPort)...)
			testutil.Eventually(t, 30*time.Second, "first media", func() bool { return ts.stat("vod", id).BytesIn > 0 })
			first := time.Now()
			// initial_live_manifest_size 3 × 1 s fragments (key frame each second) + 2 s.
			testutil.Eventually(t, 3*time.Second+2*time.Second+time.Second, "playlist served", func() bool {
				code, _ := httpGet(t, base+"index.m3u8")
				return code == http.StatusOK
			})
			t.Logf("playlist %v after the first media", time.Since(first).Round(10*time.Millisecond))
			for _, u := range []string{base + "index.m3u8", base + "index.mpd"} {
				p := testutil.FFprobe(t, u, false)
				var v, a bool
				for _, s := range p.Streams {
					v = v || (s.CodecName == c.video && s.Width == 640 && s.Height == 360)
					a = a || s.CodecName == "aac"
				}
				if !v || !a {
					t.Errorf("%s: want %s 640x360 and aac, got %+v", u, c.video, p.Streams)
				}
			}
			pub.Stop()
		})
	}
}

// TestPlayerOpenGOP: an open-GOP H.264 publisher (x264's open-gop, as many hardware encoders
// send: its GOPs start with I-pictures marked by a recovery point, not IDR pictures) gets
// segments of its 2 s GOPs; only its first picture was a key frame, and the player stayed
// "warming up" until the 30 s cap cut a segment.
func TestPlayerOpenGOP(t *testing.T) {
	ts := startFFmpegServer(t)
	inPort, url := rtmpPlayer(t, ts, "open-gop", 2)
	testutil.FFmpeg(t, append(testutil.Pattern{Realtime: true}.Args(), "-c:v", "libx264", "-preset", "ultrafast",
		"-pix_fmt", "yuv420p", "-bf", "3", "-x264-params", "open-gop=1:keyint=50:min-keyint=50:scenecut=0",
		"-c:a", "aac", "-f", "flv", rtmpURL(inPort, "cam"))...)
	testutil.Eventually(t, 20*time.Second, "a playlist of 2 s segments", func() bool { c, _ := httpGet(t, url); return c == 200 })
	_, pl := httpGet(t, url)
	for _, d := range extinfs(pl) {
		if d > 2.5 {
			t.Fatalf("a segment of %.2f s for 2 s GOPs:\n%s", d, pl)
		}
	}
	hasCodecs(t, url)
}

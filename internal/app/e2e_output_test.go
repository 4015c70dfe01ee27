package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// checkReceived ffprobes what a receiver wrote: decodable H.264 640x360 and AAC.
func checkReceived(t *testing.T, file string) {
	t.Helper()
	p := testutil.FFprobe(t, file, true)
	var video, audio bool
	for _, s := range p.Streams {
		n, _ := strconv.Atoi(s.NbFrames)
		switch {
		case s.CodecType == "video" && s.CodecName == "h264" && s.Width == 640 && s.Height == 360 && n >= 50:
			video = true
		case s.CodecType == "audio" && s.CodecName == "aac" && n >= 50:
			audio = true
		}
		t.Logf("%s: %s %s %dx%d, %s frames decoded", filepath.Base(file), s.CodecType, s.CodecName, s.Width, s.Height, s.NbFrames)
	}
	if !video || !audio {
		t.Fatalf("%s: want decodable h264 640x360 and aac, got %+v", file, p.Streams)
	}
}

func TestRestreamOutputs(t *testing.T) {
	ts := startFFmpegServer(t)
	dir := t.TempDir()

	// One RTMP server module, the target of the local output and a source for the check.
	modPort := testutil.FreePort(t)
	mod := ts.create("rtmp-servers", map[string]any{"server_name": "local", "server_port": modPort})
	waitState(t, ts, "/api/rtmp-servers/getById", mod, "running")
	pubEvents := ts.follow("id="+mod+"&type=publisher_connected,publisher_disconnected", "")
	defer pubEvents.close()

	cases := []struct {
		name string
		// receiver returns the ffmpeg receiver's arguments (without the output file) for a port.
		receiver func(port int) []string
		output   func(port int) map[string]any
		ext      string
	}{
		{"rtmp", func(p int) []string { return []string{"-listen", "1", "-i", rtmpURL(p, "key")} },
			func(p int) map[string]any {
				return map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": fmt.Sprintf("rtmp://127.0.0.1:%d/live", p), "output_stream_key": "key"}
			}, "flv"},
		{"udp", func(p int) []string { return []string{"-i", fmt.Sprintf("udp://127.0.0.1:%d", p)} },
			func(p int) map[string]any {
				return map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", p)}
			}, "ts"},
		{"rtp", func(p int) []string { return []string{"-i", fmt.Sprintf("rtp://127.0.0.1:%d", p)} },
			func(p int) map[string]any {
				return map[string]any{"output_type": "OUTPUT_TYPE_RTP_URL", "output_stream_url": fmt.Sprintf("rtp://127.0.0.1:%d", p)}
			}, "ts"},
		{"http", func(p int) []string {
			return []string{"-listen", "1", "-i", fmt.Sprintf("http://127.0.0.1:%d/in.ts", p)}
		},
			func(p int) map[string]any {
				return map[string]any{"output_type": "OUTPUT_TYPE_HTTP_URL", "output_stream_url": fmt.Sprintf("http://127.0.0.1:%d/in.ts", p)}
			}, "ts"},
		{"local-rtmp", func(int) []string { return []string{"-i", rtmpURL(modPort, "relayed")} },
			func(int) map[string]any {
				return map[string]any{"output_type": "OUTPUT_TYPE_LOCAL_RTMP_URL", "output_stream_url": rtmpURL(modPort, "relayed")}
			}, "flv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inPort, outPort := testutil.FreePort(t), testutil.FreePort(t)
			file := filepath.Join(dir, c.name+"."+c.ext)
			var recv *testutil.Process
			if c.name != "local-rtmp" {
				recv = testutil.FFmpeg(t, append(c.receiver(outPort), "-c", "copy", "-t", "6", file)...)
			}
			rs := ts.create("restream", map[string]any{"restream_name": "out-" + c.name,
				"input": listenInput("INPUT_TYPE_UDP_LISTEN", inPort, "udp"), "output": c.output(outPort)})
			pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", inPort))...)
			if c.name == "local-rtmp" {
				// The relayed stream appears on the module; play it from there.
				testutil.Eventually(t, 20*time.Second, "relayed stream published", func() bool {
					var streams []map[string]any
					ts.call("/api/rtmp-servers/getActiveStreams", map[string]any{"id": mod}, 200, &streams)
					return len(streams) == 1 && streams[0]["stream_id"] == "relayed"
				})
				recv = testutil.FFmpeg(t, append(c.receiver(outPort), "-c", "copy", "-t", "6", file)...)
			}
			// Passthrough starts no child process: the only children are the test's own ffmpegs.
			for _, pid := range testutil.Children(os.Getpid()) {
				if pid != pub.Cmd.Process.Pid && pid != recv.Cmd.Process.Pid {
					t.Errorf("passthrough restream: unexpected child process %d", pid)
				}
			}
			if err := recv.Wait(60 * time.Second); err != nil {
				t.Fatalf("receiver: %v", err)
			}
			checkReceived(t, file)
			ts.call("/api/restream/remove", map[string]any{"id": rs}, 200, nil)
			if c.name == "local-rtmp" {
				// The module's publisher events name the restream's session "local".
				got := pubEvents.until(10*time.Second, "publisher_disconnected", isType("publisher_disconnected"))
				if len(got) != 2 || got[0].Type != "publisher_connected" {
					t.Fatalf("module's publisher events %v", got)
				}
				for _, e := range got {
					if e.Data["stream_id"] != "relayed" || e.Data["remote_address"] != "local" || e.Data["name"] != "local" {
						t.Errorf("%v: %v, want stream relayed from local", e, e.Data)
					}
				}
			}
		})
	}
}

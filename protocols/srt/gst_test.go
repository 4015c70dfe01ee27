package srt

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// gstPublish starts a GStreamer publisher (srtsink, caller) of a live 640x360 H.264 and 48 kHz
// AAC MPEG-TS to port with the stream id and srtsink properties given.
func gstPublish(t *testing.T, port int, streamID string, props ...string) *ffmpegProc {
	t.Helper()
	args := []string{"-q", "-e",
		"videotestsrc", "is-live=true", "pattern=ball", "!", "video/x-raw,width=640,height=360,framerate=25/1", "!",
		"openh264enc", "bitrate=1000000", "gop-size=25", "complexity=low", "!", "h264parse", "!",
		"mpegtsmux", "name=mux", "alignment=7", "!",
		"srtsink", fmt.Sprintf("uri=srt://127.0.0.1:%d", port), "latency=200", "streamid=" + streamID}
	args = append(args, props...)
	args = append(args, "audiotestsrc", "is-live=true", "!", "audio/x-raw,rate=48000,channels=1", "!",
		"audioconvert", "!", "avenc_aac", "!", "aacparse", "!", "mux.")
	return startProcess(t, "gst-launch-1.0", args...)
}

// TestGStreamerPeers: GStreamer's srtsink publishes to the server module and its srtsrc reads
// the stream back, without and with encryption (AES-256); a wrong passphrase is refused.
func TestGStreamerPeers(t *testing.T) {
	testutil.RequireFFmpeg(t)
	testutil.RequireTools(t, "gst-launch-1.0")
	for _, c := range []struct {
		name  string
		pass  string
		props []string
	}{
		{"plain", "", nil},
		{"aes256", "correct-horse-battery", []string{"passphrase=correct-horse-battery", "pbkeylen=32"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := testutil.TakeBaseline()
			srv, reg, stop := startServer(t, Options{Passphrase: c.pass})
			port := portOf(srv.Addr())
			pub := gstPublish(t, port, "publisher/studio/gst", c.props...)
			s := publishing(t, reg, "gst", pub)
			requireTracks(t, s.Tracks())
			if n := checkUnits(t, s, 2*time.Second); n < 40 {
				t.Fatalf("read %d units in 2 s", n)
			}

			// GStreamer reads the stream back through the module as a receiver.
			out := filepath.Join(t.TempDir(), "gst.ts")
			args := []string{"-q", "-e", "srtsrc", fmt.Sprintf("uri=srt://127.0.0.1:%d", port), "latency=200",
				"streamid=receiver/studio/gst"}
			args = append(args, c.props...)
			recv := startProcess(t, "gst-launch-1.0", append(args, "!", "filesink", "location="+out)...)
			testutil.Eventually(t, 20*time.Second, "the GStreamer receiver to get 300 kB", func() bool {
				fi, err := os.Stat(out)
				return err == nil && fi.Size() > 300_000
			})
			recv.stop()
			requireH264AAC(t, out)

			if c.pass != "" {
				wrong := gstPublish(t, port, "publisher/studio/other", "passphrase=wrong-horse-battery", "pbkeylen=32")
				if err := wrong.wait(t, 30*time.Second); err == nil {
					t.Fatalf("a GStreamer publisher with a wrong passphrase ended well:\n%s", wrong.out.String())
				}
				t.Logf("GStreamer with a wrong passphrase: %s", wrong.out.String())
				if _, ok := reg.Get("other"); ok {
					t.Fatal("a GStreamer publisher with a wrong passphrase was accepted")
				}
			}
			pub.stop()
			stopAndCheck(t, stop, base)
		})
	}
}

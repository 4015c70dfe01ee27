package app

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func rtspURL(port int) string { return fmt.Sprintf("rtsp://127.0.0.1:%d/live", port) }

// TestRTSPInputsAndOutput: ffmpeg publishes to an RTSP listen input (A); a second process
// pulls A by URL (B); a restream pushes A to a third process's RTSP listen input (C), whose
// stream ffmpeg then reads and ffprobe checks.
func TestRTSPInputsAndOutput(t *testing.T) {
	ts := startFFmpegServer(t)
	portA, portC := testutil.FreePort(t), testutil.FreePort(t)

	c := ts.create("recording", recordingBody("rtsp-c", listenInput("INPUT_TYPE_RTSP_LISTEN", portC, "tcp")))
	a := ts.create("restream", map[string]any{"restream_name": "rtsp-a",
		"input":  listenInput("INPUT_TYPE_RTSP_LISTEN", portA, "tcp"),
		"output": map[string]any{"output_type": "OUTPUT_TYPE_RTSP_URL", "output_stream_url": rtspURL(portC)}})
	testutil.Eventually(t, 15*time.Second, "RTSP listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(portA, "TCP"))
	})
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "rtsp", "-rtsp_transport", "tcp", rtspURL(portA))...)
	ts.checkBitrate("restream", a)

	b := ts.create("recording", recordingBody("rtsp-b", urlInput("INPUT_TYPE_RTSP_URL", rtspURL(portA)+"?rtsp_transport=tcp")))
	ts.checkBitrate("recording", b)

	// C receives what the restream pushed; read it back.
	ts.checkBitrate("recording", c)
	file := filepath.Join(t.TempDir(), "c.mp4")
	if err := testutil.FFmpeg(t, "-rtsp_transport", "tcp", "-i", rtspURL(portC), "-c", "copy", "-t", "6", file).Wait(60 * time.Second); err != nil {
		t.Fatalf("read C: %v", err)
	}
	checkReceived(t, file)
}

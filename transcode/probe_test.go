package transcode

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestProbeHWNone: on a machine without a GPU the probe finds no hardware encoder, says why
// for each, and a mpsoc_vcu_* field then fails naming what was probed.
func TestProbeHWNone(t *testing.T) {
	testutil.RequireFFmpeg(t)
	for _, dev := range []string{"/dev/nvidia0", DefaultVAAPIDevice} {
		if exists(dev) {
			t.Skipf("%s exists: this machine may have hardware encoders", dev)
		}
	}
	if _, err := exec.LookPath("nvidia-smi"); err == nil {
		t.Skip("nvidia-smi is installed: this machine may have NVENC")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hw := ProbeHW(ctx, "")
	t.Logf("available %q, probed %q", hw.Available(), hw.Probed)
	if len(hw.Available()) != 0 {
		t.Fatalf("Available() = %q, want none", hw.Available())
	}
	if len(hw.Probed) != len(hwCandidates) {
		t.Errorf("Probed has %d entries, want one per candidate (%d)", len(hw.Probed), len(hwCandidates))
	}
	for i, enc := range hwCandidates {
		if i < len(hw.Probed) && !strings.HasPrefix(hw.Probed[i], enc+": ") {
			t.Errorf("Probed[%d] = %q, want it about %s", i, hw.Probed[i], enc)
		}
	}
	for _, v := range []string{"mpsoc_vcu_h264", "mpsoc_vcu_hevc"} {
		_, err := Args(&Settings{VideoTranscoding: v}, inH264AAC, hw)
		t.Logf("%s: %v", v, err)
		if !errors.Is(err, ErrNoHardware) {
			t.Fatalf("%s: error %v, want ErrNoHardware", v, err)
		}
		for _, s := range []string{"available: none", "h264_nvenc, hevc_nvenc: no NVIDIA device", "h264_vaapi, hevc_vaapi: no render device"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", v, err, s)
			}
		}
	}
}

// TestProbeTestEncode: with every device check passing (pointed at /dev/null), the probe runs
// ffmpeg's test encode, which fails without a GPU, and quotes why.
func TestProbeTestEncode(t *testing.T) {
	testutil.RequireFFmpeg(t)
	p := prober{
		ffmpeg: "ffmpeg", nvidiaDev: "/dev/null", nvidiaSMI: "nvidia-smi", renderNode: "/dev/null",
		timeout: 20 * time.Second, lookPath: exec.LookPath, testEncodes: true,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hw := p.probe(ctx)
	t.Logf("available %q, probed %q", hw.Available(), hw.Probed)
	if len(hw.Encoders) != 0 {
		t.Skipf("a hardware encoder works here: %q", hw.Encoders)
	}
	for _, why := range hw.Probed {
		if !strings.Contains(why, "test encode failed") && !strings.Contains(why, "not built") {
			t.Errorf("probe note %q: want a failed test encode", why)
		}
	}
	// Device checks alone (no test encode) accept what exists.
	p.testEncodes = false
	hw = p.probe(ctx)
	if len(hw.Encoders) == 0 {
		t.Errorf("without test encodes, no encoder passed the device checks: %q", hw.Probed)
	}
}

// TestProbeNoFFmpeg: a missing ffmpeg leaves no hardware, and says so.
func TestProbeNoFFmpeg(t *testing.T) {
	hw := ProbeHW(context.Background(), "/nonexistent/ffmpeg")
	if len(hw.Encoders) != 0 || len(hw.Probed) != 1 || !strings.Contains(hw.Probed[0], "ffmpeg -encoders") {
		t.Fatalf("hw = %+v", hw)
	}
	_, err := Args(&Settings{VideoTranscoding: "mpsoc_vcu_hevc"}, inH264AAC, hw)
	if !errors.Is(err, ErrNoHardware) || !strings.Contains(err.Error(), "/nonexistent/ffmpeg") {
		t.Fatalf("error %v", err)
	}
}

func TestProgressParser(t *testing.T) {
	feed := `frame=120
fps=29.97
stream_0_0_q=28.0
bitrate= 812.3kbits/s
total_size=409600
out_time_us=4000000
out_time_ms=4000000
out_time=00:00:04.000000
dup_frames=0
drop_frames=0
speed=1.01x
progress=continue
frame=N/A
fps=N/A
out_time_us=N/A
speed=N/A
progress=continue
frame=150
out_time_ms=5000000
speed= 0.98x
progress=end
`
	var p progressParser
	var got []Progress
	for _, l := range strings.Split(feed, "\n") {
		if r, ok := p.line(l); ok {
			got = append(got, r)
		}
	}
	want := []Progress{
		{Frame: 120, FPS: 29.97, Speed: 1.01, OutTime: 4 * time.Second},
		{Frame: 120, FPS: 29.97, Speed: 1.01, OutTime: 4 * time.Second},
		{Frame: 150, FPS: 29.97, Speed: 0.98, OutTime: 5 * time.Second},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d reports, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func FuzzProgressParser(f *testing.F) {
	f.Add("frame=12\nfps=25.0\nout_time_us=480000\nspeed=1x\nprogress=continue\n")
	f.Add("out_time_us=-5\nspeed=NaNx\nframe=99999999999999999999\nprogress=end")
	f.Fuzz(func(t *testing.T, feed string) {
		var p progressParser
		for _, l := range strings.Split(feed, "\n") {
			if r, ok := p.line(l); ok && (r.Frame < 0 || r.FPS < 0 || r.Speed < 0 || r.OutTime < 0) {
				t.Fatalf("negative report %+v", r)
			}
		}
	})
}

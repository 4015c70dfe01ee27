package rtmp

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// cpuTime returns the CPU time this process used so far (ffmpeg children excluded).
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServerCPU publishes a 4 Mbit/s stream (1280x720 H.264 at 3936 kbit/s and AAC at
// 64 kbit/s) with ffmpeg for 10 s and reports the server's CPU use as a percentage of one
// core: idle (the reference), ingest alone, then with one ffmpeg player. Run it with
//
//	go test -run '^$' -bench ServerCPU -benchtime 1x ./protocols/rtmp
func BenchmarkServerCPU(b *testing.B) {
	testutil.RequireFFmpeg(b)
	reg := stream.NewRegistry(stream.Options{Log: testLog(b)})
	srv := &Server{Registry: reg, Log: testLog(b)}
	addr := startServer(b, srv)
	url := fmt.Sprintf("rtmp://%s/live/bench", addr)
	args := append(testutil.Pattern{Width: 1280, Height: 720, SampleRate: 44100, Realtime: true}.Args(),
		"-t", "40", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
		"-b:v", "3936k", "-minrate", "3936k", "-maxrate", "3936k", "-bufsize", "2000k", "-x264-params", "nal-hrd=cbr",
		"-g", "50", "-c:a", "aac", "-b:a", "64k", "-f", "flv", url)
	// The reference: the same process with the server idle.
	c0, t0 := cpuTime(b), time.Now()
	time.Sleep(5 * time.Second)
	idle := 100 * (cpuTime(b) - c0).Seconds() / time.Since(t0).Seconds()
	b.Logf("idle: server CPU %.2f %% of a core", idle)
	b.ReportMetric(idle, "idle-cpu%")

	startFFmpeg(b, args...)
	s := waitPublished(b, reg, "bench", 30*time.Second)
	time.Sleep(2 * time.Second) // past the start-up burst

	measure := func(name string) {
		const span = 10 * time.Second
		c0, t0, bytes0 := cpuTime(b), time.Now(), s.Stats().BytesIn
		time.Sleep(span)
		cpu, wall := cpuTime(b)-c0, time.Since(t0)
		kbps := float64(s.Stats().BytesIn-bytes0) * 8 / 1000 / wall.Seconds()
		pct := 100 * cpu.Seconds() / wall.Seconds()
		b.Logf("%s: %.0f kbit/s of media for %s: server CPU %s = %.2f %% of a core", name, kbps, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), pct)
		b.ReportMetric(pct, name+"-cpu%")
	}
	b.ResetTimer()
	measure("ingest")
	startFFmpeg(b, "-hide_banner", "-loglevel", "error", "-i", url, "-c", "copy", "-f", "null", "-")
	testutil.Eventually(b, 20*time.Second, "the player", func() bool { return s.Stats().Readers == 1 })
	time.Sleep(2 * time.Second)
	measure("ingest+player")
}

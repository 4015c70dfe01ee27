// Package testutil holds helpers for tests that drive sluice with real peers: ffmpeg as
// publisher and receiver, ffprobe to check outputs, loopback ports.
package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/tooling"
)

// RequireFFmpeg fails the test when ffmpeg or ffprobe is missing, with a message that says so
// (`make test` installs them), and returns the path of ffmpeg.
func RequireFFmpeg(t testing.TB) string {
	t.Helper()
	RequireTools(t, "ffmpeg", "ffprobe")
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatalf("ffmpeg is not installed: install it (make deps): %v", err)
	}
	return p
}

// RequireTools fails the test when one of the programs is not on PATH: `make test` installs them
// all (make deps), and a test never skips for a missing tool.
func RequireTools(t testing.TB, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: install it (make deps)", bin)
		}
	}
}

// Source returns ffmpeg input and encoding arguments for a paced, constant-bitrate test
// source: 640x360 at 25 fps H.264 (kbps kbit/s, a key frame a second) and 64 kbit/s AAC.
func Source(kbps int) []string {
	return append(Pattern{Realtime: true}.Args(), Encode(kbps)...)
}

// MakeClip writes a file of the given length with Source's encoding, as fast as ffmpeg can.
func MakeClip(t testing.TB, path string, seconds, kbps int) {
	t.Helper()
	args := append(append(Pattern{}.Args(), "-t", strconv.Itoa(seconds)), Encode(kbps)...)
	if err := FFmpeg(t, append(args, path)...).Wait(5 * time.Minute); err != nil {
		t.Fatalf("make %s: %v", path, err)
	}
}

// Encode returns Source's encoding arguments.
func Encode(kbps int) []string {
	b := strconv.Itoa(kbps) + "k"
	return []string{
		"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
		"-b:v", b, "-minrate", b, "-maxrate", b, "-bufsize", strconv.Itoa(kbps/2) + "k",
		"-x264-params", "nal-hrd=cbr", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", "64k",
	}
}

// FFmpeg starts ffmpeg with args (after -hide_banner -loglevel error -nostdin) and stops it
// when the test ends. Its stderr is kept for the test log.
func FFmpeg(t testing.TB, args ...string) *Process {
	t.Helper()
	full := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...)
	cmd := exec.Command("ffmpeg", full...)
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ffmpeg: %v", err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if msg := p.stderr.String(); t.Failed() && msg != "" {
			t.Logf("ffmpeg %v:\n%s", args, msg)
		}
	})
	return p
}

// Process is a running ffmpeg.
type Process struct {
	Cmd    *exec.Cmd
	stderr SyncBuffer
	done   chan struct{}
	err    error
}

// Stderr returns what ffmpeg wrote to its stderr so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Stop interrupts ffmpeg (it finishes its output), then kills it after 5 s.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	tooling.StopGroup(p.Cmd.Process.Pid, p.done, syscall.SIGINT, 5*time.Second)
}

// Wait waits for ffmpeg to exit by itself, at most d.
func (p *Process) Wait(d time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		return fmt.Errorf("ffmpeg still running after %v", d)
	}
}

// Probe is what ffprobe reports of a file or URL.
type Probe struct {
	Streams []struct {
		CodecName string `json:"codec_name"`
		CodecType string `json:"codec_type"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		NbFrames  string `json:"nb_read_frames"`
		PixFmt    string `json:"pix_fmt"`
		Profile   string `json:"profile"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

// FFprobe probes target (counting frames when count is set).
func FFprobe(t testing.TB, target string, count bool) Probe {
	t.Helper()
	args := []string{"-v", "error", "-print_format", "json", "-show_streams", "-show_format"}
	if count {
		args = append(args, "-count_frames")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ffprobe", append(args, target)...).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", target, err)
	}
	var p Probe
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("ffprobe %s: %v", target, err)
	}
	return p
}

// Eventually polls cond every 50 ms until it holds or d passes.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyEvery(t, d, 50*time.Millisecond, what, cond)
}

// EventuallyEvery polls cond every interval until it holds, and fails t when d passes first.
func EventuallyEvery(t testing.TB, d, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(interval)
	}
}

// Children lists the PIDs of the live child processes of pid, from /proc.
func Children(pid int) []int {
	kids, _ := procfs.Children(pid)
	var out []int
	for _, k := range kids {
		if !k.Zombie() {
			out = append(out, k.PID)
		}
	}
	return out
}

package segtest

import (
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/packager/segment"
)

// LiveOptions shape a live source.
type LiveOptions struct {
	// Sessions is the number of publisher sessions (default 1); between two, the source
	// stops for Gap and the segmenters get a discontinuity, as after an input drop.
	Sessions int
	// SessionLength is how long each session but the last lasts (default 10 s); the last one
	// runs until the test ends.
	SessionLength time.Duration
	// Gap is the pause between sessions (default 2 s).
	Gap time.Duration
}

// Live runs ffmpeg as a real-time H.264 + AAC source (640x360, 25 fps, a key frame every
// second) into the segmenters, from a goroutine that ends with the test. Segmenter calls
// happen on that goroutine only; readers use the stores.
func Live(t testing.TB, opts LiveOptions, sgs ...*segment.Segmenter) {
	t.Helper()
	testutil.RequireFFmpeg(t)
	opts.Sessions = max(opts.Sessions, 1)
	if opts.SessionLength <= 0 {
		opts.SessionLength = 10 * time.Second
	}
	if opts.Gap <= 0 {
		opts.Gap = 2 * time.Second
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range opts.Sessions {
			if i > 0 {
				select {
				case <-time.After(opts.Gap):
				case <-stop:
					return
				}
			}
			length := opts.SessionLength
			if i == opts.Sessions-1 {
				length = 0
			}
			if !session(t, length, stop, sgs) {
				return
			}
			for _, sg := range sgs {
				_ = sg.Discontinuity()
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
}

// session runs one ffmpeg for length (0: until stop) and feeds its units; it reports whether
// to go on.
func session(t testing.TB, length time.Duration, stop <-chan struct{}, sgs []*segment.Segmenter) bool {
	args := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
		testutil.Pattern{Width: ClipWidth, Height: ClipHeight, Realtime: true}.Args()...)
	cmd := exec.Command("ffmpeg", append(args,
		"-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
		"-g", "25", "-keyint_min", "25", "-sc_threshold", "0", "-b:v", "800k",
		"-c:a", "aac", "-b:a", "64k", "-f", "mpegts", "pipe:1")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Error(err)
		return false
	}
	if err := cmd.Start(); err != nil {
		t.Errorf("start ffmpeg: %v", err)
		return false
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var timeout <-chan time.Time
		if length > 0 {
			timeout = time.After(length)
		}
		select {
		case <-timeout:
		case <-stop:
		case <-done:
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}()
	ok := feed(t, out, sgs)
	close(done)
	wg.Wait()
	_ = cmd.Wait()
	select {
	case <-stop:
		return false
	default:
		return ok
	}
}

// feed demuxes r into the segmenters until it ends; it reports false on a failure.
func feed(t testing.TB, r io.Reader, sgs []*segment.Segmenter) bool {
	d := mpegts.NewDemuxer(r)
	tracks, err := d.Tracks()
	if err != nil {
		t.Logf("live source: %v", err)
		return false
	}
	for _, sg := range sgs {
		if err := sg.SetTracks(tracks); err != nil {
			t.Errorf("live source: %v", err)
			return false
		}
	}
	for {
		au, err := d.Read()
		if err != nil {
			return true
		}
		au.Arrival = time.Now()
		for _, sg := range sgs {
			if err := sg.WriteUnit(au); err != nil {
				t.Errorf("live source: %v", err)
				return false
			}
		}
	}
}

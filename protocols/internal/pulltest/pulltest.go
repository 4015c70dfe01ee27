// Package pulltest holds what the tests of the pull inputs over HTTP (protocols/hls and
// protocols/dash) share: running a Pull with a deadline or in the background, the recorded
// fixtures made once per test binary, a live run of ffmpeg writing a presentation that Pull
// plays, and the checks both formats make alike (repeat, busy, failures that come at once,
// size caps). For tests only.
package pulltest

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// PullFunc is a pull input's entry point: it plays the presentation at url into s until the
// presentation ends, it fails, or ctx ends.
type PullFunc func(ctx context.Context, url string, s *stream.Stream, log *slog.Logger) error

// Now runs pull to its end with a deadline d, and fails the test when it is still running then.
func Now(t testing.TB, pull PullFunc, url string, s *stream.Stream, d time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := pull(ctx, url, s, streamtest.Log())
	if ctx.Err() != nil {
		t.Fatalf("Pull still running after %v", d)
	}
	return time.Since(start), err
}

// Async runs pull in the background until it returns or the test ends (at most 100 s); the
// result arrives on the channel.
func Async(t testing.TB, pull PullFunc, url string, s *stream.Stream) <-chan error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	ch, fin := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(fin)
		ch <- pull(ctx, url, s, streamtest.Log())
	}()
	t.Cleanup(func() { cancel(); <-fin })
	return ch
}

// Junk returns n pseudo-random bytes, the same ones on every call.
func Junk(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// Fixtures are recordings of the test pattern made once per test binary, each kind in its own
// folder below a temporary root that Main removes when the tests end.
type Fixtures struct {
	root string
	m    sync.Map // kind → *fixture
}

type fixture struct {
	once sync.Once
	err  error
}

// Main is a pull package's TestMain: it makes the fixtures' root (named after prefix), runs
// four tests at a time rather than GOMAXPROCS (often 2), as the end-to-end tests spend their
// time waiting for real-time media, not on the CPU (an explicit -parallel still wins), and
// checks that no goroutine is left when the tests end.
func Main(m *testing.M, prefix string, fx *Fixtures) {
	dir, err := os.MkdirTemp("", prefix+"-fixtures-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fx.root = dir
	_ = flag.Set("test.parallel", "4")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// Record returns the folder of fixture kind, which ffmpeg makes on the first call of the test
// binary from FixtureInput's arguments, then args, then the output file (out, in the folder).
func (fx *Fixtures) Record(t testing.TB, kind, out string, args func(dir string) []string) string {
	t.Helper()
	testutil.RequireFFmpeg(t)
	dir := filepath.Join(fx.root, kind)
	v, _ := fx.m.LoadOrStore(kind, &fixture{})
	f := v.(*fixture)
	f.once.Do(func() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.err = err
			return
		}
		full := append(FixtureInput(), args(dir)...)
		full = append(full, filepath.Join(dir, out))
		if b, err := exec.Command("ffmpeg", full...).CombinedOutput(); err != nil {
			f.err = fmt.Errorf("ffmpeg: %w: %s", err, b)
		}
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return dir
}

// FixtureInput is ffmpeg's quiet start and the fixtures' input: the test pattern at 320x180,
// read as fast as ffmpeg can.
func FixtureInput() []string {
	return append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
		testutil.Pattern{Width: 320, Height: 180}.Args()...)
}

// FixtureEncode is the fixtures' encoding after the video codec's arguments: a key frame every
// second (25 frames), 300 kbit/s video and 64 kbit/s AAC.
func FixtureEncode() []string {
	return []string{"-preset", "ultrafast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
		"-b:v", "300k", "-c:a", "aac", "-b:a", "64k"}
}

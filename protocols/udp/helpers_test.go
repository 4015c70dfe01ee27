package udp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Source of the end-to-end tests: a constant-bitrate H.264 + AAC stream.
const (
	srcWidth, srcHeight = 640, 360
	srcVideoKbps        = 1000
	srcAudioKbps        = 64
)

// cbrArgs are ffmpeg's input and encoding arguments for the test source.
func cbrArgs(seconds float64, realtime bool) []string {
	a := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
		testutil.Pattern{Width: srcWidth, Height: srcHeight, Realtime: realtime}.Args()...)
	a = append(a, "-t", fmt.Sprint(seconds))
	return append(a, testutil.Encode(srcVideoKbps)...)
}

var tsFiles sync.Map // seconds → path

// makeTS returns an MPEG-TS file of the test source, made once per test binary.
func makeTS(t testing.TB, seconds float64) string {
	t.Helper()
	ffmpeg := testutil.RequireFFmpeg(t)
	if p, ok := tsFiles.Load(seconds); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "udp-test-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "src.ts")
	args := append(cbrArgs(seconds, false), "-f", "mpegts", out)
	if b, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	p, _ := tsFiles.LoadOrStore(seconds, out)
	return p.(string)
}

// readTS demuxes a whole file.
func readTS(t testing.TB, path string) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	tracks, aus, err := mpegts.ReadFile(path)
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	return tracks, aus
}

// checkSourceTracks checks the tracks are the test source's: H.264 640x360 and AAC.
func checkSourceTracks(t testing.TB, tracks []media.Track) {
	t.Helper()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %s, want H264 and AAC", ingest.Describe(tracks))
	}
	if p := tracks[0].Params; p.Width != srcWidth || p.Height != srcHeight {
		t.Fatalf("video %dx%d, want %dx%d", p.Width, p.Height, srcWidth, srcHeight)
	}
}

// freeUDPPort returns a UDP port that was free a moment ago.
func freeUDPPort(t testing.TB) int { return testutil.FreePort(t) }

// runFFmpeg runs ffmpeg with args until it exits or ctx ends.
func runFFmpeg(ctx context.Context, t testing.TB, args ...string) error {
	cmd := exec.CommandContext(ctx, testutil.RequireFFmpeg(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("ffmpeg %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ffprobeCodecs returns the codec names of a file's streams.
func ffprobeCodecs(t testing.TB, path string) []string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name",
		"-of", "json", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("ffprobe %s: %v\n%s", path, err, ee.Stderr)
		}
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var res struct {
		Streams []struct {
			CodecName string `json:"codec_name"`
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var codecs []string
	for _, s := range res.Streams {
		codecs = append(codecs, s.CodecName)
	}
	return codecs
}

// Shared with the other protocol tests (internal/testutil/streamtest).
var (
	play       = streamtest.Play
	collect    = streamtest.Collect
	checkUnits = streamtest.CheckUnits
	checkRates = streamtest.CheckRates
	waitFor    = testutil.Eventually
)

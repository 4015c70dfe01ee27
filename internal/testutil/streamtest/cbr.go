package streamtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// The constant-bitrate test source of the MPEG-TS transports' tests (UDP, HTTP-TS): H.264
// 640x360 at 1000 kbit/s with a one-second GOP, and AAC.
const (
	CBRWidth, CBRHeight = 640, 360
	CBRVideoKbps        = 1000
	CBRAudioKbps        = 64
)

// CBRArgs are ffmpeg's input and encoding arguments for seconds of the CBR source, read at its
// rate when realtime.
func CBRArgs(seconds float64, realtime bool) []string {
	return append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"}, cbrInput(seconds, realtime)...)
}

// cbrInput is CBRArgs without ffmpeg's own options.
func cbrInput(seconds float64, realtime bool) []string {
	a := append(testutil.Pattern{Width: CBRWidth, Height: CBRHeight, Realtime: realtime}.Args(), "-t", fmt.Sprint(seconds))
	return append(a, testutil.Encode(CBRVideoKbps)...)
}

// CBRFile returns a file of seconds of the CBR source in ffmpeg's format ("mpegts", "flv"),
// made once per test binary (testutil.Clip).
func CBRFile(t testing.TB, seconds float64, format string) string {
	t.Helper()
	return testutil.Clip(t, fmt.Sprintf("cbr-%vs.%s", seconds, format), append(cbrInput(seconds, false), "-f", format)...)
}

// ReadTS demuxes a whole MPEG-TS file.
func ReadTS(t testing.TB, path string) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	tracks, aus, err := mpegts.ReadFile(path)
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	return tracks, aus
}

// CheckCBRTracks checks the tracks are the CBR source's: H.264 640x360 and AAC.
func CheckCBRTracks(t testing.TB, tracks []media.Track) {
	t.Helper()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %v, want H264 and AAC", tracks)
	}
	if p := tracks[0].Params; p.Width != CBRWidth || p.Height != CBRHeight {
		t.Fatalf("video %dx%d, want %dx%d", p.Width, p.Height, CBRWidth, CBRHeight)
	}
}

// RunFFmpeg runs ffmpeg with args until it exits or ctx ends; an exit before ctx ends with an
// error is returned with ffmpeg's output.
func RunFFmpeg(ctx context.Context, t testing.TB, args ...string) error {
	cmd := exec.CommandContext(ctx, testutil.RequireFFmpeg(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("ffmpeg %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// FFprobeCodecs returns the codec names of a file's streams.
func FFprobeCodecs(t testing.TB, path string) []string {
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

// CheckReceivedAV fails the test unless the file ffmpeg received holds an AAC and an H.264
// stream, and nothing else.
func CheckReceivedAV(t testing.TB, path string) {
	t.Helper()
	codecs := FFprobeCodecs(t, path)
	slices.Sort(codecs)
	if !slices.Equal(codecs, []string{"aac", "h264"}) {
		t.Fatalf("ffmpeg received %v, want aac and h264", codecs)
	}
}

package dash

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// probePackets returns the packet count and total size ffprobe reads from one stream's init
// segment and chunks joined into one file.
func probePackets(t *testing.T, files []string) (count int, size int64) {
	t.Helper()
	joined := filepath.Join(t.TempDir(), "joined.mp4")
	if n := joinFiles(t, joined, files); n != len(files) {
		t.Fatalf("read %d of %d files", n, len(files))
	}
	for _, p := range testutil.FFprobePackets(t, joined) {
		count++
		size += p.Size
	}
	return count, size
}

// TestParseSegments reads ffmpeg's init and media segments, for H.264, H.265 and AAC: the
// samples are the packets ffprobe reads, with continuous decode times, and the init segment
// gives the codec parameters.
func TestParseSegments(t *testing.T) {
	for _, kind := range []string{"timeline", "h265"} {
		t.Run(kind, func(t *testing.T) {
			f := recorded(t, kind)
			for stream, k := range []media.Kind{media.KindVideo, media.KindAudio} {
				ti, err := parseInit(f.file(t, fmt.Sprintf("init-stream%d.m4s", stream)), k)
				if err != nil {
					t.Fatal(err)
				}
				switch p := ti.Track.Params; {
				case k == media.KindVideo && (p.Width != 320 || p.Height != 180 || len(p.SPS) == 0 || len(p.PPS) == 0):
					t.Fatalf("video params %+v", p)
				case k == media.KindVideo && kind == "h265" && (ti.Track.Codec != media.CodecH265 || len(p.VPS) == 0):
					t.Fatalf("H.265 track %v", ti.Track.Codec)
				case k == media.KindAudio && (ti.Track.Codec != media.CodecAAC || p.SampleRate != 48000 || len(p.AudioConfig) == 0):
					t.Fatalf("audio track %+v", ti.Track)
				}
				chunks, _ := filepath.Glob(filepath.Join(f.dir, fmt.Sprintf("chunk-stream%d-*.m4s", stream)))
				sort.Strings(chunks)
				var count int
				var size int64
				var next uint64
				for i, c := range chunks {
					b, err := os.ReadFile(c)
					if err != nil {
						t.Fatal(err)
					}
					samples, end, err := fmp4.ReadSamples(b, ti, next)
					if err != nil {
						t.Fatalf("%s: %v", c, err)
					}
					if i > 0 && samples[0].DTS != next {
						t.Fatalf("%s starts at %d, the previous ended at %d", c, samples[0].DTS, next)
					}
					next = end
					for _, s := range samples {
						count++
						size += int64(len(s.Data))
					}
				}
				wantCount, wantSize := probePackets(t, append([]string{filepath.Join(f.dir, fmt.Sprintf("init-stream%d.m4s", stream))}, chunks...))
				if count != wantCount || size != wantSize {
					t.Fatalf("stream %d: %d samples of %d bytes, ffprobe reads %d of %d", stream, count, size, wantCount, wantSize)
				}
			}
		})
	}
}

// TestRepReaderUnits turns segments into units: key frames first and with parameter sets,
// DTS increasing, timestamps at our clocks.
func TestRepReaderUnits(t *testing.T) {
	f := recorded(t, "h265")
	ti, err := parseInit(f.file(t, "init-stream0.m4s"), media.KindVideo)
	if err != nil {
		t.Fatal(err)
	}
	r := newRepReader(ti, 0)
	tracks, units, err := r.segment(f.file(t, "chunk-stream0-00001.m4s"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 1 || tracks[0].ClockRate != 90000 {
		t.Fatalf("tracks %+v", tracks)
	}
	if len(units) != 25 || !units[0].Key || units[0].DTS != 0 {
		t.Fatalf("%d units, first key %v DTS %d", len(units), units[0].Key, units[0].DTS)
	}
	streamtest.CheckPulled(t, tracks, units)
	// 25 fps: the last unit of the first second decodes at 24/25 s (B-frames move PTS only).
	if last := units[len(units)-1]; last.DTS != 24*3600 {
		t.Fatalf("last DTS %d, want %d", last.DTS, 24*3600)
	}
}

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
				switch p := ti.track.Params; {
				case k == media.KindVideo && (p.Width != 320 || p.Height != 180 || len(p.SPS) == 0 || len(p.PPS) == 0):
					t.Fatalf("video params %+v", p)
				case k == media.KindVideo && kind == "h265" && (ti.track.Codec != media.CodecH265 || len(p.VPS) == 0):
					t.Fatalf("H.265 track %v", ti.track.Codec)
				case k == media.KindAudio && (ti.track.Codec != media.CodecAAC || p.SampleRate != 48000 || len(p.AudioConfig) == 0):
					t.Fatalf("audio track %+v", ti.track)
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
					samples, end, err := parseSegment(b, ti, next)
					if err != nil {
						t.Fatalf("%s: %v", c, err)
					}
					if i > 0 && samples[0].dts != next {
						t.Fatalf("%s starts at %d, the previous ended at %d", c, samples[0].dts, next)
					}
					next = end
					for _, s := range samples {
						count++
						size += int64(len(s.data))
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

// TestNextBox covers the box header forms and refuses boxes that do not fit.
func TestNextBox(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		ok   bool
		end  int
	}{
		{"plain", []byte{0, 0, 0, 8, 'f', 'r', 'e', 'e'}, true, 8},
		{"to end", []byte{0, 0, 0, 0, 'm', 'd', 'a', 't', 1, 2, 3}, true, 11},
		{"large", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 17, 9}, true, 17},
		{"too long", []byte{0, 0, 0, 9, 'f', 'r', 'e', 'e'}, false, 0},
		{"too short", []byte{0, 0, 0, 7, 'f', 'r', 'e', 'e'}, false, 0},
		{"large too short", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 8}, false, 0},
		{"huge", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0xff, 0, 0, 0, 0, 0, 0, 0}, false, 0},
		{"truncated header", []byte{0, 0, 0}, false, 0},
	}
	for _, tc := range cases {
		bx, err := nextBox(tc.b, 0)
		if (err == nil) != tc.ok || (tc.ok && bx.end != tc.end) {
			t.Errorf("%s: box %+v, err %v", tc.name, bx, err)
		}
	}
}

// TestSplitNALUnits covers length-prefixed splitting.
func TestSplitNALUnits(t *testing.T) {
	got, err := splitNALUnits([]byte{0, 0, 0, 2, 0x67, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x65})
	if err != nil || len(got) != 2 || len(got[0]) != 2 || got[1][0] != 0x65 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range [][]byte{{0, 0, 0, 3, 1}, {0, 0, 1}, {0xff, 0xff, 0xff, 0xff, 1}} {
		if _, err := splitNALUnits(bad); err == nil {
			t.Errorf("%x accepted", bad)
		}
	}
}

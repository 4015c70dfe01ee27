package record

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/flv"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// mp4Durations is what a fragmented file states of its duration, box by box, in seconds,
// and what its fragments hold.
type mp4Durations struct {
	mvhd, mehd float64
	tkhd, mdhd map[uint32]float64 // by track ID
	media      map[uint32]float64 // by track ID: the end of its last sample, from the fragments
}

// readDurations decodes a fragmented MP4 with mp4ff and reads its duration boxes and the end
// of each track's samples.
func readDurations(t *testing.T, b []byte) mp4Durations {
	t.Helper()
	f, err := mp4.DecodeFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	moov := f.Init.Moov
	if moov == nil || moov.Mvex == nil || moov.Mvex.Mehd == nil {
		t.Fatal("no moov, mvex or mehd")
	}
	scale := float64(moov.Mvhd.Timescale)
	d := mp4Durations{
		mvhd: float64(moov.Mvhd.Duration) / scale, mehd: float64(moov.Mvex.Mehd.FragmentDuration) / scale,
		tkhd: map[uint32]float64{}, mdhd: map[uint32]float64{}, media: map[uint32]float64{},
	}
	scales := map[uint32]float64{}
	for _, trak := range moov.Traks {
		id := trak.Tkhd.TrackID
		scales[id] = float64(trak.Mdia.Mdhd.Timescale)
		d.tkhd[id] = float64(trak.Tkhd.Duration) / scale
		d.mdhd[id] = float64(trak.Mdia.Mdhd.Duration) / scales[id]
	}
	for _, seg := range f.Segments {
		for _, frag := range seg.Fragments {
			for _, traf := range frag.Moof.Trafs {
				end := traf.Tfdt.BaseMediaDecodeTime()
				for _, trun := range traf.Truns {
					for _, s := range trun.Samples {
						end += uint64(s.Dur)
					}
				}
				id := traf.Tfhd.TrackID
				d.media[id] = max(d.media[id], float64(end)/scales[id])
			}
		}
	}
	return d
}

// check asserts that every box states what the fragments hold: each track its own end, the
// movie the longest, within a tick of the movie timescale.
func (d mp4Durations) check(t *testing.T, what string) float64 {
	t.Helper()
	var longest float64
	for id, end := range d.media {
		longest = max(longest, end)
		if math.Abs(d.tkhd[id]-end) > 1e-4 || math.Abs(d.mdhd[id]-end) > 1e-4 {
			t.Errorf("%s: track %d: tkhd %.4f s, mdhd %.4f s; its samples end at %.4f s", what, id, d.tkhd[id], d.mdhd[id], end)
		}
	}
	if longest == 0 || math.Abs(d.mvhd-longest) > 1e-4 || math.Abs(d.mehd-longest) > 1e-4 {
		t.Errorf("%s: mvhd %.4f s, mehd %.4f s; the media ends at %.4f s", what, d.mvhd, d.mehd, longest)
	}
	return longest
}

// writeH264File writes the H.264 clip in format, closed or left as a crash leaves it, and
// returns the file's path and bytes.
func writeH264File(t *testing.T, format string, close bool) (string, []byte) {
	t.Helper()
	path, _ := writeFile(t, format, segtest.MakeTS(t, "h264"), close)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestMP4StatesDuration (issue 19): a closed MP4 or MOV file states its duration in mvhd,
// mehd, tkhd and mdhd, and players read it.
func TestMP4StatesDuration(t *testing.T) {
	for _, format := range []string{FormatMP4, FormatMOV} {
		t.Run(format, func(t *testing.T) {
			path, b := writeH264File(t, format, true)
			d := readDurations(t, b).check(t, format)
			if math.Abs(d-segtest.ClipSeconds) > 0.1 {
				t.Errorf("states %.3f s for a %d s clip", d, segtest.ClipSeconds)
			}
			if got := testutil.ProbeDuration(t, path); math.Abs(got-d) > 0.05 {
				t.Errorf("ffprobe %.3f s, the file states %.3f s", got, d)
			}
		})
	}
}

// TestMemoryStatesDuration (issue 19): the memory download, which has no mfra, states its
// duration too: GStreamer read 2 s of a 22 s download without it.
func TestMemoryStatesDuration(t *testing.T) {
	tracks, aus := clipUnits(t, segtest.MakeTS(t, "h264"))
	m := NewMemory(time.Minute)
	if err := writeSessions(m, tracks, aus, 2); err != nil { // two sessions, one timeline
		t.Fatal(err)
	}
	b := memoryMP4(t, m)
	d := readDurations(t, b).check(t, "memory")
	if math.Abs(d-m.Duration().Seconds()) > 0.1 {
		t.Errorf("states %.3f s, holds %v", d, m.Duration())
	}
	path := filepath.Join(t.TempDir(), "mem.mp4")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ProbeDuration(t, path); math.Abs(got-d) > 0.05 {
		t.Errorf("ffprobe %.3f s, the file states %.3f s", got, d)
	}
}

// flvMeta reads the onMetaData of an FLV file.
func flvMeta(t *testing.T, path string) flv.MetaData {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := flv.NewFileReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	tag, err := r.ReadTag()
	if err != nil || tag.Type != flv.TagScript {
		t.Fatalf("first tag: %v, type %d", err, tag.Type)
	}
	md, err := flv.ParseMetaData(tag.Body)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestFLVStatesDuration (issue 19): a closed FLV file's onMetaData states its duration, its
// size and its key frames (one every 2 s in the clip).
func TestFLVStatesDuration(t *testing.T) {
	path, w := writeFile(t, FormatFLV, segtest.MakeTS(t, "h264"), true)
	md := flvMeta(t, path)
	st, _ := os.Stat(path)
	if math.Abs(md.Duration.Seconds()-segtest.ClipSeconds) > 0.1 || md.FileSize != st.Size() || md.FileSize != w.Size() {
		t.Errorf("states %v and %d bytes; the clip is %d s, the file %d bytes", md.Duration, md.FileSize, segtest.ClipSeconds, st.Size())
	}
	if len(md.Keyframes) != segtest.ClipSeconds/2 {
		t.Errorf("index %v, want the %d key frames", md.Keyframes, segtest.ClipSeconds/2)
	}
	if got := testutil.ProbeDuration(t, path); math.Abs(got-md.Duration.Seconds()) > 0.05 {
		t.Errorf("ffprobe %.3f s, the file states %v", got, md.Duration)
	}
}

// TestRepairStatesDuration: a file cut by a crash states, once repaired, the duration of what
// was kept.
func TestRepairStatesDuration(t *testing.T) {
	for _, format := range []string{FormatMP4, FormatFLV} {
		t.Run(format, func(t *testing.T) {
			_, full := writeH264File(t, format, false)
			cut := filepath.Join(t.TempDir(), "cut."+format)
			if err := os.WriteFile(cut, full[:len(full)*2/3], 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(cut, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := Repair(format, f)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := f.Stat()
			_, _ = f.Seek(0, io.SeekStart)
			f.Close()
			var stated float64
			if format == FormatFLV {
				md := flvMeta(t, cut)
				stated = md.Duration.Seconds()
				if md.FileSize != st.Size() || len(md.Keyframes) < 3 {
					t.Errorf("states %d bytes and %d key frames; %d bytes kept", md.FileSize, len(md.Keyframes), st.Size())
				}
			} else {
				b, _ := os.ReadFile(cut)
				stated = readDurations(t, b).check(t, "repaired")
			}
			// Repair reports the span from the first unit; the file states it from time zero.
			if stated < kept.Seconds() || stated > kept.Seconds()+0.1 {
				t.Errorf("states %.3f s, kept %v", stated, kept)
			}
			if got := testutil.ProbeDuration(t, cut); math.Abs(got-stated) > 0.05 {
				t.Errorf("ffprobe %.3f s, the file states %.3f s", got, stated)
			}
		})
	}
}

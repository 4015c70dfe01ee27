package record

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// writeFile records the units of a TS clip into a new file of the format (writeUnits) and
// returns its path and writer.
func writeFile(t *testing.T, format, clip string, close bool) (string, Writer) {
	t.Helper()
	tracks, aus := clipUnits(t, clip)
	return writeUnits(t, format, tracks, aus, close)
}

func TestFilesReadByFFprobe(t *testing.T) {
	cases := []struct {
		format, clip string
		want         []string
	}{
		{FormatMP4, "h264", []string{"h264", "aac"}},
		{FormatMP4, "h265", []string{"hevc", "aac"}},
		{FormatMOV, "h264", []string{"h264", "aac"}},
		{FormatMP4, "h264-mp3", []string{"h264", "mp3"}},
		{FormatFLV, "h264", []string{"h264", "aac"}},
		{FormatAVI, "h264", []string{"h264", "aac"}},
		{FormatAVI, "h265", []string{"hevc", "aac"}},
		// H.265 in FLV is enhanced FLV ('hvc1'), which ffmpeg reads from 6.1 on (Debian 12 has 5.1).
	}
	for _, c := range cases {
		t.Run(c.format+"-"+c.clip, func(t *testing.T) {
			path, w := writeFile(t, c.format, segtest.MakeTS(t, c.clip), true)
			if got := codecs(t, path); !slices.Equal(got, c.want) {
				t.Errorf("codecs %v, want %v", got, c.want)
			}
			d := testutil.ProbeDuration(t, path)
			if math.Abs(d-segtest.ClipSeconds) > 0.5 {
				t.Errorf("ffprobe duration %.3f s, clip is %d s", d, segtest.ClipSeconds)
			}
			if got := w.Duration().Seconds(); math.Abs(got-segtest.ClipSeconds) > 0.5 {
				t.Errorf("Duration() %.3f s, clip is %d s", got, segtest.ClipSeconds)
			}
			if msg := decodeErrors(t, path); msg != "" {
				t.Errorf("decode errors: %s", msg)
			}
		})
	}
}

func TestMOVBrand(t *testing.T) {
	path, _ := writeFile(t, FormatMOV, segtest.MakeTS(t, "h264"), true)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[4:12]) != "ftypqt  " {
		t.Errorf("file starts %q, want a QuickTime ftyp", b[:12])
	}
}

// TestMP4FragmentsAndIndex checks the layout: init, moof+mdat pairs about a second each, mfra.
func TestMP4FragmentsAndIndex(t *testing.T) {
	path, _ := writeFile(t, FormatMP4, segtest.MakeTS(t, "h264"), true)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var types []string
	for off := int64(0); off < st.Size(); {
		typ, _, n, err := readBoxHeader(f, off, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
		off += n
	}
	moofs := 0
	for _, typ := range types {
		if typ == "moof" {
			moofs++
		}
	}
	// 12 s in fragments of about a second (cut at the first video unit past 1 s).
	if moofs < 10 || moofs > 13 {
		t.Errorf("%d fragments for 12 s, want about one a second: %v", moofs, types)
	}
	if types[0] != "ftyp" || types[1] != "moov" || types[len(types)-1] != "mfra" {
		t.Errorf("boxes %v: want ftyp, moov, fragments, mfra", types)
	}
}

// TestRepairMP4 cuts a file that was never closed at several places, as a crash would, and
// checks that the repaired file plays up to its last whole fragment.
func TestRepairMP4(t *testing.T) {
	for _, format := range []string{FormatMP4, FormatFLV, FormatAVI} {
		path, _ := writeFile(t, format, segtest.MakeTS(t, "h264"), false)
		full, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []float64{0.31, 0.55, 0.87, 1} {
			t.Run(format, func(t *testing.T) {
				cut := filepath.Join(t.TempDir(), "cut."+format)
				n := int(float64(len(full)) * frac)
				if err := os.WriteFile(cut, full[:n], 0o644); err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(cut, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				d, err := Repair(format, f)
				f.Close()
				if err != nil {
					t.Fatalf("repair at %.0f%%: %v", frac*100, err)
				}
				// What was cut loses at most the last second (a fragment, or a tag).
				want := frac * segtest.ClipSeconds
				if d.Seconds() < want-1.6 || d.Seconds() > want+0.5 {
					t.Errorf("repair at %.0f%%: kept %.2f s, about %.2f s was written", frac*100, d.Seconds(), want)
				}
				got := testutil.ProbeDuration(t, cut)
				if math.Abs(got-d.Seconds()) > 0.5 {
					t.Errorf("repair at %.0f%%: ffprobe %.2f s, Repair said %.2f s", frac*100, got, d.Seconds())
				}
				if msg := decodeErrors(t, cut); msg != "" {
					t.Errorf("repair at %.0f%%: decode errors: %s", frac*100, msg)
				}
			})
		}
	}
}

func TestRepairNothing(t *testing.T) {
	for _, format := range []string{FormatMP4, FormatFLV} {
		path := filepath.Join(t.TempDir(), "x."+format)
		if err := os.WriteFile(path, []byte("FL"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Repair(format, f)
		f.Close()
		if err == nil {
			t.Errorf("%s: repairing 2 bytes succeeded", format)
		}
	}
}

func TestMemoryWindow(t *testing.T) {
	tracks, aus := clipUnits(t, segtest.MakeTS(t, "h264"))
	m := NewMemory(5 * time.Second)
	if m.Open() != nil {
		t.Fatal("empty memory returned a file")
	}
	// Two sessions of the same clip: the second continues the timeline.
	if err := writeSessions(m, tracks, aus, 2); err != nil {
		t.Fatal(err)
	}
	// Whole GOPs (2 s) covering at least the window, at most one GOP more.
	if d := m.Duration(); d < 5*time.Second || d > 7*time.Second+500*time.Millisecond {
		t.Errorf("memory holds %v, want the 5 s window in whole GOPs", d)
	}
	path := filepath.Join(t.TempDir(), "mem.mp4")
	if err := os.WriteFile(path, memoryMP4(t, m), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ProbeDuration(t, path); math.Abs(got-m.Duration().Seconds()) > 0.5 {
		t.Errorf("ffprobe %.2f s, memory says %v", got, m.Duration())
	}
	if got := codecs(t, path); !slices.Equal(got, []string{"h264", "aac"}) {
		t.Errorf("codecs %v", got)
	}
	if msg := decodeErrors(t, path); msg != "" {
		t.Errorf("decode errors: %s", msg)
	}
}

func TestMemoryNewTracksStartAfresh(t *testing.T) {
	t264, a264 := clipUnits(t, segtest.MakeTS(t, "h264"))
	t265, a265 := clipUnits(t, segtest.MakeTS(t, "h265"))
	m := NewMemory(time.Minute)
	for _, s := range []struct {
		tracks []media.Track
		aus    []*media.AccessUnit
	}{{t264, a264}, {t265, a265}} {
		if err := m.SetTracks(s.tracks); err != nil {
			t.Fatal(err)
		}
		for _, au := range s.aus {
			if err := m.Write(au); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = m.SetTracks(t265) // flushes the open fragment
	path := filepath.Join(t.TempDir(), "mem.mp4")
	if err := os.WriteFile(path, memoryMP4(t, m), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := codecs(t, path); !slices.Equal(got, []string{"hevc", "aac"}) {
		t.Errorf("codecs %v, want only the new session's", got)
	}
	if got := testutil.ProbeDuration(t, path); math.Abs(got-segtest.ClipSeconds) > 0.5 {
		t.Errorf("ffprobe %.2f s, want the last session only", got)
	}
}

// TestLateAudioDuration: a publisher whose audio starts 2 s after its video (an encoder's
// audio device opened late) gets MP4 and MOV files whose duration ffprobe reads as the clip's.
// The audio track's first fragment started at 2 s with nothing before it, and ffmpeg counted
// its duration from zero on top of that start: 2 s too long.
func TestLateAudioDuration(t *testing.T) {
	tracks, aus := clipUnits(t, segtest.MakeTS(t, "h264"))
	var late []*media.AccessUnit
	var base time.Duration
	based := false
	for _, au := range aus {
		at := time.Duration(media.Rescale(au.DTS, tracks[au.Track].ClockRate, int(time.Second)))
		if !based {
			base, based = at, true
		}
		if tracks[au.Track].Codec.IsVideo() || at-base >= 2*time.Second {
			late = append(late, au)
		}
	}
	for _, format := range []string{FormatMP4, FormatMOV} {
		path, _ := writeUnits(t, format, tracks, late, true)
		if got := codecs(t, path); !slices.Equal(got, []string{"h264", "aac"}) {
			t.Errorf("%s: codecs %v", format, got)
		}
		if d := testutil.ProbeDuration(t, path); math.Abs(d-segtest.ClipSeconds) > 0.2 {
			t.Errorf("%s: ffprobe duration %.3f s, clip is %d s", format, d, segtest.ClipSeconds)
		}
		if msg := decodeErrors(t, path); msg != "" {
			t.Errorf("%s: decode errors: %s", format, msg)
		}
	}
}

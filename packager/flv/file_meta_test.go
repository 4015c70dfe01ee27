package flv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// writeFinished writes units with a FileWriter and finishes the file as a recorder does: the
// metadata MetaData gives, written over the one at the start.
func writeFinished(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewFileWriter(&buf, tracks)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := w.MetaData()
	before := append([]byte(nil), buf.Bytes()[start:start+int64(len(w.meta.body))]...)
	for _, au := range aus {
		if err := w.WriteAccessUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	b := buf.Bytes()
	off, body := w.MetaData()
	if off != start || len(body) != len(before) {
		t.Fatalf("metadata at %d of %d bytes, was at %d of %d", off, len(body), start, len(before))
	}
	if w.Size() != int64(len(b)) {
		t.Fatalf("Size %d, %d bytes written", w.Size(), len(b))
	}
	copy(b[off:], body)
	return b
}

// fileTags reads every tag of a file and the offset of each.
func fileTags(t testing.TB, b []byte) ([]Tag, []int64) {
	t.Helper()
	r, err := NewFileReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var tags []Tag
	var offs []int64
	off := int64(fileHeaderSize + 4)
	for {
		tag, err := r.ReadTag()
		if err != nil {
			return tags, offs
		}
		tags, offs = append(tags, tag), append(offs, off)
		off += tagHeaderSize + int64(len(tag.Body)) + 4
	}
}

// TestFileWriterMetaData: a finished file's onMetaData states its duration, its size, and
// every key frame (1 s apart here) with the time and offset of its tag.
func TestFileWriterMetaData(t *testing.T) {
	tracks := []media.Track{mediatest.H264(0), mediatest.AAC(1)}
	aus := mediatest.Synth(tracks, 6, 90000, 25, true)
	b := writeFinished(t, tracks, aus)
	tags, offs := fileTags(t, b)
	if len(tags) == 0 || tags[0].Type != TagScript {
		t.Fatal("the file does not start with its onMetaData")
	}
	md, err := ParseMetaData(tags[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	// Video ends at 6 s (150 frames of 40 ms), audio at the end of its last frame.
	if md.Duration < 6*time.Second || md.Duration > 6*time.Second+40*time.Millisecond || md.FileSize != int64(len(b)) {
		t.Errorf("duration %v, size %d; want 6 s and %d bytes", md.Duration, md.FileSize, len(b))
	}
	var want []Keyframe
	var vt VideoTag
	for i, tag := range tags {
		if tag.Type == TagVideo && ParseVideoTag(tag.Body, 4, &vt) == nil && vt.Key && vt.Type == PacketCodedFrames {
			want = append(want, Keyframe{Time: time.Duration(tag.Timestamp) * time.Millisecond, Pos: offs[i]})
		}
	}
	if len(want) != 6 || len(md.Keyframes) != len(want) {
		t.Fatalf("index %v, key frames %v", md.Keyframes, want)
	}
	for i := range want {
		if md.Keyframes[i] != want[i] {
			t.Errorf("index entry %d: %+v, the key frame is %+v", i, md.Keyframes[i], want[i])
		}
	}
}

// ffprobeIndex is what ffmpeg logs of an index at trace level.
var ffprobeIndex = regexp.MustCompile(`keyframe filepositions = (\d+) times = (\d+)`)

// TestFileWriterMetaDataFFprobe: ffmpeg reads the duration and every entry of the index.
func TestFileWriterMetaDataFFprobe(t *testing.T) {
	testutil.RequireFFmpeg(t)
	tracks := []media.Track{mediatest.H264(0), mediatest.AAC(1)}
	b := writeFinished(t, tracks, mediatest.Synth(tracks, 4, 0, 25, true))
	path := filepath.Join(t.TempDir(), "indexed.flv")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "trace", "-show_entries", "format=duration", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v: %s", err, out)
	}
	tags, _ := fileTags(t, b)
	md, _ := ParseMetaData(tags[0].Body)
	var got []Keyframe
	for _, m := range ffprobeIndex.FindAllSubmatch(out, -1) {
		pos, _ := strconv.ParseInt(string(m[1]), 10, 64)
		ms, _ := strconv.ParseInt(string(m[2]), 10, 64)
		got = append(got, Keyframe{Time: time.Duration(ms) * time.Millisecond, Pos: pos})
	}
	// ffmpeg reads the entries (and may list the slots that repeat the last one).
	if len(got) < len(md.Keyframes) || len(md.Keyframes) != 4 {
		t.Fatalf("ffmpeg read %d index entries %v; the file indexes %v", len(got), got, md.Keyframes)
	}
	for i, k := range got {
		if want := md.Keyframes[min(i, len(md.Keyframes)-1)]; k != want {
			t.Errorf("ffmpeg index entry %d: %+v, want %+v", i, k, want)
		}
	}
	if !bytes.Contains(out, []byte("\n"+strconv.FormatFloat(md.Duration.Seconds(), 'f', 6, 64))) {
		t.Errorf("ffprobe does not report the duration %v: %s", md.Duration, lastLine(out))
	}
}

// TestKeyframeIndexThinning: a long recording keeps at most IndexEntries entries, the first
// one and then evenly spaced ones covering the whole file.
func TestKeyframeIndexThinning(t *testing.T) {
	var x KeyframeIndex
	const keys = 20000 // 5.5 h of a key frame a second, every 500 ms
	for i := range 2 * keys {
		x.Add(uint32(i*500), int64(i))
	}
	if x.Len() > IndexEntries || x.Len() < IndexEntries/2 {
		t.Fatalf("%d entries, want at most %d and at least half", x.Len(), IndexEntries)
	}
	spacing := uint32(8000) // 1 s doubled three times: 20 000 s do not fit 4096 × 4 s
	if x.times[0] != 0 || x.spacing != spacing {
		t.Errorf("first entry at %d ms, spacing %d ms; want 0 and %d", x.times[0], x.spacing, spacing)
	}
	for i := 1; i < x.Len(); i++ {
		if d := x.times[i] - x.times[i-1]; d < spacing/2 || d > spacing || x.pos[i] != int64(x.times[i]/500) {
			t.Fatalf("entry %d: %d ms after the previous, at %d", i, d, x.pos[i])
		}
	}
	if last := x.times[x.Len()-1]; last < (2*keys-1)*500-spacing {
		t.Errorf("last entry at %d ms, the last key frame at %d", last, (2*keys-1)*500)
	}
}

// TestFillMetaDataRejects: a body that a FileWriter did not write is refused and left as it
// is.
func TestFillMetaDataRejects(t *testing.T) {
	good := newFileMeta([]media.Track{mediatest.H264(0)}).body
	for name, body := range map[string][]byte{
		"empty":        nil,
		"other name":   append(appendAMFString(nil, "onCuePoint"), good[13:]...),
		"truncated":    good[:len(good)/2],
		"no keyframes": good[:len(good)-IndexEntries*18-40],
	} {
		before := append([]byte(nil), body...)
		if err := FillMetaData(body, time.Second, 100, &KeyframeIndex{}, 0); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
		if !bytes.Equal(body, before) {
			t.Errorf("%s: the body changed", name)
		}
	}
	if err := FillMetaData(good, time.Second, 100, &KeyframeIndex{}, 0); err != nil {
		t.Errorf("a FileWriter's body: %v", err)
	}
}

// FuzzParseMetaData parses arbitrary onMetaData bodies: nothing may panic, and what parses
// can be filled in place.
func FuzzParseMetaData(f *testing.F) {
	f.Add(newFileMetaSlots([]media.Track{mediatest.H264(0), mediatest.AAC(1)}, 4).body)
	f.Add(newFileMetaSlots([]media.Track{mediatest.H264(0), mediatest.AAC(1)}, 4).body[:150])
	f.Add(newFileMetaSlots(nil, 0).body)
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := ParseMetaData(body); err != nil {
			return
		}
		var x KeyframeIndex
		x.Add(0, 13)
		if err := FillMetaData(body, time.Second, 1000, &x, 13); err != nil {
			t.Fatalf("parsed but not filled: %v", err)
		}
	})
}

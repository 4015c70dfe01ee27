package record

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// copyMP4 is what the download was before MemoryFile: every fragment copied into one buffer,
// then its decode times moved back in place, over the whole buffer at once. MemoryFile must
// read the same bytes.
func copyMP4(m *Memory) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.frags) == 0 {
		return nil
	}
	head := len(m.init.Data)
	out := slices.Clone(m.init.Data)
	ends := make([]int64, len(m.kept))
	for _, f := range m.frags {
		out = append(out, f.data...)
		for i, e := range f.ends {
			ends[i] = max(ends[i], e)
		}
	}
	start := max(firstDecodeTime(out[head:], m.kept), 0)
	if start > 0 {
		shiftDecodeTimes(out[head:], m.kept, start)
	}
	m.init.Apply(out[:head], trackDurations(m.kept, ends, start))
	return out
}

// bigUnits is syntheticUnits with video frames of frame bytes, so that fragments are many
// times larger than what indexes them.
func bigUnits(d time.Duration, frame int) ([]media.Track, []*media.AccessUnit) {
	tracks, aus := syntheticUnits(d)
	for i, au := range aus {
		if au.Track == 0 {
			p := make([]byte, frame+i%7) // sizes vary, so that boundaries do not line up
			p[0] = au.Payload[0][0]
			au.Payload = [][]byte{p}
		}
	}
	return tracks, aus
}

// filledMemory returns a Memory of window that took two sessions of d each of aus, the
// second continuing the timeline: it evicted the start, so that its times are moved back.
func filledMemory(t testing.TB, window, d time.Duration, frame int) (*Memory, []media.Track, []*media.AccessUnit) {
	t.Helper()
	tracks, aus := bigUnits(d, frame)
	m := NewMemory(window)
	if err := writeSessions(m, tracks, aus, 2); err != nil {
		t.Fatal(err)
	}
	return m, tracks, aus
}

// readAll reads f whole from its start.
func readAll(t testing.TB, f *MemoryFile) []byte {
	t.Helper()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMemoryFileBytes: the snapshot reads, byte for byte, what copying every fragment and
// rebasing it returned: whole, in odd-sized reads, and from each offset Seek reaches (every
// fragment's start and the end of its moof, and ranges across them).
func TestMemoryFileBytes(t *testing.T) {
	m, _, _ := filledMemory(t, 4*time.Second, 6*time.Second, 300)
	want := copyMP4(m)
	f := m.Open()
	if f == nil || len(f.frags) < 4 {
		t.Fatalf("snapshot %v: want several fragments", f)
	}
	if f.start <= 0 {
		t.Fatalf("the snapshot's times move back by %v: the test needs them moved", f.start)
	}
	if got := readAll(t, f); !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if f.Size() != int64(len(want)) {
		t.Errorf("Size %d, want %d", f.Size(), len(want))
	}
	for _, chunk := range []int{1, 7, 13, 4093, 65537} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, chunk)
		for {
			n, err := f.Read(buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("in reads of %d: first difference at %d", chunk, firstDiff(got, want))
		}
	}
	offs := []int64{0, 1, int64(len(f.init)) - 1, int64(len(want)) - 1, int64(len(want))}
	for _, fr := range f.frags {
		for _, at := range []int64{fr.at, fr.at + int64(fr.moof)} {
			offs = append(offs, at-1, at, at+1)
		}
	}
	for _, off := range offs {
		for _, n := range []int64{1, 9, 1000, 3 * int64(len(f.frags[0].data))} {
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n)
			k, err := io.ReadFull(f, got)
			end := min(off+n, int64(len(want)))
			if !bytes.Equal(got[:k], want[off:end]) || int64(k) != end-off || (k < int(n)) != (err != nil) {
				t.Fatalf("%d bytes at %d: read %d (%v), differ at %d", n, off, k, err, firstDiff(got[:k], want[off:end]))
			}
		}
	}
	// Seek from the current offset and from the end.
	if _, err := f.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if at, err := f.Seek(-50, io.SeekCurrent); at != 50 || err != nil {
		t.Errorf("SeekCurrent: %d %v", at, err)
	}
	if at, err := f.Seek(-10, io.SeekEnd); at != int64(len(want))-10 || err != nil {
		t.Errorf("SeekEnd: %d %v", at, err)
	}
	if b, _ := io.ReadAll(f); !bytes.Equal(b, want[len(want)-10:]) {
		t.Errorf("the last 10 bytes: %x", b)
	}
	if _, err := f.Seek(-1, io.SeekStart); err == nil {
		t.Error("seek before the start succeeded")
	}
	if _, err := f.Seek(int64(len(want))+5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("read past the end: %d %v", n, err)
	}
}

// firstDiff is the first offset where a and b differ (the shorter's length if one is a prefix).
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestMemoryFileEmpty: a memory that holds nothing has nothing to open.
func TestMemoryFileEmpty(t *testing.T) {
	m := NewMemory(time.Second)
	if f := m.Open(); f != nil {
		t.Fatalf("an empty memory opened %d bytes", f.Size())
	}
}

// TestMemoryFileOutlivesEviction: a snapshot reads the same bytes while the Memory goes on
// writing and lets every fragment it held go (run with -race: readers and the writer share
// the fragments' bytes).
func TestMemoryFileOutlivesEviction(t *testing.T) {
	m, tracks, aus := filledMemory(t, 2*time.Second, 4*time.Second, 300)
	f := m.Open()
	want := readAll(t, f)
	first := f.frags[0].data
	done := make(chan error, 1)
	// Two more sessions, 8 s: every fragment held when f was opened goes.
	go func() { done <- writeSessions(m, tracks, aus, 2) }()
	other := m.Open() // another snapshot, taken while the writer runs
	for writing := true; writing; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			writing = false
		default:
		}
		if got := readAll(t, f); !bytes.Equal(got, want) {
			t.Fatalf("the snapshot changed while the memory wrote: first difference at %d", firstDiff(got, want))
		}
		_ = readAll(t, other)
	}
	m.mu.Lock()
	for _, fr := range m.frags {
		if &fr.data[0] == &first[0] {
			t.Error("the memory still holds the snapshot's first fragment: nothing was evicted")
		}
	}
	m.mu.Unlock()
	if got := readAll(t, f); !bytes.Equal(got, want) {
		t.Fatalf("after eviction: first difference at %d", firstDiff(got, want))
	}
	if now := copyMP4(m); bytes.Equal(now, want) {
		t.Fatal("the memory holds what it held: the test evicted nothing")
	}
}

// TestMemoryFileAllocs: opening and reading a snapshot allocates a small part of its size
// (the fragments' list, the init segment, one moof at a time), not a copy of it.
func TestMemoryFileAllocs(t *testing.T) {
	m, _, _ := filledMemory(t, time.Minute, 20*time.Second, 4000)
	size := int64(len(copyMP4(m)))
	buf := make([]byte, 32<<10)
	dst := struct{ io.Writer }{io.Discard} // no ReaderFrom: reads go through buf
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := m.Open()
	n, err := io.CopyBuffer(dst, f, buf)
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("read %d bytes (%v), want %d", n, err, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	ratio := float64(alloc) / float64(size)
	t.Logf("%d fragments, %d bytes read, %d bytes allocated: ratio %.4f", len(f.frags), size, alloc, ratio)
	if len(f.frags) < 30 || ratio > 0.02 {
		t.Errorf("allocated %d bytes to read %d in %d fragments (ratio %.4f, want at most 0.02)", alloc, size, len(f.frags), ratio)
	}
}

// TestMemoryFileRanges: http.ServeContent answers range requests on a snapshot with the
// bytes of those ranges.
func TestMemoryFileRanges(t *testing.T) {
	m, _, _ := filledMemory(t, 4*time.Second, 6*time.Second, 300)
	want := copyMP4(m)
	f := m.Open()
	at := f.frags[2].at
	for _, tc := range []struct {
		rng  string
		from int64
		to   int64 // inclusive
	}{
		{"bytes=0-99", 0, 99},
		{"bytes=" + itoa(at-10) + "-" + itoa(at+10), at - 10, at + 10},
		{"bytes=" + itoa(at) + "-", at, int64(len(want)) - 1},
		{"bytes=-500", int64(len(want)) - 500, int64(len(want)) - 1},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/mem.mp4", nil)
		r.Header.Set("Range", tc.rng)
		http.ServeContent(w, r, "mem.mp4", time.Time{}, m.Open())
		if w.Code != http.StatusPartialContent || !bytes.Equal(w.Body.Bytes(), want[tc.from:tc.to+1]) {
			t.Errorf("%s: %d, %d bytes, want %d", tc.rng, w.Code, w.Body.Len(), tc.to+1-tc.from)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

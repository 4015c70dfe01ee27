package avi

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// progress is what a writer had written after a unit.
type progress struct {
	size int64
	dur  time.Duration
}

// TestRepairCuts simulates crashes: the clip is written without Close, in 64 KiB RIFF
// segments, and cut at random offsets; each cut file is repaired and must read to the media
// written before the cut, decoding without an error.
func TestRepairCuts(t *testing.T) {
	for _, tc := range codecCases {
		t.Run(tc.vcodec+"+"+tc.acodec, func(t *testing.T) {
			c := makeClip(t, tc.vcodec, tc.acodec)
			full := filepath.Join(t.TempDir(), "full.avi")
			f, err := os.Create(full)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(f, c.tracks, Options{RIFFLimit: minRIFFLimit})
			if err != nil {
				t.Fatal(err)
			}
			var steps []progress
			for _, au := range c.units {
				if err := w.WriteUnit(au); err != nil {
					t.Fatal(err)
				}
				steps = append(steps, progress{w.Size(), w.Duration()})
			}
			f.Close() // no Close of the writer: the process died
			data, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(data))))
			cuts := []int64{int64(len(data))}
			for range 5 {
				cuts = append(cuts, steps[0].size+rng.Int64N(int64(len(data))-steps[0].size))
			}
			for _, cut := range cuts {
				// The media wholly written before the cut, and with the unit being written then
				// (the first units are written together once the frame rate is known).
				i := sort.Search(len(steps), func(i int) bool { return steps[i].size > cut })
				lo, hi := steps[max(i-1, 0)].dur.Seconds(), steps[min(i, len(steps)-1)].dur.Seconds()
				path := filepath.Join(t.TempDir(), "cut.avi")
				if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				got := repairFile(t, path).Seconds()
				if got == 0 && lo == 0 {
					continue // cut inside the first chunk: a valid file without media
				}
				probed := testutil.ProbeDuration(t, path)
				t.Logf("cut at %d of %d: repaired %.3f s, ffprobe %.3f s, written %.3f to %.3f s", cut, len(data), got, probed, lo, hi)
				for _, d := range []float64{got, probed} {
					if d < lo-0.1 || d > hi+0.1 {
						t.Errorf("cut at %d: repaired %.3f s, ffprobe %.3f s, want %.3f to %.3f s", cut, got, probed, lo, hi)
					}
				}
				if msg := decodeErrors(t, path); msg != "" {
					t.Errorf("cut at %d: ffmpeg decoding: %s", cut, msg)
				}
			}
		})
	}
}

// TestRepairClosed checks that repairing a closed file keeps all of it.
func TestRepairClosed(t *testing.T) {
	c := makeClip(t, "libx264", "aac")
	path, w := writeFile(t, c, Options{RIFFLimit: minRIFFLimit}, false)
	got := repairFile(t, path)
	if got != w.Duration() {
		t.Errorf("repaired %v, written %v", got, w.Duration())
	}
	checkFile(t, c, path, "h264", "aac")
}

// repairFile repairs the file at path.
func repairFile(t *testing.T, path string) time.Duration {
	t.Helper()
	d, err := Repair(openRW(t, path))
	if err != nil {
		t.Fatalf("Repair %s: %v", path, err)
	}
	return d
}

func TestRepairNotAVI(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("RIFF\x00\x00\x00\x00WAVE"), make([]byte, 100)} {
		f := writeRW(t, filepath.Join(t.TempDir(), "x.avi"), data)
		if _, err := Repair(f); err == nil {
			t.Errorf("Repair of %q: no error", data)
		}
		if b, _ := io.ReadAll(f); len(b) != len(data) {
			t.Errorf("Repair of %q changed the file", data)
		}
	}
}

// openRW opens path for reading and writing, as Repair wants its file; the file is closed when
// the test ends.
func openRW(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// writeRW writes data to path and opens it with openRW.
func writeRW(t testing.TB, path string, data []byte) *os.File {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return openRW(t, path)
}

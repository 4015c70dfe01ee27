package record

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
)

const mib = 1 << 20

// flood describes a video stream for the budget tests: frame bytes, DTS step in 90 kHz ticks
// (3600 is 25 fps; 1 is a source whose timestamps hardly advance), a key frame every gop
// frames (0: only the first).
type flood struct {
	frame int
	step  int64
	gop   int
}

// videoTrack is the synthetic H.264 track of syntheticUnits.
func videoTrack() media.Track {
	tracks, _ := syntheticUnits(0)
	return tracks[0]
}

// payloads returns a key frame's and another frame's slice. Units share them: the writers
// copy what they keep.
func (f flood) payloads() [2][]byte {
	key, delta := make([]byte, f.frame), make([]byte, f.frame)
	key[0], delta[0] = 0x65, 0x41
	return [2][]byte{key, delta}
}

// unit returns frame i of f.
func (f flood) unit(i int, payloads [2][]byte) *media.AccessUnit {
	key := i == 0 || f.gop > 0 && i%f.gop == 0
	nal := payloads[1]
	if key {
		nal = payloads[0]
	}
	dts := int64(i) * f.step
	return &media.AccessUnit{Track: 0, DTS: dts, PTS: dts, Key: key, Payload: [][]byte{nal}}
}

// TestMemoryByteBudget: a memory recording holds its window in whole GOPs within its byte
// budget, however the stream's timestamps run, and what it holds starts at a key frame.
func TestMemoryByteBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    MemoryOptions
		src     flood
		frames  int
		evicted bool // evicted for the budget
		cuts    bool // fragments cut early
		empty   bool // nothing held: a GOP over the whole budget went
		window  bool // holds the whole window
	}{
		{"8 Mbit/s within its budget", MemoryOptions{Window: 5 * time.Second}, flood{40_000, 3600, 25}, 500, false, false, false, true},
		{"over the byte rate", MemoryOptions{Window: 5 * time.Second, Limit: budget.Limit{ByteRate: 200_000}}, flood{40_000, 3600, 25}, 500, true, false, false, false},
		{"over the cap", MemoryOptions{Window: 5 * time.Second, Limit: budget.Limit{MaxBytes: 2_000_000}}, flood{40_000, 3600, 25}, 500, true, false, false, false},
		{"timestamps that hardly advance", MemoryOptions{Limit: budget.Limit{MaxBytes: 64 * mib}}, flood{mib, 1, 10}, 300, true, true, false, false},
		{"no key frame after the first", MemoryOptions{Limit: budget.Limit{MaxBytes: 40 * mib}}, flood{mib, 1, 0}, 200, true, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testutil.SyncBuffer
			tc.opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
			m := NewMemoryWith(tc.opts)
			if err := m.SetTracks([]media.Track{videoTrack()}); err != nil {
				t.Fatal(err)
			}
			payload := tc.src.payloads()
			for i := range tc.frames {
				if err := m.Write(tc.src.unit(i, payload)); err != nil {
					t.Fatal(err)
				}
			}
			st := m.Stats()
			if st.Budget != tc.opts.Budget() || st.Bytes > st.Budget {
				t.Errorf("holds %d bytes, budget %d (options say %d)", st.Bytes, st.Budget, tc.opts.Budget())
			}
			if (st.BudgetEvicted > 0) != tc.evicted || (st.EarlyCuts > 0) != tc.cuts || (st.Fragments == 0) != tc.empty {
				t.Errorf("stats %+v: want evicted %v, cuts %v, empty %v", st, tc.evicted, tc.cuts, tc.empty)
			}
			m.mu.Lock()
			if len(m.frags) > 0 && !m.frags[0].key {
				t.Error("what is held does not start at a key frame")
			}
			m.mu.Unlock()
			if d := m.Duration(); tc.window && (d < tc.opts.Window || d > tc.opts.Window+time.Second) {
				t.Errorf("holds %v, want the %v window in whole GOPs", d, tc.opts.Window)
			}
			if tc.evicted && !strings.Contains(logs.String(), "budget=memory_bytes") {
				t.Errorf("evictions not logged with their budget:\n%s", logs.String())
			}
			if tc.empty {
				if st.Discarded == 0 {
					t.Error("fragments without a key frame were kept after the GOP went")
				}
				// The next key frame starts afresh.
				for i := range 60 {
					au := tc.src.unit(i, payload)
					au.Key = i%20 == 0
					au.DTS, au.PTS = int64(tc.frames+i), int64(tc.frames+i)
					if err := m.Write(au); err != nil {
						t.Fatal(err)
					}
				}
				if st := m.Stats(); st.Fragments == 0 || st.Bytes > st.Budget {
					t.Errorf("after key frames: %+v", st)
				}
			}
			if f := memoryMP4(t, m); st.Fragments > 0 && len(f) != len(m.init.Data)+int(m.Stats().Bytes) {
				t.Errorf("MP4 of %d bytes, holds %d", len(f), m.Stats().Bytes)
			}
		})
	}
}

// TestMP4PendingFragmentCap: a recording's open fragment is cut before it passes
// MaxFragmentBytes, whatever the timestamps say; a normal stream's fragments last a second.
func TestMP4PendingFragmentCap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		src    flood
		frames int
		cuts   int64
	}{
		{"8 Mbit/s", flood{40_000, 3600, 50}, 250, 0},
		{"timestamps that hardly advance", flood{mib, 1, 50}, 100, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.mp4")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := NewMP4(f, []media.Track{videoTrack()}, false)
			if err != nil {
				t.Fatal(err)
			}
			payload := tc.src.payloads()
			for i := range tc.frames {
				if err := m.WriteUnit(tc.src.unit(i, payload)); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if m.EarlyCuts() != tc.cuts {
				t.Errorf("%d early cuts, want %d", m.EarlyCuts(), tc.cuts)
			}
			st, _ := f.Stat()
			moofs := 0
			for off := int64(0); off < st.Size(); {
				typ, _, n, err := readBoxHeader(f, off, st.Size())
				if err != nil {
					t.Fatal(err)
				}
				if typ == "moof" {
					moofs++
				}
				if typ == "mdat" && n > MaxFragmentBytes+8 {
					t.Errorf("fragment %d holds %d bytes, over the %d cap", moofs, n, MaxFragmentBytes)
				}
				off += n
			}
			if want := tc.frames / 25; tc.cuts == 0 && (moofs < want-1 || moofs > want+1) {
				t.Errorf("%d fragments for %d s", moofs, want)
			}
		})
	}
}

// TestAVIPendingBytes: the units an AVI writer holds until it knows the frame rate are
// bounded by bytes too: units whose timestamps hardly advance are written past 32 MiB.
func TestAVIPendingBytes(t *testing.T) {
	tracks, _ := syntheticUnits(0)
	for _, tc := range []struct {
		name    string
		frame   int
		units   int
		started bool
	}{
		{"a few small units wait", 1000, 8, false},
		{"32 MiB do not wait", mib, 33, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := newFileWriter(t, FormatAVI, tracks)
			header := w.Size()
			frame := make([]byte, tc.frame)
			frame[0], frame[1] = 0xff, 0xf1 // ADTS-like bytes: the writer does not parse AAC
			for i := range tc.units {
				au := &media.AccessUnit{Track: 1, DTS: int64(i), PTS: int64(i), Key: true, Payload: [][]byte{frame}}
				if err := w.WriteUnit(au); err != nil {
					t.Fatal(err)
				}
			}
			if started := w.Size() > header; started != tc.started {
				t.Errorf("after %d units of %d bytes: %d bytes written past the header, want started %v",
					tc.units, tc.frame, w.Size()-header, tc.started)
			}
		})
	}
}

package stream

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

const mib = 1 << 20

// bigPayload is shared by the big units of these tests: the stream counts bytes by the
// payload's length, whoever owns the memory.
var bigPayload = make([]byte, mib)

// big returns u with a payload of n MiB (n slices of bigPayload).
func big(u *media.AccessUnit, n int) *media.AccessUnit {
	u.Payload = nil
	for range n {
		u.Payload = append(u.Payload, bigPayload)
	}
	return u
}

// bigGOP is gopUnits with 1 MiB video units and small audio units.
func bigGOP(base, n int) []*media.AccessUnit {
	units := gopUnits(base, n)
	for _, u := range units {
		if u.Track == 0 {
			big(u, 1)
		}
	}
	return units
}

// TestReaderByteBudget: a slow reader of a high-bitrate stream overflows its byte budget long
// before its unit count, drops, skips to a key frame, and is closed past the lag limit; the
// counters say which budget it ran into.
func TestReaderByteBudget(t *testing.T) {
	clk := newFakeClock()
	var logs lockedBuffer
	opts := testOptions(clk)
	opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	opts.QueueBytes = 8 * mib // 1024 units, but eight 1 MiB frames
	s, p := publishing(t, opts)
	fast := mustReader(t, s, "fast")
	slow := mustReader(t, s, "slow")

	// Video only, so that bytes and units line up: unit i of a GOP is i+1 MiB into it.
	vgop := func(base int) []*media.AccessUnit {
		units := make([]*media.AccessUnit, 10)
		for i := range units {
			units[i] = big(vid(base+i, i == 0), 1)
		}
		return units
	}
	gops := [][]*media.AccessUnit{vgop(0), vgop(100), vgop(200)}
	write := func(units []*media.AccessUnit) {
		for _, au := range units {
			writeAll(t, p, au)
			expectUnits(t, fast, []*media.AccessUnit{au})
			clk.Advance(40 * time.Millisecond)
		}
	}
	write(gops[0]) // eight fit 8 MiB; the ninth overflows, the tenth is skipped
	if st := slow.Stats(); st.Dropped != 2 || st.ByteOverflows != 1 || st.UnitOverflows != 0 {
		t.Fatalf("after one GOP: %+v, want 2 dropped in 1 byte overflow", st)
	}
	write(gops[1]) // all dropped: the queue is still full at the key frame
	if d := slow.Dropped(); d != 12 {
		t.Fatalf("dropped %d, want 12", d)
	}
	expectUnits(t, slow, gops[0][:5]) // three left: 3 MiB, at most half the budget
	// Resumes at the key frame: five more fit (8 MiB), the sixth overflows again.
	write(gops[2])
	if st := slow.Stats(); st.Dropped != 17 || st.ByteOverflows != 2 || st.UnitOverflows != 0 {
		t.Fatalf("after the third GOP: %+v, want 17 dropped in 2 byte overflows", st)
	}
	expectUnits(t, slow, gops[0][5:8])
	if first := mustRead(t, slow); first != gops[2][0] || !first.Key {
		t.Fatalf("first unit after the drop is %+v, want the key frame", first)
	}
	expectUnits(t, slow, gops[2][1:5])
	if au := readNow(t, slow); au != nil {
		t.Fatalf("unexpected unit %+v", au)
	}
	if !strings.Contains(logs.String(), "budget=queue_bytes limit=8388608") {
		t.Errorf("drop log does not name the byte budget:\n%s", logs.String())
	}

	// It stops reading: its queue fills at the next key frame and stays full; it is closed
	// once it has been behind for the lag limit (5 s: 125 units at 25 a second).
	var closedAfter int
	for i := range 200 {
		write([]*media.AccessUnit{big(vid(300+i, i%10 == 0), 1)})
		if s.Stats().Readers == 1 {
			closedAfter = i
			break
		}
	}
	if closedAfter < 125 || closedAfter > 140 {
		t.Errorf("slow reader closed after %d units, want about 125 past the overflow", closedAfter)
	}
	if _, err := slow.Read(context.Background()); !errors.Is(err, ErrReaderTooSlow) {
		t.Errorf("slow reader Read: %v, want ErrReaderTooSlow", err)
	}
	st := s.Stats()
	if st.Evicted != 1 || st.ByteOverflows != 3 || st.UnitOverflows != 0 || st.Dropped != slow.Dropped() {
		t.Errorf("stream stats %+v; slow reader %+v", st, slow.Stats())
	}
	if fast.Dropped() != 0 {
		t.Errorf("fast reader dropped %d", fast.Dropped())
	}
	if !strings.Contains(logs.String(), "reader closed: too slow") || !strings.Contains(logs.String(), "byte_overflows=3") {
		t.Errorf("eviction not logged with its overflows:\n%s", logs.String())
	}
}

// TestReaderQueueUnitsAndBytes: with many small units the count overflows first, with a few
// big ones the bytes; a unit bigger than the whole byte budget still reaches an empty queue.
func TestReaderQueueUnitsAndBytes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		unitMiB     int
		units       int
		wantUnits   int64 // unit overflows
		wantBytes   int64 // byte overflows
		wantDropped int64
	}{
		{"small units overflow the count", 0, 20, 1, 0, 4},
		{"big units overflow the bytes", 1, 20, 0, 1, 16},
		{"a unit over the budget fits an empty queue", 5, 3, 0, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions(newFakeClock())
			opts.QueueSize = 16
			opts.QueueBytes = 4 * mib
			s, p := publishing(t, opts)
			r := mustReader(t, s, "r")
			for i := range tc.units {
				u := vid(i, i == 0)
				if tc.unitMiB > 0 {
					big(u, tc.unitMiB)
				}
				writeAll(t, p, u)
			}
			st := r.Stats()
			if st.UnitOverflows != tc.wantUnits || st.ByteOverflows != tc.wantBytes || st.Dropped != tc.wantDropped {
				t.Errorf("reader stats %+v, want %d unit and %d byte overflows, %d dropped",
					st, tc.wantUnits, tc.wantBytes, tc.wantDropped)
			}
			if got := int64(queued(r)); got != int64(tc.units)-tc.wantDropped {
				t.Errorf("%d units queued, want %d", got, int64(tc.units)-tc.wantDropped)
			}
		})
	}
}

// TestGOPByteBudget: the GOP kept for new readers is bounded by the queue's bytes too.
func TestGOPByteBudget(t *testing.T) {
	var logs lockedBuffer
	opts := testOptions(newFakeClock())
	opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	opts.QueueBytes = 4 * mib
	s, p := publishing(t, opts)

	gop := bigGOP(0, 5) // key (1 MiB), audio, video (1 MiB), audio, video (1 MiB): 3 MiB
	writeAll(t, p, gop...)
	expectUnits(t, mustReader(t, s, "within"), gop)

	writeAll(t, p, big(vid(10, false), 1), big(vid(11, false), 1)) // past 4 MiB: given up
	late := mustReader(t, s, "late")
	if au := readNow(t, late); au != nil {
		t.Fatalf("got %+v from a GOP over the byte budget", au)
	}
	if n := s.Stats().GOPOverflows; n != 1 {
		t.Errorf("GOPOverflows %d, want 1", n)
	}
	if !strings.Contains(logs.String(), "budget=gop_bytes limit=4194304") {
		t.Errorf("GOP overflow not logged with its budget:\n%s", logs.String())
	}
	next := bigGOP(100, 3)
	writeAll(t, p, next...)
	expectUnits(t, late, next)
	expectUnits(t, mustReader(t, s, "next"), next)
}

// TestAudioPrefillByteBudget: without video, a new reader starts with the last units that fit
// the byte budget.
func TestAudioPrefillByteBudget(t *testing.T) {
	opts := testOptions(newFakeClock())
	opts.QueueBytes = 4 * mib
	s := New("radio", opts)
	defer s.Close()
	p := mustPublish(t, s, audioTracks)
	var units []*media.AccessUnit
	for i := range 12 {
		au := big(aud(i), 1)
		au.Track = 0
		units = append(units, au)
	}
	writeAll(t, p, units...)
	expectUnits(t, mustReader(t, s, "r"), units[8:])
	if n := s.Stats().GOPOverflows; n != 0 {
		t.Errorf("GOPOverflows %d without video", n)
	}
}

// TestRefuseUnitOverSizeLimit: a unit over MaxUnitBytes never reaches a reader; the video that
// follows it waits for the next key frame, audio goes on; refusals are counted and logged at
// most once a second.
func TestRefuseUnitOverSizeLimit(t *testing.T) {
	clk := newFakeClock()
	var logs lockedBuffer
	opts := testOptions(clk)
	opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	opts.MaxUnitBytes = 2 * mib
	s, p := publishing(t, opts)
	r := mustReader(t, s, "r")

	key := big(vid(0, true), 2) // at the limit: accepted
	huge := big(vid(1, false), 3)
	after := vid(2, false) // refers to the refused frame: dropped
	a := aud(3)
	hugeAudio := big(aud(4), 3)
	next := vid(10, true)
	writeAll(t, p, key, huge, after, a, hugeAudio, next)
	expectUnits(t, r, []*media.AccessUnit{key, a, next})
	if au := readNow(t, r); au != nil {
		t.Fatalf("unexpected unit %+v", au)
	}
	if st := s.Stats(); st.Refused != 2 || st.UnitsIn != 3 || st.BytesIn != int64(key.Size()+a.Size()+next.Size()) {
		t.Errorf("stats %+v, want 2 refused and 3 units in", st)
	}
	if n := strings.Count(logs.String(), "unit refused"); n != 1 {
		t.Fatalf("%d refusal messages within a second, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "budget=max_unit_bytes limit=2097152 bytes=3145728") {
		t.Errorf("refusal log does not name the budget:\n%s", logs.String())
	}
	clk.Advance(time.Second)
	writeAll(t, p, big(vid(11, false), 3))
	if n := strings.Count(logs.String(), "unit refused"); n != 2 || !strings.Contains(logs.String(), "refused=2 total=3") {
		t.Errorf("second refusal message missing or miscounted:\n%s", logs.String())
	}
}

package stream

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

func TestDiscontinuityAfterReattach(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	defer s.Close()
	readers := []*Reader{mustReader(t, s, "a"), mustReader(t, s, "b")}

	for cycle := range 4 { // the first session, then three reconnects
		p := mustPublish(t, s, avTracks)
		if !s.Publishing() {
			t.Fatal("Publishing() = false with a publisher")
		}
		key, next := vid(cycle*10, true), vid(cycle*10+1, false)
		writeAll(t, p, key, next)
		for _, r := range readers {
			got := mustRead(t, r)
			if cycle == 0 {
				if got != key || got.Discontinuity {
					t.Fatalf("cycle 0, reader %s: got %+v, want the key frame unflagged", r.Name(), got)
				}
			} else {
				if !got.Discontinuity {
					t.Fatalf("cycle %d, reader %s: first unit without Discontinuity", cycle, r.Name())
				}
				if got == key || got.DTS != key.DTS || &got.Payload[0][0] != &key.Payload[0][0] {
					t.Fatalf("cycle %d, reader %s: want a copy of the key frame sharing its payload", cycle, r.Name())
				}
			}
			if key.Discontinuity {
				t.Fatal("the shared unit was modified")
			}
			if got := mustRead(t, r); got != next || got.Discontinuity {
				t.Fatalf("cycle %d, reader %s: second unit %+v, want the shared unit unflagged", cycle, r.Name(), got)
			}
		}
		p.Close()
		p.Close()
		if s.Publishing() {
			t.Fatal("Publishing() = true after Close")
		}
	}
	if n := s.Discontinuities(); n != 3 {
		t.Errorf("Discontinuities() = %d, want 3", n)
	}
	if n := s.Stats().Discontinuities; n != 3 {
		t.Errorf("Stats().Discontinuities = %d, want 3", n)
	}
}

func TestDiscontinuityNotForReaderJoiningInGap(t *testing.T) {
	s, p := publishing(t, testOptions(newFakeClock()))
	writeAll(t, p, vid(0, true))
	p.Close()
	r := mustReader(t, s, "joined in the gap")
	if au := readNow(t, r); au != nil {
		t.Fatalf("reader joining without a publisher got %+v", au)
	}
	p = mustPublish(t, s, avTracks)
	key := vid(10, true)
	writeAll(t, p, key)
	if got := mustRead(t, r); got != key || got.Discontinuity {
		t.Fatalf("got %+v, want the key frame unflagged: this reader starts here", got)
	}
}

func TestDiscontinuitySurvivesDrops(t *testing.T) {
	s, p := publishing(t, queueOptions(newFakeClock(), 4))
	r := mustReader(t, s, "r")
	old := gopUnits(0, 4)
	writeAll(t, p, old...) // fills the queue
	p.Close()

	p = mustPublish(t, s, avTracks)
	writeAll(t, p, gopUnits(10, 3)...) // dropped: the queue is full
	expectUnits(t, r, old)
	key := vid(20, true)
	writeAll(t, p, key)
	got := mustRead(t, r)
	if !got.Discontinuity || got.DTS != key.DTS {
		t.Fatalf("first unit received after the reconnect is %+v, want the key frame flagged", got)
	}
	if r.Dropped() != 3 {
		t.Errorf("Dropped() = %d, want 3", r.Dropped())
	}
}

// A publisher that sets Discontinuity itself gets it passed through unchanged, without a copy.
func TestDiscontinuityAlreadySet(t *testing.T) {
	s, p := publishing(t, testOptions(newFakeClock()))
	r := mustReader(t, s, "r")
	writeAll(t, p, vid(0, true))
	mustRead(t, r)
	p.Close()
	p = mustPublish(t, s, avTracks)
	key := &media.AccessUnit{Key: true, Discontinuity: true}
	writeAll(t, p, key)
	if got := mustRead(t, r); got != key {
		t.Fatalf("got %p, want the shared unit %p", got, key)
	}
}

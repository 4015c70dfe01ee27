package link

import (
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// model is the loss list's reference: a set of offsets from a base sequence number.
type model map[int]bool

func (m model) check(t *testing.T, l *lossList, base uint32) {
	t.Helper()
	if l.len() != len(m) {
		t.Fatalf("len %d, model %d (%v)", l.len(), len(m), l.r)
	}
	prev := -2
	for _, r := range l.r {
		f, e := int(wire.SeqDiff(r.first, base)), int(wire.SeqDiff(r.last, base))
		if f > e || f <= prev+1 {
			t.Fatalf("ranges out of order or adjacent: %v", l.r)
		}
		for s := f; s <= e; s++ {
			if !m[s] {
				t.Fatalf("member %d not in model", s)
			}
		}
		prev = e
	}
}

func TestLossListAgainstModel(t *testing.T) {
	for _, base := range []uint32{0, wire.SeqMask - 500} {
		rng := rand.New(rand.NewPCG(1, uint64(base)))
		var l lossList
		m := model{}
		seq := func(off int) uint32 { return wire.SeqAdd(base, int32(off)) }
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(6); op {
			case 0, 1:
				f := rng.IntN(1000)
				e := f + rng.IntN(20)
				added := 0
				for s := f; s <= e; s++ {
					if !m[s] {
						added++
						m[s] = true
					}
				}
				if got := l.add(seq(f), seq(e)); got != added {
					t.Fatalf("add %d..%d brought %d, want %d", f, e, got, added)
				}
			case 2:
				s := rng.IntN(1000)
				if got := l.remove(seq(s)); got != m[s] {
					t.Fatalf("remove %d = %v", s, got)
				}
				delete(m, s)
			case 3:
				f := rng.IntN(1000)
				e := f + rng.IntN(50)
				want := 0
				for s := f; s <= e; s++ {
					if m[s] {
						want++
						delete(m, s)
					}
				}
				if got := l.removeRange(seq(f), seq(e)); got != want {
					t.Fatalf("removeRange %d..%d = %d, want %d", f, e, got, want)
				}
			case 4:
				if rng.IntN(10) == 0 {
					s := rng.IntN(1000)
					want := 0
					for k := range m {
						if k < s {
							want++
							delete(m, k)
						}
					}
					if got := l.removeBelow(seq(s)); got != want {
						t.Fatalf("removeBelow %d = %d, want %d", s, got, want)
					}
				}
			case 5:
				s, ok := l.popFirst()
				if ok != (len(m) > 0) {
					t.Fatalf("popFirst ok=%v with %d members", ok, len(m))
				}
				if ok {
					off := int(wire.SeqDiff(s, base))
					for k := range m {
						if k < off {
							t.Fatalf("popFirst %d, but %d is lower", off, k)
						}
					}
					delete(m, off)
				}
			}
			m.check(t, &l, base)
		}
	}
}

package bench

import "testing"

// tsPkt builds a 188-byte packet of pid with continuity counter cc; pes starts a video PES
// with the given PTS.
func tsPkt(pid uint16, cc uint8, pes bool, pts int64) []byte {
	b := make([]byte, tsSize)
	b[0], b[1], b[2], b[3] = 0x47, byte(pid>>8)&0x1f, byte(pid), 0x10|cc&0x0f
	if pes {
		b[1] |= 0x40
		h := []byte{0, 0, 1, 0xe0, 0, 0, 0x80, 0x80, 5,
			byte(0x21 | (pts>>29)&0x0e), byte(pts >> 22), byte(pts>>14) | 1, byte(pts >> 7), byte(pts<<1) | 1}
		copy(b[4:], h)
	}
	return b
}

func TestTSCount(t *testing.T) {
	var c TSCount
	var payload []byte
	payload = append(payload, tsPkt(0x100, 0, true, 126000)...)
	payload = append(payload, tsPkt(0x100, 1, false, 0)...)
	payload = append(payload, tsPkt(0x101, 7, false, 0)...)
	payload = append(payload, tsPkt(0x100, 2, true, 129000)...)
	c.Feed(payload)
	if c.Packets != 4 || c.Frames != 2 || c.CCErrors != 0 || c.FirstPTS != 126000 || c.LastPTS != 129000 {
		t.Fatalf("count %+v", c)
	}
	// A lost packet: the counter jumps from 2 to 4. A repeated counter is a legal duplicate.
	c.Feed(append(tsPkt(0x100, 4, false, 0), tsPkt(0x100, 4, false, 0)...))
	if c.CCErrors != 1 {
		t.Fatalf("continuity errors %d, want 1", c.CCErrors)
	}
	// The counter wraps from 15 to 0.
	c.Feed(append(tsPkt(0x101, 15, false, 0)[:], tsPkt(0x101, 0, false, 0)...))
	if c.CCErrors != 2 { // 7 → 15 is a gap, 15 → 0 is not
		t.Fatalf("continuity errors %d, want 2", c.CCErrors)
	}
	bad := tsPkt(0x100, 5, false, 0)
	bad[0] = 0
	c.Feed(bad)
	if c.CCErrors != 3 {
		t.Fatalf("a packet without sync byte is not counted as an error")
	}
}

func TestVideoPTS(t *testing.T) {
	for _, pts := range []int64{0, 126000, 1<<33 - 1} {
		p, ok := parseTS(tsPkt(0x100, 0, true, pts))
		if !ok {
			t.Fatal("packet not parsed")
		}
		got, ok := videoPTS(p.payload)
		if !ok || got != pts {
			t.Fatalf("pts %d: got %d %v", pts, got, ok)
		}
	}
	audio := tsPkt(0x101, 0, true, 5)
	audio[4+3] = 0xc0
	p, _ := parseTS(audio)
	if _, ok := videoPTS(p.payload); ok {
		t.Fatal("an audio PES taken for video")
	}
}

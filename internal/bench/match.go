package bench

import (
	"bytes"
	"hash/maphash"
	"time"
)

// packetIndex finds a clip's MPEG-TS packets by content. A relay that passes the publisher's
// bytes on unchanged delivers packets that each equal one of the clip's, so a receiver can tell
// which packet of the clip it read, and so when the pacer sent it.
type packetIndex struct {
	data  []byte
	n     int
	seed  maphash.Seed
	first map[uint64]int32 // the first packet of each content hash
	next  []int32          // the next packet with the same hash, -1 after the last
}

// newPacketIndex indexes the 188-byte packets of data.
func newPacketIndex(data []byte) *packetIndex {
	n := len(data) / tsSize
	x := &packetIndex{data: data, n: n, seed: maphash.MakeSeed(), first: make(map[uint64]int32, n), next: make([]int32, n)}
	// Built from the end, so that each chain runs in increasing packet order.
	for i := n - 1; i >= 0; i-- {
		h := maphash.Bytes(x.seed, x.packet(i))
		x.next[i] = -1
		if j, ok := x.first[h]; ok {
			x.next[i] = j
		}
		x.first[h] = int32(i)
	}
	return x
}

// packet returns packet i of the clip.
func (x *packetIndex) packet(i int) []byte { return x.data[i*tsSize : (i+1)*tsSize] }

// clipMatcher places the packets one receiver reads, in order, at their index in the clip: the
// packet after the last one placed when it is that one, else the first packet of equal content
// after it. Before anything is placed, a content the clip holds more than once (PAT and PMT
// repeat byte for byte every 16 tables) is left unplaced rather than guessed.
type clipMatcher struct {
	idx      *packetIndex
	first    int // index of the first packet placed, -1 before one
	last     int // index of the last packet placed, -1 before one
	placed   int // packets placed
	unplaced int // packets not found after the last placed, or ambiguous before the first
}

// newClipMatcher starts placing packets in the clip idx indexes.
func newClipMatcher(idx *packetIndex) clipMatcher {
	return clipMatcher{idx: idx, first: -1, last: -1}
}

// place returns the clip index of packet p (188 bytes), or -1 when it cannot be placed.
func (m *clipMatcher) place(p []byte) int {
	x := m.idx
	if m.last >= 0 && m.last+1 < x.n && bytes.Equal(x.packet(m.last+1), p) {
		return m.take(m.last + 1)
	}
	found, count := -1, 0
	if i, ok := x.first[maphash.Bytes(x.seed, p)]; ok {
		for ; i >= 0; i = x.next[i] {
			if int(i) <= m.last || !bytes.Equal(x.packet(int(i)), p) {
				continue
			}
			if found < 0 {
				found = int(i)
			}
			count++
			if m.last >= 0 {
				break // the first one after the last placed
			}
		}
	}
	if found < 0 || (m.last < 0 && count > 1) {
		m.unplaced++
		return -1
	}
	return m.take(found)
}

// take records that packet i was placed.
func (m *clipMatcher) take(i int) int {
	if m.first < 0 {
		m.first = i
	}
	m.last = i
	m.placed++
	return i
}

// lost counts the clip's packets between the first and the last placed that were not read.
func (m *clipMatcher) lost() int {
	if m.placed == 0 {
		return 0
	}
	return m.last - m.first + 1 - m.placed
}

// stamp is when a receiver read a payload, and the last packet of the clip it carried.
type stamp struct {
	at     time.Time
	packet int
}

// latencies turns a receiver's stamps into how long each payload took from the pacer's write
// to the receiver's read, less minus (the configured latency of the hops), in milliseconds.
// Payloads the pacer wrote before since (the receiver's connection) are left out: a server
// holds those for a receiver that joins and sends them at once, which is no measure of its
// delay. So are payloads read after the pacer stopped: a connection that ends hands over what
// it holds at once, before its time.
func latencies(stamps []stamp, s *Sent, since time.Time, minus time.Duration) []float64 {
	out := make([]float64, 0, len(stamps))
	for _, st := range stamps {
		sent, ok := s.ChunkSent(st.packet / 7)
		if !ok || sent.Before(since) || (!s.End.IsZero() && st.at.After(s.End)) {
			continue
		}
		out = append(out, float64(st.at.Sub(sent)-minus)/float64(time.Millisecond))
	}
	return out
}

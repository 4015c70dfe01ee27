package link

import "slices"

// Batch sends together what one goroutine writes to many connections in a row: a write
// through it (Conn.WriteSharedBatch) queues its packet without waking the socket's clock, and
// Flush sends everything queued, from the caller's goroutine, in one round of each socket
// involved (one sendmmsg, each connection's run of packets segmented where the kernel can).
//
// It is for a relay, which reads a publisher's packets a TSBPD step at a time and writes
// each to every receiver: flushed once a step, the receivers' packets leave at once, with no
// hand-off to the clock goroutine, whose wake-up cost more than the sending. A Batch must be
// flushed after its writes (an unflushed packet waits for its connection's next timer) and is
// for one goroutine at a time.
type Batch struct {
	muxes []*mux
}

func (b *Batch) add(m *mux) {
	if !slices.Contains(b.muxes, m) {
		b.muxes = append(b.muxes, m)
	}
}

// Flush sends what the batch's writes queued.
func (b *Batch) Flush() {
	for i, m := range b.muxes {
		if !m.isClosed() {
			m.sendMu.Lock()
			m.round(m.now())
			m.sendMu.Unlock()
		}
		b.muxes[i] = nil
	}
	b.muxes = b.muxes[:0]
}

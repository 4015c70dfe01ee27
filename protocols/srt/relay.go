package srt

import (
	"sync"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// maxRelayGOP bounds the bytes a relay keeps for receivers that join: the payloads since the
// latest random access point. 32 MiB holds a 5 s GOP at 50 Mbit/s; past it the relay keeps
// nothing until the next random access point, and receivers joining meanwhile wait for it.
const maxRelayGOP = 32 << 20

// relay passes a stream's MPEG-TS, as its SRT publisher sent it, to the server module's SRT
// receivers of that stream: payload for payload, without demuxing and muxing again, so a
// receiver gets what the publisher sent less than a millisecond after sluice delivered it, and
// a receiver costs the server only its SRT sending. (The stream's other readers, players,
// recordings and restreams, take the demuxed units from the bus as ever.)
//
// Each payload is copied once into a shared link.Payload that every receiver's connection
// sends without a copy of its own (an encrypting one excepted: it needs its own key), and the
// kept GOP holds those same payloads: fifty receivers joining hold the GOP once, plus a
// 40-byte header each per packet in flight.
//
// A receiver starts at a random access point: at once with the payloads kept since the
// latest one (the PAT and PMT first), or, when none is kept, at the next one. After a new
// publisher, every receiver waits for its first random access point. Writes to receivers
// never block (link.Conn.WriteShared drops the oldest unacknowledged packet of a full send
// buffer).
//
// Writes to the receivers go through a link.Batch, flushed once the publisher's packets due
// at this step are all written (feedLoop asks link.Conn.Deliverable): fifty receivers' packets
// leave in one round of the socket, from the publisher's goroutine. The flush runs outside mu
// (its sendmmsg would otherwise hold up attach, detach and the next write): writes queue in
// one of two batches while the other is flushed, and flushMu lets one flush run at a time, so
// the batch a flush takes is never the one being flushed.
type relay struct {
	mu      sync.Mutex
	flushMu sync.Mutex
	batches [2]link.Batch
	cur     int // the batch writes go to (under mu); the other is flushed (under flushMu)
	targets []*relayTarget
	scan    tsScan
	gop     []*link.Payload // since the latest random access point; gop[0] is the PAT and PMT
	gopSize int
	gopOK   bool // gop starts at a random access point and is within maxRelayGOP
}

// relayTarget is one receiver.
type relayTarget struct {
	conn    *link.Conn
	waiting bool // for the next random access point
	failed  bool // a write failed: the connection is gone
}

// attach adds a receiver and sends it what it needs to start.
func (r *relay) attach(conn *link.Conn) *relayTarget {
	t := &relayTarget{conn: conn}
	r.mu.Lock()
	if r.gopOK {
		for _, p := range r.gop {
			r.send(t, p)
		}
	} else {
		t.waiting = true
	}
	r.targets = append(r.targets, t)
	r.mu.Unlock()
	r.flush()
	return t
}

// detach removes a receiver.
func (r *relay) detach(t *relayTarget) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.targets {
		if x == t {
			last := len(r.targets) - 1
			r.targets[i] = r.targets[last]
			r.targets[last] = nil
			r.targets = r.targets[:last]
			return
		}
	}
}

// receivers counts the attached receivers.
func (r *relay) receivers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.targets)
}

// begin starts a publisher session: the receivers wait for its first random access point.
func (r *relay) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scan = tsScan{}
	r.dropGOP()
	for _, t := range r.targets {
		t.waiting = true
	}
}

// end ends a publisher session.
func (r *relay) end() {
	r.flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropGOP()
}

// flush sends what write and attach queued for the receivers: it takes the batch they wrote
// to (and gives them the other, flushed by the previous flush), then sends it without mu.
func (r *relay) flush() {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	b := &r.batches[r.cur]
	r.cur = 1 - r.cur
	r.mu.Unlock()
	b.Flush()
}

// write passes one payload of the publisher's (at most link.MaxPayloadSize bytes, as
// link.Conn.Read gives) to every receiver, and keeps it for receivers that join later.
func (r *relay) write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rap := r.scan.payload(p)
	if rap < 0 {
		pl := shared(p)
		if pl == nil {
			return
		}
		for _, t := range r.targets {
			if !t.waiting {
				r.send(t, pl)
			}
		}
		r.keep(pl)
		return
	}
	r.dropGOP()
	r.gopOK = r.scan.psiOK
	var psi *link.Payload
	if r.scan.psiOK {
		psi = shared(r.scan.psi())
	}
	tail := shared(p[rap*tsPacket:])
	var whole *link.Payload // made when a receiver needs it
	if rap == 0 && tail != nil {
		whole = tail
		whole.Retain()
	}
	for _, t := range r.targets {
		if t.waiting {
			t.waiting = false
			if psi != nil {
				r.send(t, psi)
			}
			r.send(t, tail)
			continue
		}
		if whole == nil {
			whole = shared(p)
		}
		r.send(t, whole)
	}
	if psi != nil {
		r.keep(psi)
	}
	r.keep(tail)
	if whole != nil {
		whole.Release()
	}
}

// shared copies p into a payload for the receivers (nil if it is longer than any payload).
func shared(p []byte) *link.Payload {
	pl, err := link.NewPayload(p)
	if err != nil {
		return nil
	}
	return pl
}

// send writes p to t; a failed connection is marked and skipped from then on (its session
// detaches it).
func (r *relay) send(t *relayTarget, p *link.Payload) {
	if t.failed || p == nil {
		return
	}
	if _, err := t.conn.WriteSharedBatch(p, &r.batches[r.cur]); err != nil {
		t.failed, t.waiting = true, true
	}
}

// keep adds p, whose reference passes to the relay, to the kept GOP when there is one, or
// gives it back; past maxRelayGOP the GOP is given up.
func (r *relay) keep(p *link.Payload) {
	if p == nil {
		return
	}
	if !r.gopOK || r.gopSize+p.Len() > maxRelayGOP {
		if r.gopOK {
			r.dropGOP()
		}
		p.Release()
		return
	}
	r.gop = append(r.gop, p)
	r.gopSize += p.Len()
}

// dropGOP forgets the kept GOP.
func (r *relay) dropGOP() {
	for i, p := range r.gop {
		p.Release()
		r.gop[i] = nil
	}
	r.gop, r.gopSize, r.gopOK = r.gop[:0], 0, false
}

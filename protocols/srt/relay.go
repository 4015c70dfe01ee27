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
// A receiver starts at a random access point: at once with the payloads kept since the
// latest one (the PAT and PMT first), or, when none is kept, at the next one. After a new
// publisher, every receiver waits for its first random access point. Writes to receivers
// never block (link.Conn.Write drops the oldest unacknowledged packet of a full send buffer).
type relay struct {
	mu      sync.Mutex
	targets []*relayTarget
	scan    tsScan
	gop     [][]byte // payloads since the latest random access point; gop[0] is the PAT and PMT
	gopSize int
	gopOK   bool     // gop starts at a random access point and is within maxRelayGOP
	free    [][]byte // spare payload buffers
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
	defer r.mu.Unlock()
	if r.gopOK {
		for _, p := range r.gop {
			r.send(t, p)
		}
	} else {
		t.waiting = true
	}
	r.targets = append(r.targets, t)
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
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropGOP()
}

// write passes one payload of the publisher's to every receiver, and keeps it for receivers
// that join later.
func (r *relay) write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rap := r.scan.payload(p)
	if rap >= 0 {
		r.dropGOP()
		r.gopOK = r.scan.psiOK
		if r.gopOK {
			r.keep(r.scan.psi())
		}
		tail := p[rap*tsPacket:]
		for _, t := range r.targets {
			if t.waiting {
				t.waiting = false
				if r.scan.psiOK {
					r.send(t, r.scan.psi())
				}
				r.send(t, tail)
			} else {
				r.send(t, p)
			}
		}
		if r.gopOK {
			r.keep(tail)
		}
		return
	}
	for _, t := range r.targets {
		if !t.waiting {
			r.send(t, p)
		}
	}
	if r.gopOK {
		r.keep(p)
	}
}

// send writes p to t; a failed connection is marked and skipped from then on (its session
// detaches it).
func (r *relay) send(t *relayTarget, p []byte) {
	if t.failed {
		return
	}
	if _, err := t.conn.Write(p); err != nil {
		t.failed, t.waiting = true, true
	}
}

// keep appends a copy of p to the kept GOP, or gives the GOP up when it grows past its cap.
func (r *relay) keep(p []byte) {
	if r.gopSize+len(p) > maxRelayGOP {
		r.dropGOP()
		return
	}
	var b []byte
	if n := len(r.free); n > 0 {
		b, r.free = r.free[n-1][:0], r.free[:n-1]
	} else {
		b = make([]byte, 0, payloadSize)
	}
	r.gop = append(r.gop, append(b, p...))
	r.gopSize += len(p)
}

// dropGOP forgets the kept GOP, keeping its buffers for the next one.
func (r *relay) dropGOP() {
	for i, b := range r.gop {
		if cap(b) == payloadSize {
			r.free = append(r.free, b)
		}
		r.gop[i] = nil
	}
	r.gop, r.gopSize, r.gopOK = r.gop[:0], 0, false
}

package link

import (
	"io"
	"os"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Receiver timing (libsrt's live defaults).
const (
	ackInterval    = 10_000 // µs between full ACKs (COMM_SYN_INTERVAL_US)
	lightACKEvery  = 64     // packets between light ACKs (SELF_CLOCK_INTERVAL)
	minNAKInterval = 20_000 // µs, floor of the periodic NAK interval
	ackHistory     = 128    // ACKs remembered to match ACKACKs
	// lossRounds caps the periodic NAK interval at the latency divided by it (never under
	// minNAKInterval), so that a lost packet is reported that many times before it is too
	// late whatever the RTT estimate says: a stall of this process or of the peer enters the
	// estimate as a long round trip (one 200 ms sample takes (RTT+4·RTTVar)/2 to about
	// 110 ms), and libsrt's uncapped interval then leaves a 200 ms latency one retry.
	lossRounds = 4
	// rxLagMax bounds how long after its time a missing packet waits for a read loop that
	// lags behind the socket (a stalled process) before it is given up, µs.
	rxLagMax = 1_000_000
)

type ackRecord struct {
	no  uint32
	seq uint32
	at  int64
}

// recvState is the receiving half of a connection, under Conn.mu.
type recvState struct {
	buf      rcvBuf
	next     uint32 // one past the highest sequence number received
	loss     lossList
	bufBytes int

	ackNo        uint32
	lastAck      uint32 // sequence number of the last ACK sent
	lastAckAcked uint32 // highest ACK the peer confirmed with an ACKACK
	lastACKTime  int64
	nextACK      int64
	nextNAK      int64
	pktsSinceACK int
	lightACKs    int
	hist         [ackHistory]ackRecord
	histI        int

	base       int64 // the peer's clock origin on the mux clock (TSBPD time base)
	tsHigh     int64 // highest unwrapped peer timestamp
	drift      driftTracer
	firstRTT   int64
	probe      capacityProbe
	rate       rateWindow
	flush      bool // broken: deliver what is held at once, then report the error
	bufWasFull bool // the last full ACK reported no room
}

func (r *recvState) init(isn uint32, limit int, base int64, hsTS uint32, now int64) {
	r.buf = newRcvBuf(isn, limit)
	r.next, r.lastAck, r.lastAckAcked = isn, isn, isn
	r.base, r.tsHigh = base, int64(hsTS)
	r.firstRTT = -1
	r.rate.start = now
	r.nextACK = now + ackInterval
}

// span returns how many slots are in use, from start to the highest received.
func (r *recvState) span() int { return max(int(wire.SeqDiff(r.next, r.buf.start)), 0) }

// unwrap extends a 32-bit peer timestamp to 64 bits around the highest seen so far.
func (r *recvState) unwrap(ts uint32) int64 {
	v := r.tsHigh&^0xFFFFFFFF | int64(ts)
	switch {
	case v-r.tsHigh > 1<<31:
		v -= 1 << 32
	case r.tsHigh-v > 1<<31:
		v += 1 << 32
	}
	if v > r.tsHigh {
		r.tsHigh = v
	}
	return v
}

// due returns when p is to be delivered, on the mux clock.
func (c *Conn) due(p *packet) int64 {
	return c.rcv.base + p.ts + c.rcvLatency + c.rcv.drift.drift
}

// maxDeliverEarly is the most a packet in order is handed to Read before its time: the ACK
// interval, so that with a latency of 80 ms or more the reader's wake-ups fall on the ticks of
// the connection's ACK timer (gridUp).
const maxDeliverEarly = ackInterval // µs

// deliverEarly is how long before its time (TSBPD) Read may hand over a packet that is next in
// order: an eighth of the latency, at most maxDeliverEarly. Read hands a packet over from the
// grid point of that step before its time (deliverAt), all the packets due before the next
// grid point at once, so a reader wakes at most once a step however the peer spaces its packets (a sender pacing 240 packets a second
// evenly cost a wake-up each: the Go scheduler's, several times libsrt's thread's). A hole
// at the head still waits for its packet or its too-late time, which do not move.
func (c *Conn) deliverEarly() int64 { return min(c.rcvLatency/8, maxDeliverEarly) }

// deliverAt is when Read wakes for a packet due at t: the first grid point of the
// deliverEarly step at or after t - deliverEarly (never after t).
func (c *Conn) deliverAt(t int64) int64 {
	g := c.deliverEarly()
	from := t - g
	if g <= 0 || from <= 0 {
		return from
	}
	return (from + g - 1) / g * g
}

// ackSeq is what an ACK acknowledges: everything before the first loss (or the next packet).
func (r *recvState) ackSeq() uint32 {
	if s, ok := r.loss.first(); ok {
		return s
	}
	return r.next
}

// onData takes a data packet from the read loop; it reports whether it kept p.
func (c *Conn) onData(p *packet, now int64, out *outbox) bool {
	var d wire.Data
	if wire.ParseData(p.buf[:p.n], &d) != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateConnected {
		return false
	}
	r := &c.rcv
	c.lastRecv = now
	c.heard.Store(now)
	c.st.pktRecv++
	c.st.byteRecv += uint64(len(d.Payload))
	if d.Retransmitted {
		c.st.pktRecvRetrans++
	}
	r.rate.add(len(d.Payload))
	r.probe.arrival(d.Seq, now, d.Retransmitted)

	off := r.buf.offset(d.Seq)
	if off < 0 {
		c.st.pktRecvBelated++
		return false
	}
	if off >= r.buf.limit {
		c.st.pktRecvDrop++
		c.st.pktRecvOverflow++
		return false
	}
	switch gap := wire.SeqDiff(d.Seq, r.next); {
	case gap > 0:
		last := wire.SeqAdd(d.Seq, -1)
		if r.loss.empty() {
			r.nextNAK = now + c.nakInterval() // the immediate NAK goes now
		}
		r.loss.add(r.next, last)
		c.st.pktRecvLoss += uint64(gap)
		c.sendNAKLocked(now, out, r.next, last)
		r.next = wire.SeqAdd(d.Seq, 1)
	case gap == 0:
		r.next = wire.SeqAdd(d.Seq, 1)
	default:
		r.loss.remove(d.Seq)
	}
	wasEmpty := r.buf.count == 0
	headMissing := r.buf.at(0) == nil
	p.seq, p.ts, p.key, p.rexmit = d.Seq, r.unwrap(d.Timestamp), d.Key, d.Retransmitted
	if !r.buf.put(off, p) {
		c.st.pktRecvDup++
		return false
	}
	c.st.pktRecvUniq++
	r.bufBytes += len(d.Payload)
	if c.rdWaiting && (wasEmpty || headMissing) {
		c.signalReader()
	}
	r.pktsSinceACK++
	if r.pktsSinceACK >= lightACKEvery*(r.lightACKs+1) {
		r.lightACKs++
		c.sendACKLocked(now, out, true)
	}
	c.m.clk.scheduleEarlier(c, r.nextACK)
	return true
}

// sendNAKLocked reports first..last lost at once.
func (c *Conn) sendNAKLocked(now int64, out *outbox, first, last uint32) {
	if out.room() == 0 {
		return
	}
	b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlNAK, Timestamp: c.ts(now), DestSocket: c.peerID})
	b = wire.AppendNAKRange(b, first, last)
	out.commit(b, c.peerUDP, c.peer)
	c.lastSend = now
}

// sendPeriodicNAKLocked reports the whole loss list (as much as a datagram holds).
func (c *Conn) sendPeriodicNAKLocked(now int64, out *outbox) {
	r := &c.rcv
	if out.room() == 0 || r.loss.empty() {
		return
	}
	b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlNAK, Timestamp: c.ts(now), DestSocket: c.peerID})
	limit := wire.HeaderSize + c.cfg.PayloadSize
	for _, lr := range r.loss.r {
		if len(b)+wire.NAKRangeLen(lr.first, lr.last) > limit {
			break
		}
		b = wire.AppendNAKRange(b, lr.first, lr.last)
	}
	out.commit(b, c.peerUDP, c.peer)
	c.lastSend = now
}

// nakInterval is libsrt's live periodic NAK period, (RTT + 4·RTTVar)/2 and at least 20 ms,
// but at most a lossRounds-th of the latency. Until the first RTT sample it is 20 ms: with
// libsrt's initial RTT (100 ms, variance 50 ms) it would be 150 ms, and a packet lost early
// whose first NAK is lost too would miss a 200 ms latency.
func (c *Conn) nakInterval() int64 {
	if !c.rttSeen {
		return minNAKInterval
	}
	return min(max((c.rtt+4*c.rttVar)/2, minNAKInterval), max(c.rcvLatency/lossRounds, minNAKInterval))
}

// sendACKLocked sends a light ACK or, when there is news since the last ACKACK, a full one.
func (c *Conn) sendACKLocked(now int64, out *outbox, light bool) {
	r := &c.rcv
	ack := r.ackSeq()
	avail := max(r.buf.limit-r.span(), 0)
	// After reporting a full buffer, a full ACK goes out as soon as there is room again.
	reopen := r.bufWasFull && avail > 0
	if out.room() == 0 || (ack == r.lastAckAcked && !reopen) {
		return
	}
	if light && !reopen {
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlACK, Timestamp: c.ts(now), DestSocket: c.peerID})
		b = wire.AppendACK(b, &wire.ACK{Kind: wire.ACKLight, LastACKSeq: ack})
		out.commit(b, c.peerUDP, c.peer)
		c.lastSend = now
		return
	}
	if !reopen {
		switch d := wire.SeqDiff(ack, r.lastAck); {
		case d < 0:
			return
		case d == 0 && now-r.lastACKTime < c.rtt+4*c.rttVar:
			return // the same ACK went out less than an RTT ago
		}
		if !wire.SeqLess(r.lastAckAcked, ack) {
			return
		}
	}
	r.ackNo++
	if r.ackNo == 0 {
		r.ackNo = 1
	}
	r.lastAck, r.lastACKTime = ack, now
	r.hist[r.histI] = ackRecord{no: r.ackNo, seq: ack, at: now}
	r.histI = (r.histI + 1) % ackHistory
	a := wire.ACK{
		Kind:         wire.ACKFull,
		LastACKSeq:   ack,
		RTT:          uint32(c.rtt),
		RTTVar:       uint32(c.rttVar),
		AvailBuf:     uint32(avail),
		PktRecvRate:  uint32(r.rate.pktRate),
		LinkCapacity: uint32(r.probe.pktsPerSec()),
		RecvRate:     uint32(r.rate.byteRate),
	}
	b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlACK, Info: r.ackNo, Timestamp: c.ts(now), DestSocket: c.peerID})
	b = wire.AppendACK(b, &a)
	out.commit(b, c.peerUDP, c.peer)
	c.lastSend = now
	r.pktsSinceACK, r.lightACKs = 0, 0
	r.bufWasFull = avail == 0
}

// onACKACK matches the peer's ACKACK with the ACK it confirms: an RTT sample, and a drift
// sample from its timestamp (the peer's clock when it answered).
func (c *Conn) onACKACK(ctl *wire.Control, now int64) {
	r := &c.rcv
	for i := range r.hist {
		h := &r.hist[i]
		if h.no != ctl.Info || h.at == 0 {
			continue
		}
		rtt := now - h.at
		if wire.SeqLess(r.lastAckAcked, h.seq) {
			r.lastAckAcked = h.seq
		}
		h.at = 0
		if rtt <= 0 {
			return
		}
		c.rttSample(rtt)
		if r.firstRTT < 0 {
			r.firstRTT = rtt
		}
		sample := now - (r.base + r.unwrap(ctl.Timestamp)) - (rtt-r.firstRTT)/2
		r.base += r.drift.update(sample)
		return
	}
}

// rttSample folds an RTT measurement into the smoothed values (RFC 6298 weights, as libsrt).
func (c *Conn) rttSample(rtt int64) {
	if !c.rttSeen {
		c.rtt, c.rttVar, c.rttSeen = rtt, rtt/2, true
		return
	}
	d := c.rtt - rtt
	if d < 0 {
		d = -d
	}
	c.rttVar = (3*c.rttVar + d) / 4
	c.rtt = (7*c.rtt + rtt) / 8
}

// onDropReq forgets first..last: no more loss reports for them; Read skips them when their
// time comes (libsrt keeps packets already received).
func (c *Conn) onDropReq(ctl *wire.Control) {
	var d wire.DropReq
	if wire.ParseDropReq(ctl.CIF, &d) != nil {
		return
	}
	r := &c.rcv
	// Only what lies in the receive window matters.
	if off := r.buf.offset(d.Last); off < 0 || off >= r.buf.limit {
		return
	}
	if r.buf.offset(d.First) < 0 {
		d.First = r.buf.start
	}
	r.loss.removeRange(d.First, d.Last)
	if !wire.SeqLess(d.Last, r.next) {
		r.next = wire.SeqAdd(d.Last, 1)
	}
}

// tooLateLocked gives up the packets missing at the head of the buffer once the first packet
// held after them is due (too-late packet drop); it reports whether the head moved. When the
// read loop lags behind the socket, a retransmission that arrived in time may still wait
// there: the drop then waits until the loop has caught up or rxLagMax has passed, and
// lagUntil says until when (0 otherwise). The lag check does not block.
func (c *Conn) tooLateLocked(now int64) (moved bool, lagUntil int64) {
	r := &c.rcv
	if r.buf.count == 0 || r.buf.at(0) != nil {
		return false, 0
	}
	off := r.buf.firstPresent(r.span())
	if off <= 0 {
		return false, 0
	}
	if !r.flush {
		due := c.due(r.buf.at(off))
		if now < due {
			return false, 0
		}
		if now < due+rxLagMax && c.m.tr.lagging() {
			return false, due + rxLagMax
		}
	}
	for range off {
		r.buf.pop()
	}
	c.st.pktRecvDrop += uint64(off)
	r.loss.removeBelow(r.buf.start)
	return true, 0
}

// Deliverable reports whether a message is due, so that Read would return it at once; a
// reader that batches its work by the step (a relay flushing its writes) asks it after each
// Read.
func (c *Conn) Deliverable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	pk := c.rcv.buf.at(0)
	return pk != nil && (c.rcv.flush || c.m.now() >= c.deliverAt(c.due(pk)))
}

// Read waits for the next message and copies its payload into p. Messages come in sequence
// order at their delivery time (sender's timestamp plus the latency); missing packets whose
// time has passed are skipped. After the peer's shutdown, Read returns what had arrived, then
// io.EOF. A p shorter than the payload gets its start and io.ErrShortBuffer.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	for {
		if c.state == stateClosed {
			c.mu.Unlock()
			return 0, ErrClosed
		}
		now := c.m.now()
		_, lagUntil := c.tooLateLocked(now)
		r := &c.rcv
		wait := int64(-1)
		lag := false
		if pk := r.buf.at(0); pk != nil {
			if r.flush || now >= c.deliverAt(c.due(pk)) {
				r.buf.pop()
				payload := pk.buf[wire.HeaderSize:pk.n]
				r.bufBytes -= len(payload)
				if pk.key != wire.KeyNone && !c.decryptLocked(pk, payload) {
					putPacket(pk)
					continue
				}
				n := copy(p, payload)
				short := n < len(payload)
				putPacket(pk)
				c.mu.Unlock()
				if short {
					return n, io.ErrShortBuffer
				}
				return n, nil
			}
			wait = c.deliverAt(c.due(pk)) - now
		} else if lagUntil > 0 {
			wait, lag = lagUntil-now, true
		} else if off := r.buf.firstPresent(r.span()); off > 0 {
			wait = c.due(r.buf.at(off)) - now
		} else if c.state == stateBroken {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		if dl := c.deadline.Load(); dl != 0 {
			left := (dl - time.Now().UnixNano()) / 1000
			if left <= 0 {
				c.mu.Unlock()
				return 0, os.ErrDeadlineExceeded
			}
			if wait < 0 || left < wait {
				wait = left
			}
		}
		c.rdWaiting = true
		c.mu.Unlock()
		var caughtUp <-chan struct{}
		if lag {
			// Wait for the read loop to catch up, unless it did since the check.
			caughtUp = c.m.lagWait()
			if !c.m.tr.lagging() {
				caughtUp, wait = nil, 0
			}
		}
		if wait != 0 {
			c.waitRead(wait, caughtUp)
		}
		c.mu.Lock()
		c.rdWaiting = false
	}
}

// waitRead sleeps until signalled, the connection ends, caughtUp is closed, or wait µs pass
// (wait < 0: no limit).
func (c *Conn) waitRead(wait int64, caughtUp <-chan struct{}) {
	if wait < 0 {
		select {
		case <-c.readWake:
		case <-c.done:
		case <-caughtUp:
		}
		return
	}
	d := time.Duration(max(wait, 1)) * time.Microsecond
	if c.readTimer == nil {
		c.readTimer = time.NewTimer(d)
	} else {
		c.readTimer.Reset(d)
	}
	select {
	case <-c.readWake:
	case <-c.done:
	case <-caughtUp:
	case <-c.readTimer.C:
	}
	c.readTimer.Stop()
}

// decryptLocked decrypts payload in place; false when it cannot (counted).
func (c *Conn) decryptLocked(p *packet, payload []byte) bool {
	if c.rcrypt == nil || c.rcrypt.Decrypt(p.key, p.seq, payload) != nil {
		c.st.pktRecvUndecrypt++
		return false
	}
	return true
}

package link

import (
	"errors"
	"fmt"
	"io"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Sender timing (libsrt's live defaults).
const (
	// sndDropMin is the least time a packet waits for acknowledgement before the sender gives
	// it up (SRT_TLPKTDROP_MINTHRESHOLD_MS); the threshold is the larger of this and the
	// peer's latency, plus 20 ms (two ACK intervals).
	sndDropMin    = 1_000_000 // µs
	sndDropMargin = 2 * ackInterval
	// inputOverheadPct is what pacing adds to the measured input rate when MaxBW is 0
	// (SRTO_OHEADBW's default, 25 %).
	inputOverheadPct = 25
	// paceSlack lets a packet leave this much before its paced time, so the clock's timer
	// granularity does not slow the stream down.
	paceSlack = 1000 // µs
	// paceCredit bounds how far behind its schedule a backlogged sender may be: when the clock
	// wakes late, the packets that should have left meanwhile go at once (libsrt keeps the
	// same credit, m_tdSendTimeDiff), but never more than this much of them.
	paceCredit = 100_000 // µs
	// kmRetry is how often an unanswered key refresh (KMREQ) is sent again, and kmRetries how
	// many times.
	kmRetry   = 500_000 // µs
	kmRetries = 10
	// ackTimeoutMin is the floor of the retransmission timeout used when the peer sends no
	// periodic NAK reports, and tailRexmitMin when it does (then the timeout only recovers the
	// packets lost at the tail of a paused stream, which no gap reveals).
	ackTimeoutMin = 2 * ackInterval
	tailRexmitMin = 100_000 // µs
)

// sendState is the sending half of a connection, under Conn.mu.
type sendState struct {
	buf        sndBuf
	sentEnd    uint32 // first sequence number never sent
	loss       lossList
	msgNo      uint32
	nextSendAt int64
	paceIdle   bool   // nothing was left to send: the schedule restarts from the next packet
	lastSent   uint32 // sequence number of the last packet sent (probe pairs)
	flowWindow int
	inRate     inputRate
	rate       rateWindow
	lastAckAt  int64 // last ACK received
	rexmitN    int64 // ACK timeouts since the last ACK
	ackAck     uint32
	ackAckAt   int64
	km         []byte // pending key refresh KM, until the peer's KMRSP
	kmNext     int64
	kmLeft     int
	dropFirst  uint32 // a drop request to send: first..dropLast
	dropLast   uint32
	dropMsg    uint32
	dropOK     bool
}

func (s *sendState) init(isn uint32, limit, flowWindow int, now int64) {
	s.buf = newSndBuf(isn, limit)
	s.sentEnd = isn
	s.lastSent = wire.SeqAdd(isn, -1)
	s.msgNo = 1
	s.paceIdle = true
	s.flowWindow = flowWindow
	s.lastAckAt = now
	s.rate.start = now
}

// paceRate is the current pacing rate, bytes per second of payload and headers; 0 means none.
func (s *sendState) paceRate(maxBW int64) int64 {
	switch {
	case maxBW > 0:
		return maxBW
	case maxBW < 0 || s.inRate.bps == 0:
		return 0
	}
	return s.inRate.bps * (100 + inputOverheadPct) / 100
}

// Write sends p as one message. It never blocks: when the send buffer is full the oldest
// packet is given up (counted as a send drop, and a drop request tells the peer). p is copied;
// WriteShared sends a payload many connections share without a copy.
func (c *Conn) Write(p []byte) (int, error) {
	if len(p) > c.cfg.PayloadSize {
		return 0, fmt.Errorf("srt write of %d bytes, payload size %d: %w", len(p), c.cfg.PayloadSize, ErrMessageTooLong)
	}
	return c.write(newPayload(p), nil)
}

// WriteShared sends pl as one message, as Write, taking a reference on it for as long as the
// packet waits for acknowledgement: the same payload written to many connections is held
// once. The caller keeps its own reference. An encrypting connection sends a copy, encrypted
// with its own key.
func (c *Conn) WriteShared(pl *Payload) (int, error) { return c.WriteSharedBatch(pl, nil) }

// WriteSharedBatch is WriteShared whose packet leaves when b is flushed (at once when b is
// nil), so that what one goroutine writes to many connections in a row leaves in one round.
func (c *Conn) WriteSharedBatch(pl *Payload, b *Batch) (int, error) {
	if pl.n > c.cfg.PayloadSize {
		return 0, fmt.Errorf("srt write of %d bytes, payload size %d: %w", pl.n, c.cfg.PayloadSize, ErrMessageTooLong)
	}
	if c.scrypt != nil {
		return c.write(newPayload(pl.Bytes()), b)
	}
	pl.Retain()
	return c.write(pl, b)
}

// write queues pl, whose reference it takes over, as the next message: sent by the clock, or
// by b's Flush.
func (c *Conn) write(pl *Payload, b *Batch) (int, error) {
	c.mu.Lock()
	switch c.state {
	case stateClosed:
		c.mu.Unlock()
		pl.Release()
		return 0, ErrClosed
	case stateBroken:
		err := c.err
		c.mu.Unlock()
		pl.Release()
		if err == nil || errors.Is(err, io.EOF) {
			err = ErrPeerClosed
		}
		return 0, err
	}
	now := c.m.now()
	s := &c.snd
	if s.buf.full() {
		c.dropFrontLocked(1)
	}
	seq := s.buf.end()
	d := wire.Data{Seq: seq, Position: wire.PosSolo, InOrder: true, MsgNo: s.msgNo, Timestamp: c.ts(now), DestSocket: c.peerID}
	s.msgNo = wire.MsgNoNext(s.msgNo)
	if c.scrypt != nil {
		// pl is this connection's own copy (Write's, or WriteShared's for an encrypting one).
		kk, announce := c.scrypt.Encrypt(seq, pl.b[:pl.n])
		d.Key = kk
		if announce {
			s.km = c.scrypt.KM(s.km[:0])
			s.kmNext, s.kmLeft = now, kmRetries
		}
	}
	n := pl.n
	pk := s.buf.push()
	wire.PutDataHeader(pk.hdr[:], &d)
	pk.seq, pk.pl, pk.origin = seq, pl, now
	s.buf.bytes += n
	s.inRate.add(now, n)
	if b == nil {
		c.m.clk.markReady(c)
	} else {
		c.m.clk.addReady(c)
		b.add(c.m)
	}
	c.mu.Unlock()
	// pl is not touched past the unlock: an ACK may release the buffer's reference at once.
	return n, nil
}

// dropFrontLocked gives up the n oldest unacknowledged packets and queues a drop request.
func (c *Conn) dropFrontLocked(n int) {
	s := &c.snd
	first := s.buf.start
	var msg uint32
	for i := 0; i < n && s.buf.n > 0; i++ {
		f := s.buf.front()
		if i == 0 {
			msg = f.msgNo()
		}
		c.st.pktSendDrop++
		c.st.byteSendDrop += uint64(f.pl.n)
		s.buf.popFront()
	}
	last := wire.SeqAdd(s.buf.start, -1)
	if wire.SeqLess(s.sentEnd, s.buf.start) {
		s.sentEnd = s.buf.start
	}
	s.loss.removeBelow(s.buf.start)
	if s.dropOK {
		s.dropLast = last
	} else {
		s.dropFirst, s.dropLast, s.dropMsg, s.dropOK = first, last, msg, true
	}
}

// onACK releases what the peer acknowledged and answers a full ACK with an ACKACK.
func (c *Conn) onACK(ctl *wire.Control, now int64, out *outbox) {
	var a wire.ACK
	if wire.ParseACK(ctl.CIF, &a) != nil {
		return
	}
	s := &c.snd
	end := s.buf.end()
	if wire.SeqLess(end, a.LastACKSeq) {
		return // acknowledges what was never sent: ignore
	}
	blocked := int(wire.SeqDiff(s.sentEnd, s.buf.start)) >= s.flowWindow
	if n := int(wire.SeqDiff(a.LastACKSeq, s.buf.start)); n > 0 {
		for range n {
			s.buf.popFront()
		}
		if a.Kind == wire.ACKLight {
			// A light ACK carries no free-buffer count: what it acknowledges still sits in
			// the receiver's buffer until read, so the window shrinks by it (as libsrt).
			s.flowWindow = max(s.flowWindow-n, 0)
		}
		if wire.SeqLess(s.sentEnd, s.buf.start) {
			s.sentEnd = s.buf.start
		}
		s.loss.removeBelow(s.buf.start)
		s.lastAckAt, s.rexmitN = now, 0
		if s.buf.n == 0 {
			c.lingerDoneLocked()
		}
	}
	if a.Kind != wire.ACKLight {
		c.onFullACKLocked(ctl, &a, now, out)
	}
	if blocked && s.sentEnd != s.buf.end() && int(wire.SeqDiff(s.sentEnd, s.buf.start)) < s.flowWindow {
		c.m.clk.markReady(c) // the flow window was full and has room again
	}
}

// onFullACKLocked takes a full or small ACK's flow window and RTT and answers with an ACKACK
// (at most one per ACK interval, or again for a repeated ACK whose ACKACK was lost).
func (c *Conn) onFullACKLocked(ctl *wire.Control, a *wire.ACK, now int64, out *outbox) {
	s := &c.snd
	s.flowWindow = int(a.AvailBuf)
	if !c.rttSeen || c.rcv.firstRTT < 0 {
		// Sending only: the receiver measured the RTT for us.
		if a.RTT > 0 {
			c.rtt, c.rttVar = int64(a.RTT), int64(a.RTTVar)
		}
	}
	if now-s.ackAckAt > ackInterval || ctl.Info == s.ackAck {
		s.ackAck, s.ackAckAt = ctl.Info, now
		if out.room() > 0 {
			b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlACKACK, Info: ctl.Info, Timestamp: c.ts(now), DestSocket: c.peerID})
			b = wire.AppendEmptyCIF(b)
			out.commit(b, c.peerUDP, c.peer)
			c.lastSend = now
		}
	}
}

// onNAK schedules the reported packets for retransmission; those no longer held are answered
// with a drop request.
func (c *Conn) onNAK(ctl *wire.Control) {
	r := wire.NewNAKReader(ctl.CIF)
	if r.Err() != nil {
		return
	}
	s := &c.snd
	start, sent := s.buf.start, s.sentEnd
	added := false
	for {
		first, last, ok := r.Next()
		if !ok {
			break
		}
		if !wire.SeqLess(first, sent) {
			continue // reports what was never sent
		}
		if !wire.SeqLess(last, sent) {
			last = wire.SeqAdd(sent, -1)
		}
		if wire.SeqLess(first, start) {
			dl := last
			if !wire.SeqLess(dl, start) {
				dl = wire.SeqAdd(start, -1)
			}
			if s.dropOK {
				if wire.SeqLess(first, s.dropFirst) {
					s.dropFirst = first
				}
				if wire.SeqLess(s.dropLast, dl) {
					s.dropLast = dl
				}
			} else {
				s.dropFirst, s.dropLast, s.dropMsg, s.dropOK = first, dl, 0, true
			}
			if wire.SeqLess(last, start) {
				continue
			}
			first = start
		}
		n := s.loss.add(first, last)
		c.st.pktSendLoss += uint64(n)
		added = added || n > 0
	}
	if added || s.dropOK {
		c.m.clk.markReady(c)
	}
}

// sendLocked sends what is due: a pending drop request and key refresh, retransmissions
// first, then new packets as pacing and the peer's flow window allow. It stops when out is
// full and reports that, so the clock flushes and calls again.
func (c *Conn) sendLocked(now int64, out *outbox) (full bool) {
	s := &c.snd
	if s.dropOK && out.room() > 0 {
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlDropReq, Info: s.dropMsg, Timestamp: c.ts(now), DestSocket: c.peerID})
		b = wire.AppendDropReq(b, &wire.DropReq{First: s.dropFirst, Last: s.dropLast})
		out.commit(b, c.peerUDP, c.peer)
		s.dropOK = false
		c.lastSend = now
	}
	if s.kmLeft > 0 && now >= s.kmNext && out.room() > 0 {
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlUser, Subtype: wire.ExtKMReq, Timestamp: c.ts(now), DestSocket: c.peerID})
		b = append(b, s.km...)
		out.commit(b, c.peerUDP, c.peer)
		s.kmLeft--
		s.kmNext = now + kmRetry
		c.kmSent++
		c.lastSend = now
	}
	rate := s.paceRate(c.cfg.MaxBW)
	for {
		if out.room() == 0 {
			return true
		}
		if rate > 0 && s.nextSendAt-paceSlack > now {
			return false
		}
		pk, rexmit := c.nextToSendLocked()
		if pk == nil {
			s.paceIdle = true
			return false
		}
		b := append(out.buf(), pk.hdr[:]...)
		payload := pk.pl.n
		if rexmit {
			wire.SetRetransmitted(b)
			c.st.pktRetrans++
			c.st.byteRetrans += uint64(payload)
		} else {
			c.st.pktSentUniq++
		}
		c.st.pktSent++
		c.st.byteSent += uint64(payload)
		s.rate.add(payload)
		out.commitData(b, pk.pl, c.peerUDP, c.peer)
		c.lastSend = now
		if rate > 0 {
			// After an idle spell the schedule starts from now (no burst); a backlog keeps
			// its schedule and catches up, within paceCredit. The packet after a probe
			// (sequence number ≡ 0 mod 16) leaves at once, as libsrt's packet pairs.
			if s.paceIdle {
				s.nextSendAt, s.paceIdle = max(s.nextSendAt, now), false
			}
			s.nextSendAt = max(s.nextSendAt, now-paceCredit)
			if pk.seq&0xF != 0 || rexmit {
				s.nextSendAt += int64(payload+headerOverhead) * 1_000_000 / rate
			}
		}
	}
}

// nextToSendLocked picks the next packet: the lowest one to retransmit, else the next one
// never sent if the flow window allows.
func (c *Conn) nextToSendLocked() (*sndPkt, bool) {
	s := &c.snd
	for {
		seq, ok := s.loss.popFirst()
		if !ok {
			break
		}
		if pk := s.buf.get(seq); pk != nil {
			return pk, true
		}
	}
	if s.sentEnd == s.buf.end() {
		return nil, false
	}
	if int(wire.SeqDiff(s.sentEnd, s.buf.start)) >= s.flowWindow {
		return nil, false
	}
	if s.sentEnd == s.buf.start {
		// Nothing was in flight: the ACK timeout counts from this packet.
		s.lastAckAt, s.rexmitN = c.m.now(), 0
	}
	pk := s.buf.get(s.sentEnd)
	s.sentEnd = wire.SeqAdd(s.sentEnd, 1)
	s.lastSent = pk.seq
	return pk, false
}

// pendingLocked reports whether packets wait to be sent.
func (s *sendState) pendingLocked() bool {
	return !s.loss.empty() || s.sentEnd != s.buf.end() || s.dropOK
}

// dropTooLateLocked gives up the packets older than the drop threshold.
func (c *Conn) dropTooLateLocked(now int64) {
	s := &c.snd
	limit := c.sndDropThreshold()
	n := 0
	for i := 0; i < s.buf.n; i++ {
		if now-s.buf.at(i).origin <= limit {
			break
		}
		n++
	}
	if n > 0 {
		c.dropFrontLocked(n)
	}
}

// sndDropThreshold is how long a packet may wait for acknowledgement, µs.
func (c *Conn) sndDropThreshold() int64 { return max(c.sndLatency, sndDropMin) + sndDropMargin }

// onUser handles the user-defined control packets: a key refresh from the peer (KMREQ),
// answered with the same KM (KMRSP), or the peer's answer to ours.
func (c *Conn) onUser(ctl *wire.Control, now int64, out *outbox) {
	switch ctl.Subtype {
	case wire.ExtKMReq:
		if c.rcrypt == nil || len(ctl.CIF) > wire.MaxKM || out.room() == 0 {
			return
		}
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlUser, Subtype: wire.ExtKMRsp, Timestamp: c.ts(now), DestSocket: c.peerID})
		if err := c.rcrypt.Update(ctl.CIF); err != nil {
			c.log.Warn("srt key refresh refused", "err", err)
			b = crypt.AppendKMState(b, crypt.KMStateFor(err))
		} else {
			b = append(b, ctl.CIF...)
			c.kmApplied++
		}
		out.commit(b, c.peerUDP, c.peer)
		c.lastSend = now
	case wire.ExtKMRsp:
		c.snd.kmLeft = 0
		if st, ok := crypt.ParseKMState(ctl.CIF); ok && st != crypt.KMStateSecured {
			c.log.Warn("srt peer refused our key refresh", "km_state", st)
		}
	}
}

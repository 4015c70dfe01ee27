package link

import (
	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

const (
	// keepAliveInterval is how long a connection stays silent before it sends a keep-alive
	// (COMM_KEEPALIVE_PERIOD_US).
	keepAliveInterval = 1_000_000 // µs
	never             = int64(1) << 62
)

// gridUp rounds t up to the ACK interval grid of the mux clock, so that the periodic work of
// every connection on a socket falls on the same clock ticks.
func gridUp(t int64) int64 { return (t + ackInterval - 1) / ackInterval * ackInterval }

// service runs what is due at now: peer-idle check, ACK, periodic NAK, too-late drops on both
// sides, retransmission timeout, sending and keep-alive. It reports whether out filled up
// (call again after flushing), when it wants to run next, and whether c broke. Unless out
// filled up or c broke, it also sets that time on the mux clock, before it releases c.mu: the
// read loop changes c's state and moves its timer earlier (onData's scheduleEarlier) under
// c.mu, so a time set after the unlock could undo a move made meanwhile, from a state that no
// longer holds (an ACK held until the next packet or the keep-alive).
func (c *Conn) service(now int64, out *outbox) (full bool, next int64, broke bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateConnected {
		c.m.clk.schedule(c, never)
		return false, never, false
	}
	if now-c.lastRecv >= int64(c.cfg.PeerIdleTimeout/1000) {
		return false, never, c.breakLocked(ErrPeerIdle)
	}
	r := &c.rcv
	if now >= r.nextACK {
		r.rate.roll(now)
		c.snd.rate.roll(now)
		if moved, _ := c.tooLateLocked(now); moved && c.rdWaiting {
			c.signalReader()
		}
		c.sendACKLocked(now, out, false)
		r.nextACK = gridUp(now + 1)
	}
	if !r.loss.empty() && now >= r.nextNAK {
		c.sendPeriodicNAKLocked(now, out)
		r.nextNAK = now + c.nakInterval()
	}
	s := &c.snd
	if s.buf.n > 0 {
		c.dropTooLateLocked(now)
		if s.sentEnd != s.buf.start && now >= c.rexmitDeadline() {
			// No ACK for a while: resend what is unacknowledged (libsrt's FASTREXMIT). With
			// periodic NAK reports the peer reports every gap it sees, but not the packets
			// lost at the tail of a stream that pauses, which only this recovers.
			c.st.pktSendLoss += uint64(s.loss.add(s.buf.start, wire.SeqAdd(s.sentEnd, -1)))
			s.rexmitN++
		}
	}
	full = c.sendLocked(now, out)
	if !full && now-c.lastSend >= keepAliveInterval && out.room() > 0 {
		b := wire.AppendControlHeader(out.buf(), &wire.Control{Type: wire.CtrlKeepAlive, Timestamp: c.ts(now), DestSocket: c.peerID})
		b = wire.AppendEmptyCIF(b)
		out.commit(b, c.peerUDP, c.peer)
		c.lastSend = now
	}
	next = c.nextDeadlineLocked(now)
	if !full {
		c.m.clk.schedule(c, next)
	}
	return full, next, false
}

// rexmitDeadline is when unacknowledged packets are resent for want of an ACK; each timeout
// in a row waits one period longer. The period, RTT + 4·RTTVar + 10 ms, is at most a
// lossRounds-th of the peer's latency (above its floor), as the periodic NAK interval: an RTT
// estimate inflated by a stall must not push it past the latency.
func (c *Conn) rexmitDeadline() int64 {
	floor := int64(ackTimeoutMin)
	if c.peerNAK {
		floor = tailRexmitMin
	}
	period := min(max(c.rtt+4*c.rttVar+ackInterval, floor), max(c.sndLatency/lossRounds, floor))
	return c.snd.lastAckAt + (c.snd.rexmitN+1)*period
}

// nextDeadlineLocked returns the next time service has something to do.
func (c *Conn) nextDeadlineLocked(now int64) int64 {
	next := c.lastRecv + int64(c.cfg.PeerIdleTimeout/1000)
	next = min(next, c.lastSend+keepAliveInterval)
	r := &c.rcv
	// The ACK tick runs while there is something to acknowledge, or a gap at the head of the
	// buffer that may become too late; not for packets that merely wait for their time.
	if r.ackSeq() != r.lastAckAcked || (r.buf.count > 0 && r.buf.at(0) == nil) || r.bufWasFull {
		next = min(next, r.nextACK)
	}
	if !r.loss.empty() {
		next = min(next, r.nextNAK)
	}
	s := &c.snd
	if f := s.buf.front(); f != nil {
		next = min(next, f.origin+c.sndDropThreshold()+1)
		if s.sentEnd != s.buf.start {
			next = min(next, c.rexmitDeadline())
		}
	}
	if s.pendingLocked() {
		if rate := s.paceRate(c.cfg.MaxBW); rate > 0 && s.nextSendAt-paceSlack > now {
			next = min(next, s.nextSendAt-paceSlack)
		} else if int(wire.SeqDiff(s.sentEnd, s.buf.start)) < s.flowWindow || !s.loss.empty() || s.dropOK {
			next = now
		}
	}
	if s.kmLeft > 0 {
		next = min(next, s.kmNext)
	}
	return max(next, now+1)
}

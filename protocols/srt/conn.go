package srt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	gosrt "github.com/datarhei/gosrt"
)

// LinkStats are an SRT connection's link statistics.
type LinkStats struct {
	// RTT is the smoothed round-trip time in milliseconds.
	RTT float64
	// PacketsReceived and PacketsSent count data packets, retransmissions included.
	PacketsReceived, PacketsSent uint64
	// PacketsLost counts data packets found missing on receipt (later recovered or not).
	PacketsLost uint64
	// PacketsRetransmitted counts retransmitted data packets: received ones on a publisher's
	// link, sent ones on a receiver's.
	PacketsRetransmitted uint64
	// PacketsDropped counts data packets given up as too late (receive and send side).
	PacketsDropped uint64
	// LinkCapacity is the estimated link capacity in Mbit/s.
	LinkCapacity float64
}

// linkStats reads c's statistics.
func linkStats(c gosrt.Conn) LinkStats {
	var s gosrt.Statistics
	c.Stats(&s)
	a := s.Accumulated
	return LinkStats{
		RTT:                  s.Instantaneous.MsRTT,
		PacketsReceived:      a.PktRecv,
		PacketsSent:          a.PktSent,
		PacketsLost:          a.PktRecvLoss,
		PacketsRetransmitted: a.PktRecvRetrans + a.PktRetrans,
		PacketsDropped:       a.PktRecvDrop + a.PktSendDrop,
		LinkCapacity:         s.Instantaneous.MbpsLinkCapacity,
	}
}

// dialAttempt bounds one handshake attempt. gosrt sends its induction once and never again, so
// one lost packet (or a peer that bound its port a moment before listening) fails an attempt;
// dial makes several within the connect timeout, as libsrt callers retransmit theirs.
const dialAttempt = time.Second

// dial calls addr, retrying handshakes that got no answer until cfg.ConnectionTimeout has
// passed; a refusal is final. gosrt cannot cancel a handshake, so ctx is checked between
// attempts.
func dial(ctx context.Context, addr string, cfg gosrt.Config) (gosrt.Conn, error) {
	deadline := time.Now().Add(cfg.ConnectionTimeout)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		attempt := cfg
		attempt.ConnectionTimeout = min(dialAttempt, max(time.Until(deadline), time.Millisecond))
		c, err := gosrt.Dial("srt", addr, attempt)
		if err == nil {
			return c, nil
		}
		// gosrt's only word for an unanswered handshake is this message.
		if !strings.Contains(err.Error(), "connection timeout") || time.Until(deadline) <= 0 {
			return nil, fmt.Errorf("srt dial %s: %w", addr, err)
		}
	}
}

// closeDialed closes a connection made by dial and waits for gosrt's socket reader. That
// goroutine reports its end on an unbuffered channel that gosrt's Close polls only once, right
// after closing the socket, so it usually blocks for ever; Read receives from that channel, so
// we call it until it hands back gosrt.ErrClientClosed (or a short limit passes, when Close
// itself got the report).
func closeDialed(c gosrt.Conn) {
	_ = c.Close()
	var b [1500]byte
	for range 100 {
		if _, err := c.Read(b[:]); errors.Is(err, gosrt.ErrClientClosed) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// watchPeer calls cancel once c is closed, by the peer or by anyone else, so that a sender
// blocked waiting for media notices a receiver that left. It reads and discards what the
// peer sends (nothing, on a receiving peer). The caller waits on the returned WaitGroup.
func watchPeer(c gosrt.Conn, cancel context.CancelFunc) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		var b [1500]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				return
			}
		}
	})
	return &wg
}

// acceptLoop hands each connection request to decide until the listener closes; decide must
// accept or reject without blocking, since gosrt runs handshakes on this goroutine. It
// returns nil once the listener was closed.
func acceptLoop(ln gosrt.Listener, decide func(gosrt.ConnRequest)) error {
	for {
		req, err := ln.Accept2()
		if err != nil {
			if errors.Is(err, gosrt.ErrListenerClosed) {
				return nil
			}
			return err
		}
		decide(req)
	}
}

// checkPassphrase rejects req unless its encryption matches passphrase: both none, or the
// caller's key material opens with passphrase. It reports whether req may go on.
func checkPassphrase(req gosrt.ConnRequest, passphrase string) (gosrt.RejectionReason, bool) {
	switch {
	case passphrase == "" && !req.IsEncrypted():
		return 0, true
	case passphrase == "" || !req.IsEncrypted():
		return gosrt.REJ_UNSECURE, false
	case req.SetPassphrase(passphrase) != nil:
		return gosrt.REJ_BADSECRET, false
	}
	return 0, true
}

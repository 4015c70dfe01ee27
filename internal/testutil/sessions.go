package testutil

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// SessionLog records what a server module tells its publisher hook (the SRT and RTMP servers'
// Publishers), with the time of each call. Safe for concurrent use.
type SessionLog struct {
	mu  sync.Mutex
	got []SessionCall
}

// SessionCall is one call: connected or disconnected, the stream id, the peer and when.
type SessionCall struct {
	Connected      bool
	StreamID, Addr string
	At             time.Time
}

// PublisherConnected records a session's start.
func (l *SessionLog) PublisherConnected(streamID, addr string) { l.add(true, streamID, addr) }

// PublisherDisconnected records a session's end.
func (l *SessionLog) PublisherDisconnected(streamID, addr string) { l.add(false, streamID, addr) }

func (l *SessionLog) add(connected bool, streamID, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, SessionCall{connected, streamID, addr, time.Now()})
}

// Calls returns the calls so far.
func (l *SessionLog) Calls() []SessionCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]SessionCall(nil), l.got...)
}

// CheckSessions fails t unless calls are connected/disconnected pairs of streamID, in order,
// each pair from one loopback address no other pair used; it returns each session's length.
func CheckSessions(t testing.TB, calls []SessionCall, streamID string) []time.Duration {
	t.Helper()
	if len(calls)%2 != 0 {
		t.Fatalf("%d calls, not pairs: %+v", len(calls), calls)
	}
	var lengths []time.Duration
	seen := map[string]bool{}
	for i := 0; i < len(calls); i += 2 {
		c, d := calls[i], calls[i+1]
		if !c.Connected || d.Connected || c.StreamID != streamID || d.StreamID != streamID || c.Addr != d.Addr ||
			!strings.HasPrefix(c.Addr, "127.0.0.1:") || seen[c.Addr] {
			t.Fatalf("session %d: %+v then %+v, want connected then disconnected of %q from one new loopback address; all: %+v",
				i/2, c, d, streamID, calls)
		}
		seen[c.Addr] = true
		lengths = append(lengths, d.At.Sub(c.At))
	}
	return lengths
}

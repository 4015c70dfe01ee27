package connlimit

import (
	"net"
	"testing"
)

// TestEvictIdle: with EvictIdle, a connection past a cap is admitted in place of the
// connection idle the longest (of its own address for MaxPerAddr, of any for MaxConns), and
// refused only when no suitable connection is idle.
func TestEvictIdle(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 3, MaxPerAddr: 2, EvictIdle: true}, nil)
	raw := []*addrConn{pipeFrom("10.0.0.1"), pipeFrom("10.0.0.1"), pipeFrom("10.0.0.2")}
	in := startAccepting(t, fl, l)
	var conns []*Conn
	for _, c := range raw {
		conns = append(conns, in.push(c).(*Conn))
	}
	a1, a2, b1 := conns[0], conns[1], conns[2]
	a1.Idle()
	b1.Idle()

	// The total cap: the longest idle, a1, makes room for 10.0.0.3.
	c1raw := pipeFrom("10.0.0.3")
	c1 := in.push(c1raw)
	if c1 == nil {
		t.Fatal("10.0.0.3 refused while two connections were idle")
	}
	if !raw[0].closed() || raw[2].closed() {
		t.Fatalf("closed: a1 %v, b1 %v; want a1 (idle the longest) only", raw[0].closed(), raw[2].closed())
	}
	if a1.Busy() {
		t.Fatal("a1.Busy() is true after a1 was closed to admit another")
	}
	if s := l.Stats(); s.Open != 3 || s.Idle != 1 || s.EvictedMaxConns != 1 || s.Refused() != 0 {
		t.Fatalf("stats %+v, want open 3, idle 1, evicted for max_conns 1", s)
	}

	// A busy connection is never closed: b1 turns busy, nothing is idle, 10.0.0.4 is refused.
	if !b1.Busy() {
		t.Fatal("b1.Busy() false while b1 is open")
	}
	if in.push(pipeFrom("10.0.0.4")) != nil {
		t.Fatal("10.0.0.4 admitted while every connection was busy")
	}
	if s := l.Stats(); s.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v, want one refusal for max_conns", s)
	}

	// Turning idle again puts a connection last: b1 idle, then c1, then b1 again.
	b1.Idle()
	c1.(*Conn).Idle()
	b1.Busy()
	b1.Idle()
	a3raw := pipeFrom("10.0.0.1") // 10.0.0.1 holds a2 (busy): one slot left; the total is full
	if in.push(a3raw) == nil {
		t.Fatal("10.0.0.1 refused while c1 and b1 were idle")
	}
	if !c1raw.closed() || raw[2].closed() {
		t.Fatalf("closed: c1 %v, b1 %v; want c1, idle the longest after b1 was used again", c1raw.closed(), raw[2].closed())
	}

	// The address cap: 10.0.0.1 holds a2 and a3, both busy. Its next connection is refused
	// although b1 (another address) is idle: closing b1 would not free a slot of 10.0.0.1.
	if in.push(pipeFrom("10.0.0.1")) != nil {
		t.Fatal("a third connection from 10.0.0.1 admitted while its two were busy")
	}
	// Once a2 is idle, it makes room for its own address's next connection; b1 stays.
	a2.Idle()
	if in.push(pipeFrom("10.0.0.1")) == nil {
		t.Fatal("10.0.0.1 refused while its own a2 was idle")
	}
	if !raw[1].closed() || raw[2].closed() {
		t.Fatalf("closed: a2 %v, b1 %v; want a2 only", raw[1].closed(), raw[2].closed())
	}
	s := l.Stats()
	if s.Open != 3 || s.Addrs != 2 || s.Evicted() != 3 || s.Refused() != 2 {
		t.Fatalf("stats %+v, want open 3 from 2 addresses, 3 evicted, 2 refused", s)
	}
	in.stop()
	for _, c := range in.admitted {
		_ = c.Close()
	}
	if s := l.Stats(); s.Open != 0 || s.Idle != 0 || s.Addrs != 0 {
		t.Fatalf("after closing all: %+v", s)
	}
}

// TestEvictOffIgnoresIdle: without EvictIdle, idle connections are kept and the new one is
// refused, as before.
func TestEvictOffIgnoresIdle(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 1}, nil)
	in := startAccepting(t, fl, l)
	first := pipeFrom("10.0.0.1")
	in.push(first).(*Conn).Idle()
	if in.push(pipeFrom("10.0.0.2")) != nil || first.closed() {
		t.Fatal("an idle connection was closed to admit another without EvictIdle")
	}
	in.stop()
}

// TestClosedConnStaysGone: a connection closed by its owner is neither idle nor busy again,
// and its slot is freed once whatever is called after.
func TestClosedConnStaysGone(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 2, MaxPerAddr: 2, EvictIdle: true}, nil)
	in := startAccepting(t, fl, l)
	c := in.push(pipeFrom("10.0.0.1")).(*Conn)
	c.Idle()
	_ = c.Close()
	c.Idle()
	if c.Busy() {
		t.Fatal("Busy() true on a closed connection")
	}
	_ = c.Close()
	if s := l.Stats(); s.Open != 0 || s.Idle != 0 || s.Addrs != 0 {
		t.Fatalf("stats %+v, want nothing open or idle", s)
	}
	in.stop()
}

// accepting runs Accept in a goroutine and hands over what it admits, one pushed connection
// at a time.
type accepting struct {
	t        *testing.T
	fl       *chanListener
	l        *Listener
	got      chan net.Conn
	done     chan struct{}
	admitted []net.Conn
}

func startAccepting(t *testing.T, fl *chanListener, l *Listener) *accepting {
	a := &accepting{t: t, fl: fl, l: l, got: make(chan net.Conn), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			a.got <- c
		}
	}()
	t.Cleanup(a.stop)
	return a
}

// push offers c to the listener and returns the admitted Conn, or nil when it was refused.
func (a *accepting) push(c *addrConn) net.Conn {
	a.t.Helper()
	before := a.l.Stats().Refused()
	a.fl.conns <- c
	got := admitted(a.t, a.got, a.l, before)
	if got != nil {
		a.admitted = append(a.admitted, got)
	}
	return got
}

// stop closes the listener and waits for the accepting goroutine.
func (a *accepting) stop() {
	_ = a.fl.Close()
	<-a.done
}

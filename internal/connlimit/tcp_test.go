package connlimit

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// echoServer serves a loopback port behind lim until the test ends, and returns the listener
// and its address: each admitted connection echoes what it reads and is closed when the peer
// closes. Cleanup closes the clients dialled later, then the listener, then waits.
func echoServer(t *testing.T, lim Limits) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(inner, lim, nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(wg.Wait)
	t.Cleanup(func() { _ = l.Close() })
	return l, l.Addr().String()
}

// served says whether the server echoes a byte on c; a refused connection reads EOF or a reset.
// The deadline only bounds a hang.
func served(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte{'x'}); err != nil {
		return false
	}
	b := make([]byte, 1)
	_, err := io.ReadFull(c, b)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection from %s neither served nor closed", c.LocalAddr())
	}
	return err == nil
}

// waitOpen polls until the listener counts n open connections (the server closes its side
// after reading the client's close).
func waitOpen(t *testing.T, l *Listener, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Open != n {
		if time.Now().After(deadline) {
			t.Fatalf("open connections %d, want %d", l.Stats().Open, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTCPCaps(t *testing.T) {
	l, addr := echoServer(t, Limits{MaxConns: 5, MaxPerAddr: 2})

	a1, a2 := testutil.DialFrom(t, "127.0.0.2", addr), testutil.DialFrom(t, "127.0.0.2", addr)
	if !served(t, a1) || !served(t, a2) {
		t.Fatal("the first two connections from 127.0.0.2 were not served")
	}
	if served(t, testutil.DialFrom(t, "127.0.0.2", addr)) {
		t.Fatal("the third connection from 127.0.0.2 was served past MaxPerAddr 2")
	}
	b1, b2 := testutil.DialFrom(t, "127.0.0.3", addr), testutil.DialFrom(t, "127.0.0.3", addr)
	if !served(t, b1) || !served(t, b2) {
		t.Fatal("another address was not served while 127.0.0.2 was at its cap")
	}
	c1 := testutil.DialFrom(t, "127.0.0.4", addr)
	if !served(t, c1) {
		t.Fatal("the fifth connection was not served")
	}
	if served(t, testutil.DialFrom(t, "127.0.0.5", addr)) {
		t.Fatal("a sixth connection was served past MaxConns 5")
	}
	s := l.Stats()
	if s.Open != 5 || s.RefusedMaxPerAddr != 1 || s.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v", s)
	}

	_ = a1.Close()
	waitOpen(t, l, 4)
	if !served(t, testutil.DialFrom(t, "127.0.0.2", addr)) {
		t.Fatal("127.0.0.2 was not served after one of its connections closed")
	}
	for _, c := range []net.Conn{a2, b1, b2, c1} {
		_ = c.Close()
	}
}

// TestTCPCyclesLeaveNoSlot opens and closes many connections from several addresses: every
// slot comes back, and the caps still admit a full set afterwards.
func TestTCPCyclesLeaveNoSlot(t *testing.T) {
	l, addr := echoServer(t, Limits{MaxConns: 6, MaxPerAddr: 2})
	srcs := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	const cycles = 100
	for i := range cycles {
		var conns []net.Conn
		for _, src := range srcs {
			for range 2 {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				if !served(t, c) {
					t.Fatalf("cycle %d: a connection from %s within the caps was refused", i, src)
				}
				conns = append(conns, c)
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
		waitOpen(t, l, 0)
	}
	s := l.Stats()
	if s.Accepted != cycles*6 || s.Refused() != 0 || s.Addrs != 0 {
		t.Fatalf("stats %+v, want %d accepted, none refused, no address left", s, cycles*6)
	}
}

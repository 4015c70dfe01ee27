package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// admitted waits until the listener either hands over the connection just pushed (returned) or
// refuses it (nil, seen as the refusal count passing before). The wait is bounded only to turn a
// hang into a failure.
func admitted(t testing.TB, got <-chan net.Conn, l *Listener, before uint64) net.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case c := <-got:
			return c
		default:
		}
		if l.Stats().Refused() > before {
			return nil
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatal("the listener neither admitted nor refused a connection")
	return nil
}

// acceptN pushes conns into fl one at a time and returns what Accept gave back for each: the
// admitted Conn, or nil when the listener refused it (Accept then waits for the next one).
func acceptN(t *testing.T, fl *chanListener, l *Listener, conns []*addrConn) []net.Conn {
	t.Helper()
	out := make([]net.Conn, len(conns))
	got := make(chan net.Conn)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(got)
				return
			}
			got <- c
		}
	}()
	for i, c := range conns {
		before := l.Stats().Refused()
		fl.conns <- c
		out[i] = admitted(t, got, l, before)
	}
	_ = fl.Close()
	for range got {
	}
	return out
}

func TestCaps(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 5, MaxPerAddr: 2}, nil)
	conns := []*addrConn{
		pipeFrom("10.0.0.1"), pipeFrom("10.0.0.1"), pipeFrom("10.0.0.1"), // third: per-address cap
		pipeFrom("10.0.0.2"), pipeFrom("::ffff:10.0.0.2"), // mapped counts as 10.0.0.2
		pipeFrom("10.0.0.2"),                       // per-address cap
		pipeFrom("10.0.0.3"), pipeFrom("10.0.0.4"), // the fifth is admitted, the sixth hits MaxConns
	}
	out := acceptN(t, fl, l, conns)
	want := []bool{true, true, false, true, true, false, true, false}
	for i, ok := range want {
		if (out[i] != nil) != ok {
			t.Errorf("conn %d from %s: admitted=%v, want %v", i, conns[i].remote, out[i] != nil, ok)
		}
		if !ok && !conns[i].closed() {
			t.Errorf("conn %d from %s was refused but not closed", i, conns[i].remote)
		}
		if ok && conns[i].closed() {
			t.Errorf("conn %d from %s was admitted but closed", i, conns[i].remote)
		}
	}
	s := l.Stats()
	if s.Open != 5 || s.Addrs != 3 || s.Accepted != 5 || s.RefusedMaxPerAddr != 2 || s.RefusedMaxConns != 1 {
		t.Fatalf("stats %+v, want open 5, addrs 3, accepted 5, refused per addr 2, max conns 1", s)
	}
	for _, c := range out {
		if c != nil {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s := l.Stats(); s.Open != 0 || s.Addrs != 0 {
		t.Fatalf("after close: stats %+v, want nothing open", s)
	}
}

func TestCloseFreesOnce(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 2, MaxPerAddr: 2}, nil)
	out := acceptN(t, fl, l, []*addrConn{pipeFrom("10.0.0.1"), pipeFrom("10.0.0.1")})
	for range 3 {
		_ = out[0].Close()
	}
	if s := l.Stats(); s.Open != 1 || s.Addrs != 1 {
		t.Fatalf("three Closes of one conn: stats %+v, want open 1 (a slot freed once)", s)
	}
	_ = out[1].Close()
	if s := l.Stats(); s.Open != 0 || s.Addrs != 0 {
		t.Fatalf("stats %+v, want nothing open", s)
	}
}

func TestNoCapsAdmitsAll(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: -1}, nil)
	var conns []*addrConn
	for range 50 {
		conns = append(conns, pipeFrom("10.0.0.1"))
	}
	out := acceptN(t, fl, l, conns)
	for i, c := range out {
		if c == nil {
			t.Fatalf("conn %d refused without caps", i)
		}
		_ = c.Close()
	}
	if s := l.Stats(); s.Accepted != 50 || s.Refused() != 0 || s.Open != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAcceptReturnsListenerError(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 1}, nil)
	_ = l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

func TestAddrKey(t *testing.T) {
	cases := []struct {
		addr  net.Addr
		want  string
		keyed bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, "192.0.2.7", true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}, "192.0.2.7", true},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 1}, "2001:db8:1:2::", true},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 1}, "2001:db8:1:2::", true},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, "fe80::", true},
		{&net.UDPAddr{IP: net.ParseIP("198.51.100.1"), Port: 1}, "198.51.100.1", true},
		{&net.UnixAddr{Name: "@", Net: "unix"}, "", false},
		{&net.TCPAddr{}, "", false},
		{nil, "", false},
	}
	for _, c := range cases {
		got, keyed := AddrKey(c.addr)
		if keyed != c.keyed || (keyed && got.String() != c.want) {
			t.Errorf("AddrKey(%v) = %v, %v; want %s, %v", c.addr, got, keyed, c.want, c.keyed)
		}
	}
}

func TestUnkeyedCountsOnlyTotal(t *testing.T) {
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxConns: 3, MaxPerAddr: 1}, nil)
	var conns []*addrConn
	for range 4 {
		a, b := net.Pipe()
		_ = b.Close()
		conns = append(conns, &addrConn{Conn: a, remote: &net.UnixAddr{Name: "@", Net: "unix"}})
	}
	out := acceptN(t, fl, l, conns)
	if out[0] == nil || out[1] == nil || out[2] == nil || out[3] != nil {
		t.Fatalf("unix peers: admitted %v, want the first three", out)
	}
	if s := l.Stats(); s.RefusedMaxConns != 1 || s.Addrs != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRefusalLogRateLimited(t *testing.T) {
	var buf testutil.SyncBuffer
	fl := newChanListener()
	l := Wrap(fl, Limits{MaxPerAddr: 1}, slog.New(slog.NewTextHandler(&buf, nil)))
	const n = 200
	conns := []*addrConn{pipeFrom("10.0.0.1")}
	for range n {
		conns = append(conns, pipeFrom("10.0.0.1"))
	}
	start := time.Now()
	acceptN(t, fl, l, conns)
	elapsed := time.Since(start)
	lines := strings.Count(buf.String(), "\n")
	// One line at the first refusal, then at most one a second.
	bound := 1 + int(elapsed/logEvery)
	if lines < 1 || lines > bound {
		t.Fatalf("%d refusals in %v logged %d lines, want 1..%d:\n%s", n, elapsed, lines, bound, buf.String())
	}
	if !strings.Contains(buf.String(), "cause=max_per_addr") || !strings.Contains(buf.String(), "remote=10.0.0.1:40000") {
		t.Fatalf("log line lacks cause or remote: %s", buf.String())
	}
	if s := l.Stats(); s.RefusedMaxPerAddr != n {
		t.Fatalf("refused %d, want %d", s.RefusedMaxPerAddr, n)
	}
}

// TestConcurrentOpenClose admits and closes from many goroutines at once (run with -race): the
// counts stay within the caps at every step and come back to zero.
func TestConcurrentOpenClose(t *testing.T) {
	fl := newChanListener()
	const maxConns, perAddr = 8, 3
	l := Wrap(fl, Limits{MaxConns: maxConns, MaxPerAddr: perAddr}, nil)
	var wg sync.WaitGroup
	var bad sync.Once
	var badMsg string
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if s := l.Stats(); s.Open > maxConns {
				bad.Do(func() { badMsg = fmt.Sprintf("open %d over cap %d", s.Open, maxConns) })
			}
			wg.Go(func() {
				_ = c.Close()
				_ = c.Close()
			})
		}
	})
	var senders sync.WaitGroup
	for g := range 6 {
		senders.Go(func() {
			for range 300 {
				fl.conns <- pipeFrom(fmt.Sprintf("10.0.0.%d", g%3))
			}
		})
	}
	senders.Wait()
	_ = fl.Close()
	wg.Wait()
	if badMsg != "" {
		t.Fatal(badMsg)
	}
	s := l.Stats()
	if s.Open != 0 || s.Addrs != 0 || s.Accepted+s.Refused() != 1800 {
		t.Fatalf("stats %+v, want nothing open and 1800 connections seen", s)
	}
}

func FuzzListener(f *testing.F) {
	f.Add(uint8(3), uint8(1), []byte{0, 0, 1, 0x80, 2, 0x81, 0})
	f.Add(uint8(0), uint8(0), []byte{0, 1, 2, 3})
	f.Add(uint8(1), uint8(5), []byte{0x80, 0x80, 5, 5, 0xff})
	f.Add(uint8(0x83), uint8(2), []byte{0, 1, 0xc0, 0xc1, 2, 0, 0xc2, 0xc0, 3, 1, 0x80, 0})
	f.Add(uint8(0x80), uint8(1), []byte{0, 0xc0, 0, 0xc0, 0xc0, 0, 1, 0xc1})
	f.Fuzz(func(t *testing.T, maxConns, perAddr uint8, ops []byte) {
		if len(ops) > 512 {
			ops = ops[:512]
		}
		lim := Limits{MaxConns: int(maxConns % 8), MaxPerAddr: int(perAddr % 4), EvictIdle: maxConns&0x80 != 0}
		fl := newChanListener()
		l := Wrap(fl, lim, nil)
		in := startAccepting(t, fl, l)
		// The model: the admitted conns that are open, with their address and, when idle,
		// when they became idle.
		type open struct {
			c    *Conn
			raw  *addrConn
			addr netip.Addr
			idle int // 0: busy; else the order in which it became idle
		}
		var opened []*open
		perModel := map[netip.Addr]int{}
		var refused, evicted uint64
		idleSeq := 0
		drop := func(i int) {
			perModel[opened[i].addr]--
			opened = append(opened[:i], opened[i+1:]...)
		}
		for _, op := range ops {
			switch op & 0xc0 {
			case 0x80: // close the (op&0x3f)-th open conn, twice
				if len(opened) == 0 {
					continue
				}
				i := int(op&0x3f) % len(opened)
				_ = opened[i].c.Close()
				_ = opened[i].c.Close()
				drop(i)
				continue
			case 0xc0: // the (op&0x3f)-th open conn turns idle, or busy when it was idle
				if len(opened) == 0 {
					continue
				}
				o := opened[int(op&0x3f)%len(opened)]
				if o.idle == 0 {
					idleSeq++
					o.idle = idleSeq
					o.c.Idle()
				} else if o.idle = 0; !o.c.Busy() {
					t.Fatalf("Busy() false on an open conn")
				}
				continue
			}
			ip := fmt.Sprintf("10.0.0.%d", op%4)
			addr := netip.MustParseAddr(ip)
			totalFull := lim.MaxConns > 0 && len(opened) >= lim.MaxConns
			addrFull := lim.MaxPerAddr > 0 && perModel[addr] >= lim.MaxPerAddr
			victim := -1
			if (totalFull || addrFull) && lim.EvictIdle {
				for i, o := range opened {
					if o.idle != 0 && (!addrFull || o.addr == addr) && (victim < 0 || o.idle < opened[victim].idle) {
						victim = i
					}
				}
			}
			admit := !(totalFull || addrFull) || victim >= 0
			raw := pipeFrom(ip)
			c := in.push(raw)
			if (c != nil) != admit {
				t.Fatalf("conn from %s: admitted=%v, model says %v (limits %+v, open %d)", ip, c != nil, admit, lim, len(opened))
			}
			if victim >= 0 {
				v := opened[victim]
				if !v.raw.closed() {
					t.Fatalf("conn from %s admitted past a cap, but the longest idle conn (from %s) is open", ip, v.addr)
				}
				if v.c.Busy() {
					t.Fatalf("Busy() true on a conn closed to admit another")
				}
				drop(victim)
				evicted++
			}
			if !admit {
				refused++
				continue
			}
			opened = append(opened, &open{c: c.(*Conn), raw: raw, addr: addr})
			perModel[addr]++
		}
		s := l.Stats()
		idle := 0
		for _, o := range opened {
			if o.raw.closed() {
				t.Fatalf("an open conn from %s was closed", o.addr)
			}
			if o.idle != 0 {
				idle++
			}
		}
		if s.Open != len(opened) || s.Idle != idle || s.Refused() != refused || s.Evicted() != evicted {
			t.Fatalf("stats %+v, model open %d idle %d refused %d evicted %d", s, len(opened), idle, refused, evicted)
		}
		for _, o := range opened {
			_ = o.c.Close()
		}
		in.stop()
		if s := l.Stats(); s.Open != 0 || s.Idle != 0 || s.Addrs != 0 {
			t.Fatalf("after closing all: %+v", s)
		}
	})
}

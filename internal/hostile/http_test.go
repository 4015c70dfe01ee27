package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
)

// The HTTP connection flood (issue 13, item 3).
const (
	// httpFDLimit is the open-file limit the issue measured with.
	httpFDLimit = 1024
	// httpFlood is how many connections of each kind attack, each kind from its own address.
	httpFlood = 600
	// apiMaxPerAddr is the API port's cap per client address (docs/limits.md, HTTP connection
	// caps): the rest of each kind is refused at once.
	apiMaxPerAddr = 128
	// apiMaxConnsAt1024 is the API port's total cap at an open-file limit of 1024 (half of it).
	apiMaxConnsAt1024 = httpFDLimit / 2
	// httpBodyTimeout is the API's body timeout (httpBodyTimeout, 10 s): a body that stops
	// coming is cut then.
	httpBodyTimeout = 10 * time.Second
	// httpIdleTimeout is the API's keep-alive timeout (httpIdleTimeout, 60 s): longer than the
	// case, which closes the idle connections itself.
	httpIdleTimeout = 60 * time.Second
	// refusedWithin tells a refused connection (closed at once by the cap) from a kept one.
	refusedWithin = time.Second
)

// floodConn is one attacking connection and what became of it.
type floodConn struct {
	c      net.Conn
	at     time.Time     // when its timeout started: its answer (idle) or its headers (body)
	closed time.Duration // when the server closed it, after at; -1 if not within the watch
}

// flood opens n connections from src, at most 64 dials at once, each started by open; then
// watches each until the server closes it, at most watch after its start. It returns once
// every connection is open; done is closed once every watch ended.
func flood(t *testing.T, n int, src, addr string, watch time.Duration, open func(*floodConn)) ([]*floodConn, <-chan struct{}) {
	t.Helper()
	out := make([]*floodConn, n)
	sem := make(chan struct{}, 64)
	var dials, watches sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		dials.Go(func() {
			defer func() { <-sem }()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				t.Errorf("dial from %s: %v", src, err)
				return
			}
			fc := &floodConn{c: c, at: time.Now()}
			open(fc)
			out[i] = fc
			watches.Go(func() { fc.watch(watch) })
		})
	}
	dials.Wait()
	done := make(chan struct{})
	go func() { watches.Wait(); close(done) }()
	var conns []*floodConn
	for _, fc := range out {
		if fc != nil {
			conns = append(conns, fc)
		}
	}
	return conns, done
}

// watch reads until the server closes the connection, at most limit after at.
func (fc *floodConn) watch(limit time.Duration) {
	_ = fc.c.SetReadDeadline(fc.at.Add(limit))
	buf := make([]byte, 4096)
	for {
		if _, err := fc.c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				fc.closed = -1
			} else {
				fc.closed = time.Since(fc.at)
			}
			return
		}
	}
}

// testHTTPConnections: at an open-file limit of 1024, 600 idle keep-alive connections from
// 127.0.0.2 and 600 slow-body connections from 127.0.0.3 to the API port. Before issue 13 they
// stayed open for ever and the API stopped answering ("too many open files"). Now each address
// keeps 128 and the rest are refused at once, the slow bodies are cut at the body timeout, and
// the probe from 127.0.0.1 keeps its answers fast.
func testHTTPConnections(t *testing.T) {
	s := start(t, options{fdLimit: httpFDLimit})
	p := s.rtmpPlayer("after-http")

	// What the API port may hold: its total cap's connections, each an idle or half-read
	// request of at most a 1000-byte body.
	b := budget(apiMaxConnsAt1024*connBytes, fmt.Sprintf("the API's %d connections × %d KiB", apiMaxConnsAt1024, connBytes>>10))
	w := s.watch()
	idles, idleDone := flood(t, httpFlood, "127.0.0.2", s.addr, httpIdleTimeout, func(fc *floodConn) {
		fmt.Fprintf(fc.c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", s.addr)
		_ = fc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(fc.c), nil); err == nil {
			resp.Body.Close()
			fc.at = time.Now() // answered: kept, idle from now
		}
	})
	slow, slowDone := flood(t, httpFlood, "127.0.0.3", s.addr, httpBodyTimeout+5*time.Second, func(fc *floodConn) {
		fmt.Fprintf(fc.c, "POST /api/vod/create HTTP/1.1\r\nHost: %s\r\nx-access-token: %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", s.addr, s.token)
	})
	fds, _ := procfs.OpenFDs(s.pid)
	<-slowDone
	// The idle ones are still open (their timeout is a minute): the case closes them.
	for _, fc := range idles {
		_ = fc.c.SetReadDeadline(time.Now())
	}
	<-idleDone
	for _, fc := range append(idles, slow...) {
		fc.c.Close()
	}
	f := w.stop()
	t.Logf("the server had %d files open with every attacker connected (limit %d)", fds, httpFDLimit)

	for _, set := range []struct {
		what    string
		conns   []*floodConn
		timeout time.Duration // 0: not reached in the case
	}{{"idle keep-alive", idles, 0}, {"slow body", slow, httpBodyTimeout}} {
		var kept, refused, open int
		var first, last time.Duration
		for _, fc := range set.conns {
			switch {
			case fc.closed >= 0 && fc.closed < refusedWithin:
				refused++
				continue
			case fc.closed < 0:
				open++
			default:
				if first == 0 || fc.closed < first {
					first = fc.closed
				}
				last = max(last, fc.closed)
			}
			kept++
		}
		t.Logf("%s: %d kept, %d refused at once; %d open at the end, the others closed %v to %v after their timeout started",
			set.what, kept, refused, open, first.Round(10*time.Millisecond), last.Round(10*time.Millisecond))
		if kept != apiMaxPerAddr || refused != len(set.conns)-apiMaxPerAddr {
			t.Errorf("%s: %d kept and %d refused of %d, want %d kept (the cap per address) and the rest refused at once",
				set.what, kept, refused, len(set.conns), apiMaxPerAddr)
		}
		if set.timeout > 0 && (open > 0 || first < set.timeout-500*time.Millisecond || last > set.timeout+5*time.Second) {
			t.Errorf("%s: %d still open, the others closed %v to %v after their timeout started, want all at about %v",
				set.what, open, first, last, set.timeout)
		}
		if set.timeout == 0 && open != kept {
			t.Errorf("%s: %d of %d kept connections closed before the idle timeout (%v)", set.what, kept-open, kept, httpIdleTimeout)
		}
	}
	f.check(t, s, b)
	p.prove(t)
}

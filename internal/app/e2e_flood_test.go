package app

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// floodConn is one attacking connection and what became of it.
type floodConn struct {
	c     net.Conn
	at    time.Time     // when it was opened (and its idle or body timeout started, if kept)
	after time.Duration // how long after at the server closed it; -1 if not within the watch
}

// flood opens n connections from src to addr, up to 64 dials at once, each started by open
// (which may read the server's answer, and then sets at), and watches every one until the
// server closes it, at most watch after at. It returns once every connection is open; done
// is closed once every watch ended.
func flood(t *testing.T, n int, src, addr string, watch time.Duration, open func(*floodConn)) (conns []*floodConn, done <-chan struct{}) {
	t.Helper()
	out := make([]*floodConn, n)
	sem := make(chan struct{}, 64)
	var dials, watches sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		dials.Go(func() {
			defer func() { <-sem }()
			c, err := testutil.DialSource(src, addr)
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
	ch := make(chan struct{})
	go func() { watches.Wait(); close(ch) }()
	return slices.DeleteFunc(out, func(fc *floodConn) bool { return fc == nil }), ch
}

// watch reads from the connection until the server closes it, at most limit after at, and
// records when.
func (fc *floodConn) watch(limit time.Duration) {
	_ = fc.c.SetReadDeadline(fc.at.Add(limit))
	buf := make([]byte, 4096)
	for {
		if _, err := fc.c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				fc.after = -1
			} else {
				fc.after = time.Since(fc.at)
			}
			return
		}
	}
}

// TestAPIConnectionFlood is the case at an open-file limit of 1024: 600 idle keep-alive
// connections from 127.0.0.2 and 600 slow-body connections from 127.0.0.3 to the API port.
// The per-address cap keeps apiMaxPerAddr of each: a slow body past it is closed at once, an
// idle connection past it replaces the address's connection idle the longest; a normal
// request from 127.0.0.1 keeps answering (median under 100 ms); the idle ones are closed after
// the idle timeout and the slow bodies after the body timeout.
func TestAPIConnectionFlood(t *testing.T) {
	const idle, body = 5 * time.Second, 3 * time.Second
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	c := startChild(t, addr, t.TempDir(), childFDLimitEnv+"=1024",
		fmt.Sprintf("%s=idle=%s,body=%s", childHTTPEnv, idle, body))

	// A normal request every 50 ms from another address, on a new connection each time.
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	stop := make(chan struct{})
	var lat []time.Duration
	var probeErrs []string
	var probes sync.WaitGroup
	probes.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			req, _ := http.NewRequest(http.MethodPost, c.ts.base+"/api/vod/getCount", strings.NewReader("{}"))
			req.Header.Set("x-access-token", c.ts.token)
			start := time.Now()
			resp, err := probe.Do(req)
			d := time.Since(start)
			if err != nil {
				probeErrs = append(probeErrs, err.Error())
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				probeErrs = append(probeErrs, resp.Status)
				continue
			}
			lat = append(lat, d)
		}
	})

	// Every connection is opened before any is checked, as an attacker would: 1 200 at once
	// are more than the 1 024 descriptors the server may open.
	idles, idleDone := flood(t, 600, "127.0.0.2", addr, idle+10*time.Second, func(fc *floodConn) {
		fmt.Fprintf(fc.c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		_ = fc.c.SetReadDeadline(time.Now().Add(idle))
		if resp, err := http.ReadResponse(bufio.NewReader(fc.c), nil); err == nil {
			resp.Body.Close()
			fc.at = time.Now() // answered: the idle timeout starts
		}
	})
	slow, slowDone := flood(t, 600, "127.0.0.3", addr, body+10*time.Second, func(fc *floodConn) {
		fmt.Fprintf(fc.c, "POST /api/vod/create HTTP/1.1\r\nHost: %s\r\nx-access-token: %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr, c.ts.token)
	})
	<-idleDone
	<-slowDone
	for _, fc := range append(idles, slow...) {
		fc.c.Close()
	}
	// The probes ran from the first attacking connection until the last kept one closed.
	close(stop)
	probes.Wait()

	// A connection closed well before its timeout was refused, or replaced by a newer one of
	// its address while it was idle (during the flood); a kept one is closed by its timeout.
	for _, set := range []struct {
		what  string
		conns []*floodConn
		limit time.Duration
	}{{"idle keep-alive", idles, idle}, {"slow body", slow, body}} {
		var kept, refused int
		var slowest, first, last time.Duration
		for _, fc := range set.conns {
			switch {
			case fc.after < 0:
				t.Errorf("%s connection still open %v after it was opened (timeout %v)", set.what, set.limit+10*time.Second, set.limit)
			case fc.after < set.limit/2:
				refused++
				slowest = max(slowest, fc.after)
			default:
				kept++
				if first == 0 || fc.after < first {
					first = fc.after
				}
				last = max(last, fc.after)
			}
		}
		t.Logf("%s: %d kept, %d refused or replaced (the slowest took %v); the kept ones closed %v to %v after their timeout started (timeout %v)",
			set.what, kept, refused, slowest, first, last, set.limit)
		if kept != apiMaxPerAddr || refused != len(set.conns)-apiMaxPerAddr {
			t.Errorf("%s: %d kept and %d refused or replaced of %d, want %d kept (the per-address cap), the rest closed at once",
				set.what, kept, refused, len(set.conns), apiMaxPerAddr)
		}
		if kept > 0 && (first < set.limit-200*time.Millisecond || last > set.limit+5*time.Second) {
			t.Errorf("%s: kept connections closed %v to %v after their timeout started, want about %v", set.what, first, last, set.limit)
		}
	}

	if len(probeErrs) > 0 {
		t.Errorf("%d normal requests failed during the flood: %q", len(probeErrs), probeErrs[:min(5, len(probeErrs))])
	}
	if len(lat) < 5 {
		t.Fatalf("only %d normal requests answered during the flood", len(lat))
	}
	slices.Sort(lat)
	median, worst := lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("normal requests during the flood: %d answered, median %v, slowest %v", len(lat), median, worst)
	if median > 100*time.Millisecond || worst > 2*time.Second {
		t.Errorf("normal requests during the flood: median %v (want under 100 ms), slowest %v (want under 2 s)", median, worst)
	}
}

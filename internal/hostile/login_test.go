package hostile

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
)

// The login flood (issue 13, item 5). The limits are docs/limits.md's "Logins".
const (
	// loginAttempts is how many wrong logins come at once from one address.
	loginAttempts = 200
	// loginPerAddr is DefaultLoginFailures: failed or in-flight logins an address may have in
	// the window.
	loginPerAddr = 5
	// loginPerUser is DefaultLoginUserFailures: the same for a user name, from any address.
	loginPerUser = 20
	// loginSpread is how many addresses join in against the same user name, each with
	// loginSpreadEach attempts at once.
	loginSpread, loginSpreadEach = 4, 50
	// retryBusy is how soon the patient attackers send a login again after a 503.
	retryBusy = 250 * time.Millisecond
	// requestCPU is a generous CPU cost of a login refused without a hash: a connection
	// accepted, a request parsed and answered.
	requestCPU = time.Millisecond
)

// loginFrom sends one login from the loopback address src and returns its status.
func (s *server) loginFrom(src, user, password string) (int, error) {
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}}
	body := fmt.Sprintf(`{"email":%q,"password":%q}`, user, password)
	resp, err := c.Post(s.base+"/api/auth/login", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// logins sends n wrong logins for user at once from each of srcs and counts the final answers
// by status (0: no answer, the connection was refused). With retry, a login answered 503 (every
// password check slot busy) is sent again after retryBusy, as a patient attacker would.
func (s *server) logins(srcs []string, n int, user string, retry bool) (count map[int]int, sent int) {
	var mu sync.Mutex
	count = map[int]int{}
	var wg sync.WaitGroup
	for _, src := range srcs {
		for i := range n {
			wg.Go(func() {
				var code int
				for {
					code, _ = s.loginFrom(src, user, fmt.Sprintf("wrong-%s-%d", src, i))
					mu.Lock()
					sent++
					mu.Unlock()
					if code != http.StatusServiceUnavailable || !retry {
						break
					}
					time.Sleep(retryBusy)
				}
				mu.Lock()
				count[code]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return count, sent
}

// cpu returns the server's CPU time so far.
func (s *server) cpu() time.Duration {
	s.t.Helper()
	st, err := procfs.ReadStat(s.pid)
	if err != nil {
		s.t.Fatal(err)
	}
	return st.CPU
}

// testLogin: 200 concurrent wrong logins from one address, then 50 at once from each of four
// more against the same user name. Before issue 13 every concurrent attempt ran its password
// hash (the limit was checked before the hash and counted after it): 100 cost 12 CPU-seconds
// and slowed other calls to 1.26 s. Now an address gets 5 hashes and a user name 20, the rest
// are answered 429 at once, the server's CPU follows the hashes allowed, and the probe stays
// fast.
func testLogin(t *testing.T) {
	s := start(t, options{})
	p := s.rtmpPlayer("after-login")

	// The cost of one hash (the production work factor), measured on an unknown user name from
	// an address of its own, so that it counts against neither limit of the attack.
	cpu0 := s.cpu()
	for i := range 3 {
		if code, err := s.loginFrom("127.0.3.1", "nobody", fmt.Sprint("wrong ", i)); err != nil || code != http.StatusUnauthorized {
			t.Fatalf("a wrong login for an unknown user: %d %v", code, err)
		}
	}
	perHash := (s.cpu() - cpu0) / 3
	t.Logf("one login check costs the server about %v of CPU", perHash)

	// 400 requests in flight at once at most, each a connection of connBytes.
	b := budget((loginAttempts+loginSpread*loginSpreadEach)*connBytes, fmt.Sprintf("%d login requests × %d KiB",
		loginAttempts+loginSpread*loginSpreadEach, connBytes>>10))
	w := s.watch()
	cpu0 = s.cpu()
	one, sentOne := s.logins([]string{"127.0.2.1"}, loginAttempts, "admin", false)
	var srcs []string
	for i := range loginSpread {
		srcs = append(srcs, fmt.Sprintf("127.0.2.%d", 2+i))
	}
	spread, sentSpread := s.logins(srcs, loginSpreadEach, "admin", true)
	// The name is now at its limit: even the right password from a new address is refused
	// without a hash, while the tokens already issued keep working (the probe's).
	right, err := s.loginFrom("127.0.2.100", "admin", adminPassword)
	if err != nil {
		t.Fatal(err)
	}
	cpu := s.cpu() - cpu0
	f := w.stop()

	t.Logf("%d wrong logins from one address: %v; %d from each of %d more addresses against the same name, retried after a 503: %v (%d requests); the right password then: %d; server CPU %v",
		loginAttempts, one, loginSpreadEach, loginSpread, spread, sentSpread, right, cpu)
	checked := one[http.StatusUnauthorized] + spread[http.StatusUnauthorized]
	if n := one[http.StatusUnauthorized]; n == 0 || n > loginPerAddr {
		t.Errorf("one address: %d logins checked (401), want 1 to %d", n, loginPerAddr)
	}
	// Past the API's 128 connections per address, a connection is closed at once (0 here).
	if n := one[0]; n > loginAttempts-apiMaxPerAddr {
		t.Errorf("one address: %d logins refused at connection, want at most %d (past the cap of %d per address)", n, loginAttempts-apiMaxPerAddr, apiMaxPerAddr)
	}
	if one[http.StatusTooManyRequests]+one[http.StatusServiceUnavailable]+one[http.StatusUnauthorized]+one[0] != loginAttempts {
		t.Errorf("one address: answers %v, want only 401, 429 (and 503 when the pool is full)", one)
	}
	// The patient attackers retried every 503 until the name's limit answered them.
	if checked != loginPerUser || spread[http.StatusUnauthorized] > loginSpread*loginPerAddr {
		t.Errorf("%d logins checked for one name (%d of them from the %d addresses), want the name's limit, %d, and at most %d an address",
			checked, spread[http.StatusUnauthorized], loginSpread, loginPerUser, loginPerAddr)
	}
	if spread[http.StatusTooManyRequests]+spread[http.StatusUnauthorized] != loginSpread*loginSpreadEach {
		t.Errorf("%d addresses: answers %v, want only 401 and 429", loginSpread, spread)
	}
	if right != http.StatusTooManyRequests {
		t.Errorf("the right password after the name reached its limit: %d, want 429", right)
	}
	// The CPU the attack cost: the hashes allowed (and the right password's, refused before
	// its hash), and at most requestCPU for each request refused without one.
	requests := sentOne + sentSpread + 1
	if limit := time.Duration(checked+1)*perHash + time.Duration(requests)*requestCPU; cpu > limit {
		t.Errorf("the attack cost the server %v of CPU, over %v for %d checks of %v and %d requests", cpu, limit, checked, perHash, requests)
	}
	f.check(t, s, b)
	p.prove(t)
}

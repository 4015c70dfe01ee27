package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// productionIterations is the work factor a real server hashes with (PasswordIterations
// is lowered for the rest of the tests).
const productionIterations = 600_000

// loginIterations is the work factor of the login tests: the production one, and a fifth of it
// under the race detector, whose instrumented PBKDF2 loop is several times slower, so that a check
// still costs about what it costs in production (0.1 to 0.2 s).
func loginIterations() int {
	if raceDetector {
		return productionIterations / 5
	}
	return productionIterations
}

// loopbackAPI serves the API on a loopback port over a real store whose admin password is
// hashed with the production work factor (loginIterations), and returns the server and a token.
func loopbackAPI(t *testing.T, tweak func(*Config)) (*server, *httptest.Server, string) {
	t.Helper()
	st := bootstrappedStore(t)
	ctx := context.Background()
	u, err := st.UserByName(ctx, AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := hashPassword(adminPassword, loginIterations())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetPasswordHash(ctx, u.ID, hash); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: st, Procs: newFakeProcs(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.mux)
	t.Cleanup(srv.Close)
	tok, err := IssueToken(ctx, st, AdminUser, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv, tok
}

// timedPost posts body and returns the status, the Retry-After header and the time taken.
func timedPost(t *testing.T, c *http.Client, url, token string, body any) (int, string, time.Duration) {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("x-access-token", token)
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After"), time.Since(start)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestConcurrentWrongLoginsFromOneAddress: 200 wrong logins at once from 127.0.0.1 against the
// production work factor. Each attempt is counted before its hash runs, so only the address's
// limit (5) of hashes run and the rest are answered 429 at once; authenticated calls made
// meanwhile stay fast.
func TestConcurrentWrongLoginsFromOneAddress(t *testing.T) {
	s, srv, tok := loopbackAPI(t, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	api := srv.URL + "/api/vod/getAll"

	var before []time.Duration
	for range 10 {
		code, _, d := timedPost(t, client, api, tok, nil)
		if code != http.StatusOK {
			t.Fatalf("getAll before: %d", code)
		}
		before = append(before, d)
	}

	const attempts = 200
	cpu0, wall0 := cpuTime(), time.Now()
	codes := make([]int, attempts)
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			codes[i], _, _ = timedPost(t, client, srv.URL+"/api/auth/login", "", map[string]any{"email": "admin", "password": fmt.Sprint("wrong ", i)})
			answered.Add(1)
		})
	}
	attack := make(chan struct{})
	go func() { wg.Wait(); close(attack) }()
	// While the 200 connections arrive (the test's own clients share the process's CPU) and
	// then while the admitted hashes run, until the last answer.
	var burst, hashing []time.Duration
	for done := false; !done; {
		select {
		case <-attack:
			done = true
			continue
		default:
		}
		inBurst := answered.Load() < attempts-DefaultLoginFailures
		code, _, d := timedPost(t, client, api, tok, nil)
		if code != http.StatusOK {
			t.Fatalf("getAll during the attack: %d", code)
		}
		if inBurst {
			burst = append(burst, d)
		} else {
			hashing = append(hashing, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	ran := s.hashes.ran.Load()
	t.Logf("200 wrong logins: %v; %d hashes ran; %v CPU in %v", count, ran, cpu.Round(time.Millisecond), wall.Round(time.Millisecond))
	t.Logf("getAll: median %v before; %d calls while the connections arrived: %v; %d calls while the hashes ran: median %v, max %v",
		median(before), len(burst), burst, len(hashing), median(hashing), slices.Max(hashing))
	if ran > DefaultLoginFailures || int64(count[http.StatusUnauthorized]) != ran {
		t.Errorf("%d hashes ran and %d answered 401, want at most %d and the same", ran, count[http.StatusUnauthorized], DefaultLoginFailures)
	}
	if count[http.StatusTooManyRequests] != attempts-int(ran) {
		t.Errorf("429 answered %d times, want %d", count[http.StatusTooManyRequests], attempts-int(ran))
	}
	if len(hashing) == 0 {
		t.Fatal("no call was made while the hashes ran")
	}
	// The median, not the maximum: on a shared machine one call may wait for a CPU for reasons
	// of its own; letting every hash run at once (before the fix) made each call wait for them.
	if m := median(hashing); m > 500*time.Millisecond {
		t.Errorf("authenticated calls took %v (median) while the login hashes ran", m)
	}
}

// TestLoginPoolRefusesAtOnce: wrong logins from 40 addresses (each under its own limit) at once
// against one worker and a queue of two: what the pool cannot take is answered 503 with
// Retry-After without a hash, and costs the address nothing.
func TestLoginPoolRefusesAtOnce(t *testing.T) {
	s, srv, _ := loopbackAPI(t, func(c *Config) {
		c.LoginWorkers, c.LoginQueue, c.LoginUserFailures = 1, 2, 1000
	})
	const attempts = 40
	type answer struct {
		code  int
		retry string
		took  time.Duration
	}
	answers := make([]answer, attempts)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range attempts {
		wg.Go(func() {
			<-start
			body, _ := json.Marshal(map[string]any{"email": "admin", "password": "wrong"})
			req := httptest.NewRequest(http.MethodPost, "/api/auth/login", bytes.NewReader(body))
			req.RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", i+1)
			rec := httptest.NewRecorder()
			t0 := time.Now()
			s.mux.ServeHTTP(rec, req)
			answers[i] = answer{rec.Code, rec.Header().Get("Retry-After"), time.Since(t0)}
		})
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	var refused []time.Duration
	for _, a := range answers {
		count[a.code]++
		if a.code == http.StatusServiceUnavailable {
			if a.retry != "1" {
				t.Errorf("503 with Retry-After %q, want 1", a.retry)
			}
			refused = append(refused, a.took)
		}
	}
	ran := s.hashes.ran.Load()
	t.Logf("%d logins from %d addresses on 1 worker + 2 queued: %v, %d hashes ran, 503 answered in median %v",
		attempts, attempts, count, ran, median(refused))
	if count[http.StatusServiceUnavailable] == 0 || int64(count[http.StatusUnauthorized]) != ran ||
		count[http.StatusUnauthorized]+count[http.StatusServiceUnavailable] != attempts {
		t.Fatalf("answers %v with %d hashes run", count, ran)
	}
	// A refused attempt was not counted against its address: the right password now logs in.
	var busy int
	for i, a := range answers {
		if a.code == http.StatusServiceUnavailable {
			busy = i
		}
	}
	body, _ := json.Marshal(map[string]any{"email": "admin", "password": adminPassword})
	req := httptest.NewRequest(http.MethodPost, "/api/auth/login", bytes.NewReader(body))
	req.RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", busy+1)
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("login after a 503 from the same address: %d %s", rec.Code, rec.Body)
	}
	_ = srv
}

func from(addr string) func(*http.Request) { return func(r *http.Request) { r.RemoteAddr = addr } }

// TestLoginLimitPerUserName: failures for one user name from many addresses, each under its own
// limit, reach the name's limit; another name is not affected, and the window slides.
func TestLoginLimitPerUserName(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.LoginUserFailures = 5 }) // and 3 per address
	wrong := map[string]any{"email": "admin", "password": "wrong"}
	for i := range 5 {
		name := "admin"
		if i%2 == 1 {
			name = " ADMIN" // names are compared without regard to case or spaces around
		}
		body := map[string]any{"email": name, "password": "wrong"}
		wantErr(t, e.post("/api/auth/login", body, noToken, from(fmt.Sprintf("203.0.113.%d:1000", i))), http.StatusUnauthorized, CodeUnauthorized, "")
		e.advance(time.Second)
	}
	res := e.post("/api/auth/login", wrong, noToken, from("203.0.113.50:1000"))
	wantErr(t, res, http.StatusTooManyRequests, CodeRateLimited, "")
	if ra, _ := strconv.Atoi(res.header.Get("Retry-After")); ra < 50 || ra > 60 {
		t.Fatalf("Retry-After %q, want about 55 s", res.header.Get("Retry-After"))
	}
	// The right password is refused too while the name is limited: the limit holds whatever is tried.
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken, from("203.0.113.51:1000")),
		http.StatusTooManyRequests, CodeRateLimited, "")
	// Another name from a fresh address is judged.
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "operator", "password": "x"}, noToken, from("203.0.113.52:1000")),
		http.StatusUnauthorized, CodeUnauthorized, "")
	// Once the first failure is a minute old, one more attempt for the name is allowed.
	e.advance(56 * time.Second)
	if res := e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken, from("203.0.113.53:1000")); res.code != http.StatusOK {
		t.Fatalf("after the window: %d %s", res.code, res.raw)
	}
}

// TestIPv6ClientsCountPerNetwork: addresses of one /64 share the address limit.
func TestIPv6ClientsCountPerNetwork(t *testing.T) {
	e := newEnv(t) // 3 per address
	wrong := map[string]any{"email": "admin", "password": "wrong"}
	for i := range 3 {
		wantErr(t, e.post("/api/auth/login", wrong, noToken, from(fmt.Sprintf("[2001:db8:1:2::%x]:1000", i+1))), http.StatusUnauthorized, CodeUnauthorized, "")
	}
	wantErr(t, e.post("/api/auth/login", wrong, noToken, from("[2001:db8:1:2:ffff::9]:1000")), http.StatusTooManyRequests, CodeRateLimited, "")
	wantErr(t, e.post("/api/auth/login", wrong, noToken, from("[2001:db8:1:3::1]:1000")), http.StatusUnauthorized, CodeUnauthorized, "")
}

// TestLimiterTableBounded: past maxTrackedKeys live keys, new keys are refused until some expire.
func TestLimiterTableBounded(t *testing.T) {
	l := newLoginLimiter(time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxTrackedKeys {
		if _, wait := l.reserve([]limitKey{{fmt.Sprint("k", i), 5}}, now); wait != 0 {
			t.Fatalf("key %d refused", i)
		}
	}
	if _, wait := l.reserve([]limitKey{{"new", 5}}, now.Add(time.Second)); wait != time.Minute {
		t.Fatalf("a new key past the bound: wait %v, want the window", wait)
	}
	if _, wait := l.reserve([]limitKey{{"k1", 5}}, now.Add(time.Second)); wait != 0 {
		t.Fatalf("a known key past the bound refused (%v)", wait)
	}
	if _, wait := l.reserve([]limitKey{{"new", 5}}, now.Add(time.Minute)); wait != 0 || len(l.seen) > maxTrackedKeys {
		t.Fatalf("after expiry: wait %v, %d keys", wait, len(l.seen))
	}
}

// TestReservationLifecycle: a success forgets the address's failures and its own attempt; a
// cancelled attempt is forgotten; a failure stays counted.
func TestReservationLifecycle(t *testing.T) {
	l := newLoginLimiter(time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := []limitKey{{"addr a", 2}, {"user u", 3}}
	r1, _ := l.reserve(keys, now)
	r1.failed()
	r2, _ := l.reserve(keys, now)
	if _, wait := l.reserve(keys, now); wait == 0 {
		t.Fatal("a third attempt while two are counted was allowed")
	}
	r2.cancel()
	r3, wait := l.reserve(keys, now)
	if wait != 0 {
		t.Fatal("a cancelled attempt still counts")
	}
	r3.succeeded("addr a")
	if len(l.seen["addr a"]) != 0 || len(l.seen["user u"]) != 1 {
		t.Fatalf("after success: %v", l.seen)
	}
}

package api

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults of the login limits; Config overrides them.
const (
	// DefaultLoginFailures is how many failed or in-flight logins one client address may have
	// within the window before it is answered 429.
	DefaultLoginFailures = 5
	// DefaultLoginUserFailures is how many failed or in-flight logins for one user name, from any
	// address, the window allows: enough that one address at its own limit cannot lock a user
	// out, few enough that a password cannot be guessed from many addresses at once.
	DefaultLoginUserFailures = 20
	// DefaultLoginWindow is the sliding window of both limits.
	DefaultLoginWindow = time.Minute
	// maxTrackedKeys bounds the limiter's table (addresses and user names, about 100 bytes each
	// plus 24 per attempt). When it is full of live entries, logins under new keys are answered
	// 429 until entries expire: memory stays bounded whatever the number of attackers.
	maxTrackedKeys = 10000
	// ipv6Prefix is the prefix length that counts as one IPv6 client: a site gets a /64 and
	// chooses freely among its addresses.
	ipv6Prefix = 64
)

// limitKey is one counter an attempt is charged to, with its limit.
type limitKey struct {
	key string
	max int
}

// loginLimiter counts login attempts per key (client address, user name) within a sliding window.
// An attempt is counted when it starts, before the password is checked, so that concurrent
// attempts cannot all pass the check; a success or an attempt the server could not judge is
// forgotten again.
type loginLimiter struct {
	mu     sync.Mutex
	window time.Duration
	seen   map[string][]time.Time // key → start times of failed and in-flight attempts, oldest first
}

func newLoginLimiter(window time.Duration) *loginLimiter {
	return &loginLimiter{window: window, seen: map[string][]time.Time{}}
}

// reservation is one attempt counted against its keys.
type reservation struct {
	l    *loginLimiter
	keys []limitKey
	at   time.Time
}

// reserve counts an attempt at now against every key, or, when a key is at its limit (or the
// table is full), counts nothing and returns how long to wait.
func (l *loginLimiter) reserve(keys []limitKey, now time.Time) (*reservation, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	added := 0
	for _, k := range keys {
		ts := l.prune(k.key, now)
		if len(ts) >= k.max {
			// Allowed again once enough attempts age out of the window.
			wait = max(wait, ts[len(ts)-k.max].Add(l.window).Sub(now))
		}
		if len(ts) == 0 {
			added++
		}
	}
	if wait > 0 {
		return nil, wait
	}
	if len(l.seen)+added > maxTrackedKeys {
		for k := range l.seen {
			l.prune(k, now)
		}
		if len(l.seen)+added > maxTrackedKeys {
			return nil, l.window
		}
	}
	for _, k := range keys {
		l.seen[k.key] = append(l.seen[k.key], now)
	}
	return &reservation{l: l, keys: keys, at: now}, 0
}

// failed keeps the attempt counted: it is now a failure within the window.
func (r *reservation) failed() {}

// cancel forgets the attempt: the server could not judge it (busy, store error, client gone).
func (r *reservation) cancel() {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	for _, k := range r.keys {
		r.l.drop(k.key, r.at)
	}
}

// succeeded forgets the attempt, and every failure of the key clear (the client's address).
func (r *reservation) succeeded(clear string) {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	for _, k := range r.keys {
		r.l.drop(k.key, r.at)
	}
	delete(r.l.seen, clear)
}

// drop removes one attempt started at t from key; l.mu is held.
func (l *loginLimiter) drop(key string, t time.Time) {
	ts := l.seen[key]
	for i, x := range ts {
		if x.Equal(t) {
			ts = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(l.seen, key)
		return
	}
	l.seen[key] = ts
}

// prune drops attempts older than the window from key; l.mu is held.
func (l *loginLimiter) prune(key string, now time.Time) []time.Time {
	ts := l.seen[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= l.window {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.seen, key)
		return nil
	}
	l.seen[key] = ts
	return ts
}

// clientAddr is the address failed logins are counted against: the peer's IP, and for IPv6 its
// /64 network.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.To4() != nil {
		return host
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(ipv6Prefix, 128)), Mask: net.CIDRMask(ipv6Prefix, 128)}).String()
}

// userKey is the limiter key of a user name: names are compared without regard to case.
func userKey(name string) string { return "user " + strings.ToLower(strings.TrimSpace(name)) }

// addrKey is the limiter key of a client address.
func addrKey(addr string) string { return "addr " + addr }

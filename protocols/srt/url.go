package srt

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/redact"
)

// Endpoint is a parsed SRT URL.
type Endpoint struct {
	// Addr is "host:port": the peer to call, or the address to listen on (host may be empty).
	Addr string
	// Listen is true for mode=listener: wait for the peer to call.
	Listen bool
	// Rendezvous is true for mode=rendezvous: both sides bind a port and call each other; Addr
	// is the peer, Local the address bound here.
	Rendezvous bool
	// Local is "host:port", the address a rendezvous binds (host may be empty: every
	// interface); "" otherwise.
	Local string
	Options
}

// ParseURL parses "srt://host:port?key=value&..." with libsrt's query keys:
//
//   - streamid (or srt_streamid): the stream id a caller sends;
//   - latency, or else rcvlatency: milliseconds (not ffmpeg's microseconds), at most 60000;
//   - passphrase (10 to 79 characters), pbkeylen (16, 24, 32), maxbw (bytes/s, -1 unlimited);
//   - peeridletimeo (or timeout), conntimeo (or connect_timeout): milliseconds;
//   - rcvbuf, sndbuf: buffer sizes in bytes;
//   - kmrefreshrate, kmpreannounce: key refresh period and overlap, in packets;
//   - mode: caller (default; also client), listener (also server) or rendezvous;
//   - with mode=rendezvous only: localport (or port, libsrt's name), the UDP port bound here,
//     default the peer's port as in libsrt; localip (or adapter), the address bound, default
//     every interface;
//   - transtype=live, payloadsize (or pkt_size) = 1316: the only values sluice sends;
//   - tlpktdrop, nakreport, tsbpdmode, messageapi, enforced_encryption: on, as sluice always is.
//
// Any other key is refused with ErrInvalidURL naming it: a setting that would be ignored is
// a surprise waiting for the operator; so is a key repeated with another value. A "#" after
// the "?" is part of the query, as OBS and ffmpeg read it (streamid=#!::r=...). A caller
// needs a host and a port; a listener may leave the host empty.
func ParseURL(raw string) (Endpoint, error) { return parseURL(raw, false) }

// ParseListenURL parses the URL of a listen input, "srt://:port?latency=200&passphrase=...":
// as ParseURL, but the endpoint always listens (mode=caller is refused).
func ParseListenURL(raw string) (Endpoint, error) { return parseURL(raw, true) }

func parseURL(raw string, listen bool) (Endpoint, error) {
	u, err := url.Parse(hashInQuery(raw))
	if err != nil {
		// url.Parse's error quotes the whole URL.
		return Endpoint{}, fmt.Errorf("srt url: %w: %w", redact.Error(err, hashInQuery(raw)), ErrInvalidURL)
	}
	if !strings.EqualFold(u.Scheme, "srt") {
		return Endpoint{}, fmt.Errorf("srt url %q: scheme %q, want srt: %w", redact.Parsed(u), u.Scheme, ErrInvalidURL)
	}
	if u.Fragment != "" {
		return Endpoint{}, fmt.Errorf("srt url %q: a \"#\" before the query: %w", redact.Parsed(u), ErrInvalidURL)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: query: %w: %w", redact.Parsed(u), err, ErrInvalidURL)
	}
	if err := checkRepeats(q); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	ep := Endpoint{Listen: listen}
	switch m := strings.ToLower(q.Get("mode")); m {
	case "":
	case "caller", "client":
		if listen {
			return Endpoint{}, fmt.Errorf("srt url %q: a listen input cannot be mode=%s: %w", redact.Parsed(u), m, ErrInvalidURL)
		}
	case "listener", "server":
		ep.Listen = true
	case "rendezvous":
		if listen {
			return Endpoint{}, fmt.Errorf("srt url %q: a listen input cannot be mode=%s: %w", redact.Parsed(u), m, ErrInvalidURL)
		}
		ep.Rendezvous = true
	default:
		return Endpoint{}, fmt.Errorf("srt url %q: mode %q, want caller, listener or rendezvous: %w", redact.Parsed(u), m, ErrInvalidURL)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: address %q: want host:port: %w", redact.Parsed(u), u.Host, ErrInvalidURL)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 || (p == 0 && !ep.Listen) {
		return Endpoint{}, fmt.Errorf("srt url %q: port %q: want 1 to 65535: %w", redact.Parsed(u), port, ErrInvalidURL)
	}
	if host == "" && !ep.Listen {
		return Endpoint{}, fmt.Errorf("srt url %q: a caller needs a host: %w", redact.Parsed(u), ErrInvalidURL)
	}
	ep.Addr = net.JoinHostPort(host, port)
	if ep.Local, err = localAddr(q, ep.Rendezvous, port); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}

	if err := checkKeys(q); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	if err := checkAlwaysOn(q); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	ep.StreamID = first(q, "streamid", "srt_streamid")
	ep.Passphrase = q.Get("passphrase")
	if ep.Latency, err = millis(q, "latency", "rcvlatency"); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	if ep.PeerIdleTimeout, err = millis(q, "peeridletimeo", "timeout"); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	if ep.ConnectTimeout, err = millis(q, "conntimeo", "connect_timeout"); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	ints := []struct {
		key string
		to  func(int64)
		max int64
	}{
		{"pbkeylen", func(v int64) { ep.PBKeyLen = int(v) }, 32},
		{"maxbw", func(v int64) { ep.MaxBW = v }, 1 << 40},
		{"rcvbuf", func(v int64) { ep.RecvBuffer = int(v) }, 1 << 31},
		{"sndbuf", func(v int64) { ep.SendBuffer = int(v) }, 1 << 31},
		{"kmrefreshrate", func(v int64) { ep.KMRefreshRate = uint32(v) }, 1<<32 - 1},
		{"kmpreannounce", func(v int64) { ep.KMPreAnnounce = uint32(v) }, 1<<32 - 1},
	}
	for _, i := range ints {
		s := q.Get(i.key)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < -1 || v > i.max {
			return Endpoint{}, fmt.Errorf("srt url %q: %s %q: want a whole number up to %d: %w", redact.Parsed(u), i.key, s, i.max, ErrInvalidURL)
		}
		i.to(v)
	}
	if t := q.Get("transtype"); t != "" && !strings.EqualFold(t, "live") {
		return Endpoint{}, fmt.Errorf("srt url %q: transtype %q: sluice speaks SRT live mode only: %w", redact.Parsed(u), t, ErrInvalidURL)
	}
	if s := first(q, "payloadsize", "pkt_size"); s != "" && s != strconv.Itoa(payloadSize) {
		return Endpoint{}, fmt.Errorf("srt url %q: payload size %q: sluice sends %d-byte payloads (7 TS packets): %w", redact.Parsed(u), s, payloadSize, ErrInvalidURL)
	}
	if err := ep.Validate(); err != nil {
		return Endpoint{}, fmt.Errorf("srt url %q: %w", redact.Parsed(u), err)
	}
	return ep, nil
}

// knownKeys are the query keys ParseURL understands.
var knownKeys = []string{
	"streamid", "srt_streamid", "latency", "rcvlatency", "passphrase", "pbkeylen", "maxbw",
	"peeridletimeo", "timeout", "conntimeo", "connect_timeout", "rcvbuf", "sndbuf",
	"kmrefreshrate", "kmpreannounce", "mode", "transtype", "payloadsize", "pkt_size",
	"localport", "port", "localip", "adapter",
	"tlpktdrop", "nakreport", "tsbpdmode", "messageapi", "enforced_encryption",
}

// alwaysOn are libsrt's live-mode switches that sluice's stack always has on: an address may
// say so (srt-live-transmit's often do), not turn them off.
var alwaysOn = []string{"tlpktdrop", "nakreport", "tsbpdmode", "messageapi", "enforced_encryption"}

// checkAlwaysOn refuses an alwaysOn switch turned off; libsrt reads 1, yes, on, true as on.
func checkAlwaysOn(q url.Values) error {
	for _, k := range alwaysOn {
		if v := q.Get(k); v != "" && !slices.Contains([]string{"1", "yes", "on", "true"}, strings.ToLower(v)) {
			return fmt.Errorf("%s=%s: sluice's live mode always has it on: %w", k, v, ErrInvalidURL)
		}
	}
	return nil
}

// aliases are the names libsrt and ffmpeg give one setting.
var aliases = [][]string{
	{"streamid", "srt_streamid"}, {"latency", "rcvlatency"}, {"peeridletimeo", "timeout"},
	{"conntimeo", "connect_timeout"}, {"payloadsize", "pkt_size"}, {"localport", "port"},
	{"localip", "adapter"},
}

// checkRepeats refuses a key given twice, or two names of one setting, with different values:
// ffmpeg takes the first, libsrt sets them in turn, and sluice would silently pick one.
// Values are not shown: one may be a passphrase.
func checkRepeats(q url.Values) error {
	for _, k := range knownKeys {
		names := []string{k}
		for _, a := range aliases {
			if slices.Contains(a, k) {
				names = a
			}
		}
		var seen []string
		var value string
		for _, n := range names {
			for _, v := range q[n] {
				if len(seen) > 0 && v != value {
					what := n + " given twice"
					if !slices.Contains(seen, n) {
						what = seen[0] + " and " + n
					}
					return fmt.Errorf("%s with different values: give one: %w", what, ErrInvalidURL)
				}
				if !slices.Contains(seen, n) {
					seen = append(seen, n)
				}
				value = v
			}
		}
	}
	return nil
}

// hashInQuery escapes every "#" after the "?": OBS and ffmpeg take a stream id such as
// "#!::r=cam1,m=publish" as written, where a URL parser would cut a fragment off, dropping the
// stream id and every option after it.
func hashInQuery(raw string) string {
	head, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	return head + "?" + strings.ReplaceAll(query, "#", "%23")
}

// localAddr is the address a rendezvous binds: localip (or adapter) and localport (or port),
// the port defaulting to the peer's. The keys are refused in other modes, where sluice binds
// no chosen address (a caller's port is the system's; a listener's is in the URL's host).
func localAddr(q url.Values, rendezvous bool, peerPort string) (string, error) {
	ip, port := first(q, "localip", "adapter"), first(q, "localport", "port")
	if !rendezvous {
		if ip != "" || port != "" {
			return "", fmt.Errorf("localip, localport (adapter, port) go with mode=rendezvous only: %w", ErrInvalidURL)
		}
		return "", nil
	}
	if ip != "" {
		if _, err := netip.ParseAddr(ip); err != nil {
			return "", fmt.Errorf("localip %q: want an IP address: %w", ip, ErrInvalidURL)
		}
	}
	if port == "" {
		port = peerPort
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("localport %q: want 1 to 65535: %w", port, ErrInvalidURL)
	}
	return net.JoinHostPort(ip, port), nil
}

// checkKeys refuses query keys ParseURL does not understand, naming every one of them.
func checkKeys(q url.Values) error {
	var unknown []string
	for k := range q {
		if !slices.Contains(knownKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown option %s (known: %s): %w", strings.Join(unknown, ", "), strings.Join(knownKeys, ", "), ErrInvalidURL)
}

// first returns the first of keys given in q.
func first(q url.Values, keys ...string) string {
	for _, k := range keys {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// millis reads a whole number of milliseconds from the first of keys given.
func millis(q url.Values, keys ...string) (time.Duration, error) {
	for _, k := range keys {
		s := q.Get(k)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > int64(time.Hour/time.Millisecond) {
			return 0, fmt.Errorf("%s %q: want whole milliseconds: %w", k, s, ErrInvalidURL)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	return 0, nil
}

// shown returns raw as logs and errors show it (redact.URL), "#" in the query read as
// ParseURL reads it.
func shown(raw string) string { return redact.URL(hashInQuery(raw)) }

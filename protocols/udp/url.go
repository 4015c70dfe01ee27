package udp

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Bounds of URL options.
const (
	maxReadBuffer = 256 << 20 // buffer_size, fifo_size × 188
	maxPktSize    = 64 * 1024 / mpegts.PacketSize * mpegts.PacketSize
	defaultTTL    = 16 // ffmpeg's default multicast TTL
)

// endpoint is a parsed udp:// or rtp:// URL: the input or output address and its options.
type endpoint struct {
	scheme string
	host   string // as written: empty for "@:port" or ":port"
	port   int
	ip     net.IP // nil when host is empty
	// Options from the query.
	iface      string        // interface=NAME
	localAddr  net.IP        // localaddr=IP
	readBuffer int           // buffer_size (bytes) or fifo_size (188-byte packets); 0 unset
	timeout    time.Duration // timeout (µs, as ffmpeg); 0 unset
	ttl        int           // ttl; -1 unset
	pktSize    int           // pkt_size; 0 unset
	// sources and block are ffmpeg's source filters of a group: receive only from sources
	// (a source-specific join), or from any sender but block.
	sources, block []net.IP
	keys           []string // the query's keys, sorted, to log those the user does not read
}

// multicast tells whether the address is a multicast group.
func (e endpoint) multicast() bool { return e.ip != nil && e.ip.IsMulticast() }

// parseURL parses a URL of one of the schemes: udp://[@][host]:port[?options]. The host is
// a literal IP address or a name (resolved for outputs). Options this package does not use
// are ignored; a bad value of one it uses is an error.
func parseURL(raw string, schemes ...string) (endpoint, error) {
	e := endpoint{ttl: -1}
	u, err := url.Parse(raw)
	where := redact.URL(raw)
	if err != nil {
		return e, fmt.Errorf("url %q: %w", where, redact.Error(err, raw))
	}
	e.scheme = strings.ToLower(u.Scheme)
	if !slices.Contains(schemes, e.scheme) {
		return e, fmt.Errorf("url %q: scheme %q, want %s", where, u.Scheme, strings.Join(schemes, " or "))
	}
	if u.User != nil && u.User.String() != "" {
		return e, fmt.Errorf("url %q: unexpected user info", where)
	}
	e.host = u.Hostname()
	ps := u.Port()
	if ps == "" {
		return e, fmt.Errorf("url %q: no port", where)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return e, fmt.Errorf("url %q: port %q out of 1-65535", where, ps)
	}
	e.port = port
	if e.host != "" {
		e.ip = net.ParseIP(e.host)
	}
	if err := e.parseQuery(u.Query()); err != nil {
		return e, fmt.Errorf("url %q: %w", where, err)
	}
	return e, nil
}

// CheckURL checks the options of a udp:// or rtp:// address as Pull, Send and SendRTP read
// them, so that a bad one is refused when the record is created.
func CheckURL(raw string) error {
	_, err := parseURL(raw, "udp", "rtp")
	return err
}

// unused returns the query's keys other than used: options ffmpeg knows that change nothing
// here (reuse, overrun_nonfatal, ...) or misspelt ones, for the log.
func (e endpoint) unused(used ...string) []string {
	var out []string
	for _, k := range e.keys {
		if !slices.Contains(used, k) {
			out = append(out, k)
		}
	}
	return out
}

// ipList reads ffmpeg's comma-separated list of addresses of key, of the family of group.
func ipList(q url.Values, key string, group net.IP) ([]net.IP, error) {
	if q.Has(key) && !group.IsMulticast() {
		return nil, fmt.Errorf("option %s: filters the senders of a multicast group, and the address is none", key)
	}
	var out []net.IP
	for _, v := range q[key] {
		for a := range strings.SplitSeq(v, ",") {
			ip := net.ParseIP(strings.TrimSpace(a))
			if ip == nil || (ip.To4() == nil) != (group.To4() == nil) {
				return nil, fmt.Errorf("option %s=%q: want IP addresses of the group's family, separated by commas", key, v)
			}
			out = append(out, ip)
		}
	}
	return out, nil
}

func (e *endpoint) parseQuery(q url.Values) error {
	var err error
	num := func(key string, lo, hi int) int {
		v := q.Get(key)
		if v == "" || err != nil {
			return 0
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < lo || n > hi {
			err = fmt.Errorf("option %s=%q: want an integer in %d-%d", key, v, lo, hi)
			return 0
		}
		return n
	}
	if n := num("fifo_size", 1, maxReadBuffer/mpegts.PacketSize); n > 0 {
		e.readBuffer = n * mpegts.PacketSize
	}
	if n := num("buffer_size", 1, maxReadBuffer); n > 0 {
		e.readBuffer = n
	}
	if n := num("timeout", 1, 1<<31-1); n > 0 {
		e.timeout = time.Duration(n) * time.Microsecond
	}
	if q.Has("ttl") {
		e.ttl = num("ttl", 0, 255)
	}
	e.pktSize = num("pkt_size", mpegts.PacketSize, maxPktSize)
	if err != nil {
		return err
	}
	if e.pktSize%mpegts.PacketSize != 0 {
		return fmt.Errorf("option pkt_size=%d: want a multiple of %d", e.pktSize, mpegts.PacketSize)
	}
	if e.sources, err = ipList(q, "sources", e.ip); err != nil {
		return err
	}
	if e.block, err = ipList(q, "block", e.ip); err != nil {
		return err
	}
	if e.sources != nil && e.block != nil {
		return fmt.Errorf("options sources and block: give one")
	}
	for k := range q {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	e.iface = q.Get("interface")
	if v := q.Get("localaddr"); v != "" {
		if e.localAddr = net.ParseIP(v); e.localAddr == nil {
			return fmt.Errorf("option localaddr=%q: want an IP address", v)
		}
	}
	return nil
}

// interfaceOf finds the interface named by the interface= or localaddr= option; nil when
// neither is set (the kernel's choice).
func (e endpoint) interfaceOf() (*net.Interface, error) {
	if e.iface != "" {
		ifi, err := net.InterfaceByName(e.iface)
		if err != nil {
			return nil, fmt.Errorf("interface %q: %w", e.iface, err)
		}
		return ifi, nil
	}
	if e.localAddr == nil {
		return nil, nil
	}
	ifis, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	for i := range ifis {
		addrs, err := ifis[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(e.localAddr) {
				return &ifis[i], nil
			}
		}
	}
	return nil, fmt.Errorf("localaddr %s: no interface has this address", e.localAddr)
}

// ifaceIPv4 returns the first IPv4 address of an interface.
func ifaceIPv4(ifi *net.Interface) (net.IP, error) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", ifi.Name, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.To4(), nil
		}
	}
	return nil, fmt.Errorf("interface %s has no IPv4 address", ifi.Name)
}

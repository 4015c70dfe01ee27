package udp

import (
	"strings"
	"testing"
	"time"
)

var urlCases = []struct {
	url     string
	schemes []string
	err     string // substring; empty for success
	check   func(endpoint) bool
}{
	{"udp://@:1234", []string{"udp"}, "", func(e endpoint) bool { return e.port == 1234 && e.host == "" && !e.multicast() }},
	{"udp://:1234", []string{"udp"}, "", func(e endpoint) bool { return e.port == 1234 && e.ip == nil }},
	{"udp://0.0.0.0:5000", []string{"udp"}, "", func(e endpoint) bool { return e.port == 5000 && !e.multicast() }},
	{"udp://239.1.2.3:5000?localaddr=127.0.0.1", []string{"udp"}, "", func(e endpoint) bool {
		return e.multicast() && e.localAddr.String() == "127.0.0.1"
	}},
	{"udp://@239.1.2.3:5000?interface=lo", []string{"udp"}, "", func(e endpoint) bool { return e.multicast() && e.iface == "lo" }},
	{"udp://[ff15::1]:5000", []string{"udp"}, "", func(e endpoint) bool { return e.multicast() }},
	{"UDP://host.example:5000?pkt_size=376&ttl=4", []string{"udp"}, "", func(e endpoint) bool {
		return e.host == "host.example" && e.pktSize == 376 && e.ttl == 4
	}},
	{"udp://:1?buffer_size=1000000&fifo_size=10", []string{"udp"}, "", func(e endpoint) bool { return e.readBuffer == 1000000 }},
	{"udp://:1?fifo_size=10", []string{"udp"}, "", func(e endpoint) bool { return e.readBuffer == 1880 }},
	{"udp://:1?timeout=2500000", []string{"udp"}, "", func(e endpoint) bool { return e.timeout == 2500*time.Millisecond }},
	{"udp://:1?ttl=0", []string{"udp"}, "", func(e endpoint) bool { return e.ttl == 0 }},
	{"udp://:1", []string{"udp"}, "", func(e endpoint) bool { return e.ttl == -1 && e.pktSize == 0 }},
	{"rtp://127.0.0.1:5004", []string{"rtp"}, "", func(e endpoint) bool { return e.scheme == "rtp" }},
	{"udp://:1?unknown=x", []string{"udp"}, "", func(e endpoint) bool { return true }},
	{"rtp://127.0.0.1:5004", []string{"udp"}, "scheme", nil},
	{"udp://127.0.0.1", []string{"udp"}, "no port", nil},
	{"udp://127.0.0.1:0", []string{"udp"}, "out of 1-65535", nil},
	{"udp://127.0.0.1:70000", []string{"udp"}, "out of 1-65535", nil},
	{"udp://user@127.0.0.1:1", []string{"udp"}, "user info", nil},
	{"udp://:1?pkt_size=1000", []string{"udp"}, "multiple of 188", nil},
	{"udp://:1?pkt_size=100", []string{"udp"}, "pkt_size", nil},
	{"udp://:1?ttl=300", []string{"udp"}, "ttl", nil},
	{"udp://:1?timeout=-1", []string{"udp"}, "timeout", nil},
	{"udp://:1?buffer_size=x", []string{"udp"}, "buffer_size", nil},
	{"udp://:1?localaddr=nope", []string{"udp"}, "localaddr", nil},
	{"udp://%zz:1", []string{"udp"}, "url", nil},
	{"udp://@232.1.2.3:5000?sources=10.0.0.1,10.0.0.2", []string{"udp"}, "", func(e endpoint) bool { return len(e.sources) == 2 && e.block == nil }},
	{"udp://[ff3e::1]:5000?block=2001:db8::1", []string{"udp"}, "", func(e endpoint) bool { return len(e.block) == 1 }},
	{"udp://@:1?sources=10.0.0.1", []string{"udp"}, "multicast group", nil},
	{"udp://239.1.2.3:1?sources=nope", []string{"udp"}, "sources", nil},
	{"udp://239.1.2.3:1?sources=::1", []string{"udp"}, "family", nil},
	{"udp://239.1.2.3:1?sources=10.0.0.1&block=10.0.0.2", []string{"udp"}, "give one", nil},
}

func TestParseURL(t *testing.T) {
	for _, tc := range urlCases {
		e, err := parseURL(tc.url, tc.schemes...)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q", tc.url, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.url, err)
		case !tc.check(e):
			t.Errorf("%s: parsed %+v", tc.url, e)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, tc := range urlCases {
		f.Add(tc.url)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := parseURL(raw, "udp", "rtp")
		if err != nil {
			return
		}
		if e.port < 1 || e.port > 65535 || e.pktSize%188 != 0 || e.readBuffer < 0 || e.ttl < -1 || e.ttl > 255 {
			t.Fatalf("%q parsed to %+v", raw, e)
		}
	})
}

// TestUnusedOptions: options a side does not read are listed for its log.
func TestUnusedOptions(t *testing.T) {
	e, err := parseURL("udp://239.1.2.3:1?reuse=1&overrun_nonfatal=1&pkt_size=1316&buffer_size=65536&localport=5", "udp")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.unused("pkt_size", "ttl"), ","); got != "buffer_size,localport,overrun_nonfatal,reuse" {
		t.Errorf("unused = %s", got)
	}
	if err := CheckURL("rtp://h:1?pkt_size=1000"); err == nil || !strings.Contains(err.Error(), "pkt_size") {
		t.Errorf("CheckURL: %v, want a pkt_size error", err)
	}
}

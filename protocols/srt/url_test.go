package srt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

var urlCases = []struct {
	raw  string
	want Endpoint
	ok   bool
}{
	{"srt://example.com:9000", Endpoint{Addr: "example.com:9000"}, true},
	{"srt://127.0.0.1:9000?streamid=publisher/studio/cam1&latency=500&passphrase=0123456789&pbkeylen=32&maxbw=1000000",
		Endpoint{Addr: "127.0.0.1:9000", Options: Options{StreamID: "publisher/studio/cam1", Latency: 500 * time.Millisecond,
			Passphrase: "0123456789", PBKeyLen: 32, MaxBW: 1000000}}, true},
	{"srt://:9000?mode=listener&latency=200", Endpoint{Addr: ":9000", Listen: true, Options: Options{Latency: 200 * time.Millisecond}}, true},
	{"srt://0.0.0.0:0?mode=server", Endpoint{Addr: "0.0.0.0:0", Listen: true}, true},
	{"SRT://[::1]:9000?mode=caller&rcvlatency=120&peeridletimeo=3000&conntimeo=1000",
		Endpoint{Addr: "[::1]:9000", Options: Options{Latency: 120 * time.Millisecond, PeerIdleTimeout: 3 * time.Second,
			ConnectTimeout: time.Second}}, true},
	{"srt://h:1?streamid=%23%21%3A%3Ar%3Dcam1%2Cm%3Dpublish&rcvbuf=1000000", Endpoint{Addr: "h:1", Options: Options{StreamID: "#!::r=cam1,m=publish", RecvBuffer: 1000000}}, true},
	{"srt://h:1?sndbuf=2000000&timeout=4000&connect_timeout=900&kmrefreshrate=100000&kmpreannounce=1000&transtype=live&payloadsize=1316&pkt_size=1316",
		Endpoint{Addr: "h:1", Options: Options{SendBuffer: 2000000, PeerIdleTimeout: 4 * time.Second, ConnectTimeout: 900 * time.Millisecond,
			KMRefreshRate: 100000, KMPreAnnounce: 1000}}, true},
	{"srt://h:1?transtype=file", Endpoint{}, false},
	{"srt://h:1?payloadsize=1456", Endpoint{}, false},
	{"srt://h:1?kmrefreshrate=1000&kmpreannounce=900", Endpoint{}, false}, // pre-announce over half the period
	{"srt://h:1?timeout=5000000", Endpoint{}, false},                      // ffmpeg's microseconds
	{"srt://h:1?rcvbuf=" + strconv.Itoa(1<<30), Endpoint{}, false},        // over the link's cap
	{"srt://h:1?latncy=200", Endpoint{}, false},                           // a typo is refused, not ignored
	{"srt://h:1?enforced_encryption=0&lossmaxttl=5", Endpoint{}, false},   // options sluice would ignore
	{"srt://h:1?maxbw=-1", Endpoint{Addr: "h:1", Options: Options{MaxBW: -1}}, true},
	{"srt://h:1?latency=200000", Endpoint{}, false}, // ffmpeg's microseconds
	{"srt://h:1?latency=abc", Endpoint{}, false},
	{"srt://h:1?latency=-5", Endpoint{}, false},
	{"srt://h:1?passphrase=short", Endpoint{}, false},
	{"srt://h:1?passphrase=" + strings.Repeat("p", 80), Endpoint{}, false},
	{"srt://h:1?pbkeylen=20", Endpoint{}, false},
	{"srt://h:1?maxbw=-2", Endpoint{}, false},
	{"srt://h:1?mode=rendezvous", Endpoint{Addr: "h:1", Rendezvous: true, Local: ":1"}, true},
	{"srt://10.0.0.2:9000?mode=rendezvous&localport=9100&localip=10.0.0.1&passphrase=0123456789",
		Endpoint{Addr: "10.0.0.2:9000", Rendezvous: true, Local: "10.0.0.1:9100", Options: Options{Passphrase: "0123456789"}}, true},
	{"srt://[::1]:9000?mode=rendezvous&port=9100&adapter=::1", Endpoint{Addr: "[::1]:9000", Rendezvous: true, Local: "[::1]:9100"}, true},
	{"srt://:9000?mode=rendezvous", Endpoint{}, false},                   // the peer's host is needed
	{"srt://h:1?mode=rendezvous&localport=0", Endpoint{}, false},         // a port to bind
	{"srt://h:1?mode=rendezvous&localport=70000", Endpoint{}, false},     //
	{"srt://h:1?mode=rendezvous&localip=example.com", Endpoint{}, false}, // an address, not a name
	{"srt://h:1?localport=9100", Endpoint{}, false},                      // rendezvous only
	{"srt://:9000?mode=listener&adapter=127.0.0.1", Endpoint{}, false},   // rendezvous only
	{"srt://:9000", Endpoint{}, false},
	{"srt://h:0", Endpoint{}, false},
	{"srt://h:70000", Endpoint{}, false},
	{"srt://h", Endpoint{}, false},
	{"udp://h:1", Endpoint{}, false},
	{"srt://h:1?a=%zz", Endpoint{}, false},
	{"::::", Endpoint{}, false},
	{"srt://h:1?streamid=" + strings.Repeat("s", 513), Endpoint{}, false},
}

func TestParseURL(t *testing.T) {
	for _, c := range urlCases {
		got, err := ParseURL(c.raw)
		call := fmt.Sprintf("ParseURL(%q)", c.raw)
		if checkParsed(t, call, got, c.want, err, c.ok, ErrInvalidURL) && strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: error shows the passphrase", call)
		}
	}
}

// TestParseURLNamesUnknownKeys: every unknown key is named in the error, and the known ones are
// listed, so the operator sees what to fix.
func TestParseURLNamesUnknownKeys(t *testing.T) {
	_, err := ParseURL("srt://h:1?latency=200&latncy=300&fec=on&streamid=x")
	if err == nil {
		t.Fatal("unknown keys accepted")
	}
	for _, want := range []string{"latncy", "fec", "known: streamid"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestParseListenURL(t *testing.T) {
	ep, err := ParseListenURL("srt://:9000?latency=300&passphrase=0123456789")
	want := Endpoint{Addr: ":9000", Listen: true, Options: Options{Latency: 300 * time.Millisecond, Passphrase: "0123456789"}}
	if err != nil || ep != want {
		t.Fatalf("ParseListenURL = %+v, %v; want %+v", ep, err, want)
	}
	if _, err := ParseListenURL("srt://:9000?mode=caller"); !errors.Is(err, ErrInvalidURL) {
		t.Fatalf("mode=caller: %v", err)
	}
}

func TestShown(t *testing.T) {
	got := shown("srt://h:1?passphrase=secret-secret&latency=100")
	if strings.Contains(got, "secret") || !strings.Contains(got, "latency=100") {
		t.Fatalf("shown = %q", got)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, c := range urlCases {
		f.Add(c.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if ep, err := ParseListenURL(raw); err == nil && !ep.Listen {
			t.Fatal("ParseListenURL made a caller")
		}
		ep, err := ParseURL(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("error %v does not wrap ErrInvalidURL", err)
			}
			return
		}
		if err := ep.Validate(); err != nil {
			t.Fatalf("parsed options do not validate: %v", err)
		}
		if _, err := ep.config(); err != nil {
			t.Fatalf("parsed options make no link config: %v", err)
		}
	})
}

// TestRendezvousConnectTimeout: a rendezvous waits for its peer ten times a caller's default,
// as libsrt does, unless the URL sets conntimeo.
func TestRendezvousConnectTimeout(t *testing.T) {
	for raw, want := range map[string]time.Duration{
		"srt://h:1?mode=rendezvous":                DefaultRendezvousTimeout,
		"srt://h:1?mode=rendezvous&conntimeo=1500": 1500 * time.Millisecond,
		"srt://h:1":                DefaultConnectTimeout,
		"srt://h:1?conntimeo=1500": 1500 * time.Millisecond,
	} {
		tg, err := newTarget("pull", raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		conf, err := tg.config()
		if err != nil || conf.ConnectTimeout != want || conf.Log == nil {
			t.Errorf("%s: connect timeout %v, log %v, %v; want %v", raw, conf.ConnectTimeout, conf.Log, err, want)
		}
	}
}

// TestParseURLAsPasted: addresses as operators paste them from OBS and ffmpeg. A stream id's
// "#" is part of the query there, not a fragment that drops it and every option after it; a
// key given twice, or two names of one setting, with different values are refused rather than
// one of them silently winning.
func TestParseURLAsPasted(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want Endpoint
		ok   bool
	}{
		{"srt://h:1?streamid=#!::r=cam1,m=publish", Endpoint{Addr: "h:1", Options: Options{StreamID: "#!::r=cam1,m=publish"}}, true},
		{"srt://h:1?streamid=#!::r=cam1,m=publish&latency=300&passphrase=0123456789",
			Endpoint{Addr: "h:1", Options: Options{StreamID: "#!::r=cam1,m=publish", Latency: 300 * time.Millisecond, Passphrase: "0123456789"}}, true},
		{"srt://h:1?latency=300&streamid=#!::u=ann,r=live/cam#2,m=publish",
			Endpoint{Addr: "h:1", Options: Options{StreamID: "#!::u=ann,r=live/cam#2,m=publish", Latency: 300 * time.Millisecond}}, true},
		{"srt://h:1?latency=300&latency=300", Endpoint{Addr: "h:1", Options: Options{Latency: 300 * time.Millisecond}}, true},
		{"srt://h:1?latency=100&latency=900", Endpoint{}, false},
		{"srt://h:1?latency=200&rcvlatency=900", Endpoint{}, false},
		{"srt://h:1?streamid=a&srt_streamid=b", Endpoint{}, false},
		{"srt://h:1#frag", Endpoint{}, false}, // a "#" before any query: not an SRT option
		{"srt://h:1?streamid=%zz", Endpoint{}, false},
	} {
		got, err := ParseURL(c.raw)
		checkParsed(t, fmt.Sprintf("ParseURL(%q)", c.raw), got, c.want, err, c.ok, ErrInvalidURL)
	}
}

// TestParseURLRepeatNamed: the refusal of a repeated key names it, and never shows a value.
func TestParseURLRepeatNamed(t *testing.T) {
	for raw, want := range map[string]string{
		"srt://h:1?latency=100&latency=900":                       "latency given twice",
		"srt://h:1?rcvlatency=100&latency=900":                    "latency and rcvlatency",
		"srt://h:1?passphrase=0123456789&passphrase=9876543210xx": "passphrase given twice",
	} {
		_, err := ParseURL(raw)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: error %v, want one naming %q without the passphrase", raw, err, want)
		}
	}
	if got := shown("srt://h:1?streamid=#!::r=cam1&passphrase=0123456789"); !strings.Contains(got, "cam1") || strings.Contains(got, "0123456789") {
		t.Errorf("shown = %q, want the stream id and no passphrase", got)
	}
}

// TestParseURLLiveDefaults: libsrt's live-mode switches that sluice always has on, as
// srt-live-transmit addresses often spell them out, pass when on and are refused when off.
func TestParseURLLiveDefaults(t *testing.T) {
	if _, err := ParseURL("srt://h:1?tlpktdrop=1&nakreport=true&tsbpdmode=yes&messageapi=on&enforced_encryption=1"); err != nil {
		t.Errorf("switches on: %v", err)
	}
	for _, raw := range []string{"srt://h:1?tlpktdrop=0", "srt://h:1?nakreport=false", "srt://h:1?tsbpdmode=off", "srt://h:1?enforced_encryption=no"} {
		if _, err := ParseURL(raw); !errors.Is(err, ErrInvalidURL) || !strings.Contains(err.Error(), "always") {
			t.Errorf("%s: %v, want a refusal saying sluice always has it on", raw, err)
		}
	}
}

package rtmp

import (
	"errors"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		url, key string
		want     target
		err      bool
	}{
		{url: "rtmp://example.com/live/cam1", want: target{Addr: "example.com:1935", App: "live", Name: "cam1", TCURL: "rtmp://example.com/live"}},
		{url: "rtmp://10.0.0.1:1936/app/inst/stream?token=x", want: target{Addr: "10.0.0.1:1936", App: "app", Name: "inst/stream?token=x", TCURL: "rtmp://10.0.0.1:1936/app"}},
		{url: "rtmp://a.example/live2/", key: "secret", want: target{Addr: "a.example:1935", App: "live2", Name: "secret", TCURL: "rtmp://a.example/live2"}},
		{url: "rtmp://[::1]:1937/live", key: "k", want: target{Addr: "[::1]:1937", App: "live", Name: "k", TCURL: "rtmp://[::1]:1937/live"}},
		{url: "rtmp://example.com/live", err: true},
		{url: "rtmps://example.com/live/k", want: target{Addr: "example.com:443", App: "live", Name: "k", TCURL: "rtmps://example.com/live", TLS: true}},
		{url: "rtmps://a.example:8443/app?tok=1", key: "k", want: target{Addr: "a.example:8443", App: "app?tok=1", Name: "k", TCURL: "rtmps://a.example:8443/app?tok=1", TLS: true}},
		{url: "rtmpt://example.com/live/k", err: true},
		{url: "http://example.com/live/k", err: true},
		{url: "rtmp:///live/k", err: true},
	} {
		got, err := parseTarget(tc.url, tc.key)
		if tc.err {
			if !errors.Is(err, ErrUnsupportedURL) {
				t.Errorf("%s: err %v, want ErrUnsupportedURL", tc.url, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: got %+v, %v; want %+v", tc.url, tc.key, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ url, key, want string }{
		{"rtmp://u:p@host/live/k?token=secret", "", "rtmp://host/live/REDACTED?token=REDACTED"},
		{"rtmp://u:p@host/live?token=secret", "k", "rtmp://host/live?token=REDACTED"},
		{"rtmp://host/app/inst/k", "", "rtmp://host/app/REDACTED"},
	} {
		if got := shown(tc.url, tc.key); got != tc.want {
			t.Errorf("shown(%q, %q) = %q, want %q", tc.url, tc.key, got, tc.want)
		}
	}
}

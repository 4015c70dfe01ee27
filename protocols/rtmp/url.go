package rtmp

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// defaultPort is RTMP's TCP port; defaultTLSPort RTMPS's, as ffmpeg and OBS take it.
const (
	defaultPort    = "1935"
	defaultTLSPort = "443"
)

// target is where a client connects: the TCP address, the application, the stream name
// (with its query, which some servers read), the tcUrl sent in connect, and whether the
// connection is TLS (rtmps://).
type target struct {
	Addr  string
	App   string
	Name  string
	TCURL string
	TLS   bool
}

// parseTarget reads rtmp://host[:port]/app/name or rtmps://... With key set, the whole path
// of the URL is the application and key is the name (an output's URL and stream key).
func parseTarget(raw, key string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("rtmp url: %w", err)
	}
	if u.Scheme != "rtmp" && u.Scheme != "rtmps" {
		return target{}, fmt.Errorf("rtmp url %q: scheme %q (rtmp:// or rtmps:// only): %w", redact(raw), u.Scheme, ErrUnsupportedURL)
	}
	if u.Hostname() == "" {
		return target{}, fmt.Errorf("rtmp url %q: no host: %w", redact(raw), ErrUnsupportedURL)
	}
	t := target{TLS: u.Scheme == "rtmps"}
	port := u.Port()
	switch {
	case port != "":
	case t.TLS:
		port = defaultTLSPort
	default:
		port = defaultPort
	}
	t.Addr = net.JoinHostPort(u.Hostname(), port)
	path := strings.Trim(u.Path, "/")
	if key != "" {
		t.App, t.Name = path, key
		if u.RawQuery != "" {
			t.App += "?" + u.RawQuery
		}
	} else {
		app, name, _ := strings.Cut(path, "/")
		t.App, t.Name = app, name
		if u.RawQuery != "" {
			t.Name += "?" + u.RawQuery
		}
	}
	if t.App == "" || t.Name == "" {
		return target{}, fmt.Errorf("rtmp url %q: want rtmp://host[:port]/app/key: %w", redact(raw), ErrUnsupportedURL)
	}
	t.TCURL = u.Scheme + "://" + u.Host + "/" + t.App
	return t, nil
}

// redact hides the query and credentials of a URL for messages: stream keys and tokens live
// there.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable url>"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	return u.String()
}

package rtmp

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// defaultPort is RTMP's TCP port.
const defaultPort = "1935"

// target is where a client connects: the TCP address, the application, the stream name
// (with its query, which some servers read) and the tcUrl sent in connect.
type target struct {
	Addr  string
	App   string
	Name  string
	TCURL string
}

// parseTarget reads rtmp://host[:port]/app/name. With key set, the whole path of the URL is
// the application and key is the name (an output's URL and stream key).
func parseTarget(raw, key string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("rtmp url: %w", err)
	}
	if u.Scheme != "rtmp" {
		return target{}, fmt.Errorf("rtmp url %q: scheme %q (rtmp:// only): %w", redact(raw), u.Scheme, ErrUnsupportedURL)
	}
	if u.Hostname() == "" {
		return target{}, fmt.Errorf("rtmp url %q: no host: %w", redact(raw), ErrUnsupportedURL)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	t := target{Addr: net.JoinHostPort(u.Hostname(), port)}
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
	t.TCURL = "rtmp://" + u.Host + "/" + t.App
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

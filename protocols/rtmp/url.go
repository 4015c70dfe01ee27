package rtmp

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/sluicemedia/sluice/internal/redact"
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
		return target{}, fmt.Errorf("rtmp url: %w", hideSecrets(err, raw, key))
	}
	if u.Scheme != "rtmp" && u.Scheme != "rtmps" {
		return target{}, fmt.Errorf("rtmp url %q: scheme %q (rtmp:// or rtmps:// only): %w", shown(raw, key), u.Scheme, ErrUnsupportedURL)
	}
	if u.Hostname() == "" {
		return target{}, fmt.Errorf("rtmp url %q: no host: %w", shown(raw, key), ErrUnsupportedURL)
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
		return target{}, fmt.Errorf("rtmp url %q: want rtmp://host[:port]/app/key: %w", shown(raw, key), ErrUnsupportedURL)
	}
	t.TCURL = u.Scheme + "://" + u.Host + "/" + t.App
	return t, nil
}

// redactOpts are how an RTMP address is shown (see redact.URL): as before the user
// information goes whole, and the stream key too when it is in the URL's path (key empty).
func redactOpts(key string) []redact.Option {
	if key != "" {
		return []redact.Option{redact.NoUser}
	}
	return []redact.Option{redact.NoUser, redact.StreamKey}
}

// shown is the address raw as logs and errors show it, key being PushOptions.Key.
func shown(raw, key string) string { return redact.URL(raw, redactOpts(key)...) }

// hideSecrets takes the secrets of raw, and key with its query, out of err's text: a
// server's refusal may quote the stream name it was sent.
func hideSecrets(err error, raw, key string) error {
	err = redact.Error(err, raw, redactOpts(key)...)
	if key != "" {
		name, query, _ := strings.Cut(key, "?")
		err = redact.Error(redact.Hide(err, key, name), "?"+query)
	}
	return err
}

package rtsp

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
)

// transportOption is the query option that chooses the RTP transport of a pulled stream, as
// ffmpeg names it: tcp or udp. It is removed before the URL is dialled.
const transportOption = "rtsp_transport"

// CheckURL checks an rtsp:// or rtsps:// address as Pull and Push read it, so that a bad
// rtsp_transport is refused when the record is created.
func CheckURL(raw string) error {
	_, _, err := parseURL(raw)
	return err
}

// parseURL parses an rtsp:// or rtsps:// URL, user:password@ included, and takes out the
// rtsp_transport option: nil means automatic (UDP, then TCP when UDP gets nothing).
func parseURL(raw string) (*base.URL, *gortsplib.Transport, error) {
	u, err := base.ParseURL(raw)
	if err != nil {
		return nil, nil, err
	}
	if u.Host == "" {
		return nil, nil, fmt.Errorf("no host")
	}
	var transport *gortsplib.Transport
	var kept []string
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if key, err := url.QueryUnescape(k); err != nil || key != transportOption {
			kept = append(kept, kv)
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", transportOption, err)
		}
		var t gortsplib.Transport
		switch strings.ToLower(val) {
		case "tcp":
			t = gortsplib.TransportTCP
		case "udp":
			t = gortsplib.TransportUDP
		case "", "auto":
			transport = nil
			continue
		default:
			return nil, nil, fmt.Errorf("%s=%q: want tcp, udp or auto", transportOption, val)
		}
		transport = &t
	}
	u.RawQuery = strings.Join(kept, "&")
	u.ForceQuery = false
	return u, transport, nil
}

package api

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/storage"
)

// vodModule serves /api/vod: VoD/OTT players (spec 4.1).
func vodModule() *module {
	m := newModule(runsProcess, "vod", "player", validatePlayer, playerSchema())
	m.decorate = readHook{add: decoratePlayer, keys: []string{"hls_url", "dash_url"}}
	return m
}

// decoratePlayer adds hls_url and dash_url, absolute URLs on the player's vod_port (https
// when the server serves TLS).
func decoratePlayer(s *server, r *http.Request, rec storage.Record, doc map[string]any) error {
	p := rec.(*storage.Player)
	scheme := "http://"
	if s.cfg.HTTPS {
		scheme = "https://"
	}
	base := scheme + net.JoinHostPort(s.publicHost(r), strconv.Itoa(p.VodPort)) + "/hls/" + p.ID + "/" + p.ID + "/index"
	doc["hls_url"] = base + ".m3u8"
	doc["dash_url"] = base + ".mpd"
	return nil
}

// publicHost is the host of playlist URLs: Config.PublicHost (a host or a URL), else the
// request's host, without a port.
func (s *server) publicHost(r *http.Request) string {
	h := s.cfg.PublicHost
	if strings.Contains(h, "://") {
		if u, err := url.Parse(h); err == nil {
			h = u.Host
		}
	}
	if h == "" {
		h = r.Host
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		h = "localhost"
	}
	return h
}

func playerSchema() map[string]any {
	return jsObject([]string{"vod_name", "input", "vod_port", "initial_live_manifest_size", "live_sync_duration_count",
		"hls_fragment_size", "hls_fragment_length", "dash_fragment_size", "dash_fragment_length"},
		map[string]any{
			"vod_name":                   jsString(1, 128),
			"input":                      jsRef("Input"),
			"vod_port":                   jsInt(1, 65535),
			"initial_live_manifest_size": jsInt(1, 100),
			"live_sync_duration_count":   jsInt(1, 100),
			"hls_fragment_size":          jsNumber(0.5, 60),
			"hls_fragment_length":        jsNumber(1, 86400),
			"dash_fragment_size":         jsNumber(0.5, 60),
			"dash_fragment_length":       jsNumber(1, 86400),
			"transcoding":                jsRef("Transcoding"),
			"active":                     jsBool(true),
			"low_latency":                jsBool(false),
			"part_duration_ms":           withDefault(jsInt(100, 1000), storage.DefaultPartDurationMS),
		})
}

package api

import (
	"net/http"

	"github.com/sluicemedia/sluice/storage"
)

// srtServersModule serves /api/srt-servers: the service's SRT server modules (API.md).
func srtServersModule() *module {
	m := newModule(runsServer, "srt-servers", "SRT server", validateSRTServer, srtServerSchema())
	m.decorate = readHook{add: decorateSRTServer, keys: []string{"server_passphrase", "server_passphrase_set"}}
	return m
}

// decorateSRTServer never returns the passphrase, only whether one is set.
func decorateSRTServer(_ *server, _ *http.Request, rec storage.Record, doc map[string]any) error {
	delete(doc, "server_passphrase")
	doc["server_passphrase_set"] = rec.(*storage.SRTServer).ServerPassphrase != ""
	return nil
}

func srtServerSchema() map[string]any {
	return jsObject([]string{"server_name", "server_port"}, map[string]any{
		"server_name":       jsString(1, 128),
		"server_port":       jsInt(1, 65535),
		"server_latency":    jsInt(20, 10000),
		"server_passphrase": jsString(10, 79),
		"server_pbkeylen":   jsIntEnum(16, 24, 32),
		"server_maxbw":      jsInt(-1, 1<<53),
		"server_timeout":    jsInt(1, 3600),
		"publisher_prefix":  jsPattern(prefixPattern.String()),
		"receiver_prefix":   jsPattern(prefixPattern.String()),
		"active":            jsBool(true),
	})
}

package api

import (
	"net/http"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// rtmpServersModule serves /api/rtmp-servers: the service's RTMP server modules (API.md).
func rtmpServersModule() *module {
	m := newModule(runsServer, "rtmp-servers", "RTMP server", validateRTMPServer, rtmpServerSchema())
	m.decorate = readHook{add: decorateRTMPServer, keys: rtmpPasswordKeys}
	return m
}

// decorateRTMPServer never returns the passwords, only whether each is set.
func decorateRTMPServer(_ *server, _ *http.Request, rec storage.Record, doc map[string]any) error {
	r := rec.(*storage.RTMPServer)
	delete(doc, "server_publish_password")
	delete(doc, "server_play_password")
	doc["server_publish_password_set"] = r.ServerPublishPassword != ""
	doc["server_play_password_set"] = r.ServerPlayPassword != ""
	return nil
}

func rtmpServerSchema() map[string]any {
	// Empty clears a password.
	password := func(key, who string) map[string]any {
		s := jsPattern("^$|" + kinds.RTMPPasswordPattern)
		s["description"] = "beyond the spec: the password " + who + " give as ?password= after the stream key " +
			"(or after the app); empty or absent: none; write-only (reads show " + key + "_set)"
		return s
	}
	return jsObject([]string{"server_name", "server_port"}, map[string]any{
		"server_name":             jsString(1, 128),
		"server_port":             jsInt(1, 65535),
		"server_publish_password": password("server_publish_password", "encoders"),
		"server_play_password":    password("server_play_password", "RTMP players"),
		"active":                  jsBool(true),
	})
}

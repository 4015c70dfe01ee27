package api

import "github.com/sluicemedia/sluice/storage"

// rtmpServersModule serves /api/rtmp-servers: the service's RTMP server modules (API.md).
func rtmpServersModule() *module {
	return &module{
		kind:      storage.ModuleRTMPServers,
		path:      "rtmp-servers",
		noun:      "RTMP server",
		newRecord: func() storage.Record { return &storage.RTMPServer{} },
		validate:  func(f *fields) storage.Record { return validateRTMPServer(f) },
		schema: jsObject([]string{"server_name", "server_port"}, map[string]any{
			"server_name": jsString(1, 128),
			"server_port": jsInt(1, 65535),
			"active":      jsBool(true),
		}),
	}
}

package api

// rtmpServersModule serves /api/rtmp-servers: the service's RTMP server modules (API.md).
func rtmpServersModule() *module {
	return newModule(runsServer, "rtmp-servers", "RTMP server", validateRTMPServer, jsObject([]string{"server_name", "server_port"}, map[string]any{
		"server_name": jsString(1, 128),
		"server_port": jsInt(1, 65535),
		"active":      jsBool(true),
	}))
}

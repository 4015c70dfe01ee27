package api

import (
	"net/http"
)

// authMode says how a route authenticates.
type authMode int

const (
	authNone         authMode = iota // public
	authToken                        // x-access-token or Authorization: Bearer
	authTokenOrQuery                 // also ?token= (download links)
)

// route is one entry of the table that drives both the router and the OpenAPI document.
type route struct {
	method  string
	pattern string
	tag     string
	summary string
	auth    authMode
	body    map[string]any // JSON schema of the request body; nil when it takes none
	// query are the route's query parameters (OpenAPI parameter objects).
	query  []any
	status int            // success status; 0 means 200
	resp   map[string]any // JSON schema of the success body; nil for a non-JSON body
	// errs are the error statuses the OpenAPI document names for this route besides "default".
	errs    []int
	handler http.HandlerFunc
}

// readSchema is a record as getById and getAll return it; the stored fields are the module's
// schema, and a cluster adds node.
func readSchema() map[string]any {
	return jsObject(nil, map[string]any{clusterKey: map[string]any{"type": "string",
		"description": "with a PostgreSQL store (a cluster): the id of the node running the record, empty when none does; absent on a single node"}})
}

// writeErrs are the errors of a route that writes to the store.
var writeErrs = []int{http.StatusInsufficientStorage}

// routeTable lists every route the API serves.
func (s *server) routeTable() []route {
	var rs []route
	add := func(rt route) { rs = append(rs, rt) }
	for _, m := range modules() {
		rs = append(rs, s.moduleRoutes(m)...)
	}
	hooks := webhooksModule()
	add(route{method: http.MethodPost, pattern: "/api/webhooks/test", tag: "webhooks", auth: authToken,
		summary: "Queue a ping event for a webhook (delivered like any event, signed, retried)",
		body:    jsRef("IdBody"), resp: jsObject([]string{"success", "delivery_id"}, map[string]any{"success": jsBool(true), "delivery_id": jsID()}),
		errs: writeErrs, handler: s.testWebhook(hooks)})
	add(route{method: http.MethodGet, pattern: "/api/events", tag: "events", auth: authTokenOrQuery,
		summary: "Server-Sent Events: state changes, inputs, publishers, recorded files, player readiness, server statistics (README \"Events and webhooks\")",
		query:   eventsQuery(), errs: []int{http.StatusServiceUnavailable}, handler: s.events})
	add(route{method: http.MethodGet, pattern: "/api/nodes/getAll", tag: "nodes", auth: authToken,
		summary: "List the cluster's nodes: URLs, start, last heartbeat, records owned, capacity (503 on a single node)",
		resp:    jsArray(nodeSchema()), errs: []int{http.StatusServiceUnavailable}, handler: s.nodesGetAll})
	add(route{method: http.MethodPost, pattern: "/api/nodes/drain", tag: "nodes", auth: authToken,
		summary: "Drain a node: it hands its records to the others and takes no new ones until it restarts (503 on a single node)",
		body:    jsObject([]string{"id"}, map[string]any{"id": jsString(1, maxNodeID)}),
		resp:    jsRef("Success"), errs: []int{http.StatusNotFound, http.StatusServiceUnavailable}, handler: s.nodesAct(Cluster.Drain)})
	add(route{method: http.MethodPost, pattern: "/api/nodes/resume", tag: "nodes", auth: authToken,
		summary: "End a node's draining: it takes new records again (503 on a single node)",
		body:    jsObject([]string{"id"}, map[string]any{"id": jsString(1, maxNodeID)}),
		resp:    jsRef("Success"), errs: []int{http.StatusNotFound, http.StatusServiceUnavailable}, handler: s.nodesAct(Cluster.Resume)})
	add(route{method: http.MethodDelete, pattern: "/api/nodes/remove", tag: "nodes", auth: authToken,
		summary: "Remove a node down for good: its row, the entries of the files on its disk and the removals queued for it (409 NODE_RUNNING while it heartbeats, 503 on a single node)",
		body:    jsObject([]string{"id"}, map[string]any{"id": jsString(1, maxNodeID)}),
		resp: jsObject([]string{"success", "files", "queued_removals"}, map[string]any{"success": jsBool(true),
			"files":           map[string]any{"type": "integer", "description": "entries of recorded files on its disk, removed (each reported as file_removed)"},
			"queued_removals": map[string]any{"type": "integer", "description": "removals queued for it, dropped"}}),
		errs: []int{http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable}, handler: s.nodesRemove})
	rec := recordingModule()
	add(route{method: http.MethodPost, pattern: "/api/recording/removeFile", tag: "recording", auth: authToken,
		summary: "Delete a recorded file from disk and from its recording's list",
		body:    jsObject([]string{"record_id", "file_id"}, map[string]any{"record_id": jsID(), "file_id": jsID()}),
		resp:    jsRef("Success"), errs: writeErrs, handler: s.removeFile(rec)})
	add(route{method: http.MethodGet, pattern: "/api/recording/download/{file_id}", tag: "recording", auth: authTokenOrQuery,
		summary: "Download a recorded file (Range requests supported); in a cluster, a file on another node's disk answers 307 to that node, or is proxied from it (--cluster-playback)", handler: s.download})
	add(route{method: http.MethodGet, pattern: "/api/recording/download-memory/{record_id}", tag: "recording", auth: authTokenOrQuery,
		summary: "Download what a memory recording holds, as one MP4 (up to 8 downloads of a recording at once: 503 with Retry-After past that); in a cluster, forwarded to the node that runs it like download",
		errs:    []int{http.StatusServiceUnavailable}, handler: s.downloadMemory(rec)})

	empty := jsObject(nil, map[string]any{})
	add(route{method: http.MethodPost, pattern: "/api/utils/getStat", tag: "utils", auth: authToken, body: empty,
		summary: "Server resource statistics", resp: jsRef("ServerStat"), handler: s.utilStat})
	add(route{method: http.MethodPost, pattern: "/api/utils/speedtest", tag: "utils", auth: authToken, body: empty,
		summary: "Network speed test against the configured target", resp: jsRef("SpeedTest"), handler: s.speedTest})
	add(route{method: http.MethodGet, pattern: "/api/utils/speedtest/ping", tag: "utils", auth: authNone,
		summary: "Speed-test peer: answers at once (latency probe)",
		resp:    jsObject([]string{"pong"}, map[string]any{"pong": jsBool(true)}), handler: s.speedtestPing})
	add(route{method: http.MethodGet, pattern: "/api/utils/speedtest/download", tag: "utils", auth: authNone,
		summary: "Speed-test peer: streams ?bytes= bytes (default 10 MiB, at most 64 MiB); 503 with Retry-After while 4 transfers run",
		errs:    []int{http.StatusServiceUnavailable}, handler: s.speedtestDownload})
	add(route{method: http.MethodPost, pattern: "/api/utils/speedtest/upload", tag: "utils", auth: authNone,
		summary: "Speed-test peer: reads and discards the body (at most 256 MiB), answers its size; 503 with Retry-After while 4 transfers run",
		errs:    []int{http.StatusServiceUnavailable},
		resp:    jsObject([]string{"bytes"}, map[string]any{"bytes": jsInt(0, speedtestMaxUpload)}), handler: s.speedtestUpload})
	for _, p := range []string{"/api/utils/getListeningPorts", "/api/utils/getUsedPorts"} {
		add(route{method: http.MethodPost, pattern: p, tag: "utils", auth: authToken, body: empty,
			summary: "Ports the service has open now", resp: jsArray(jsRef("PortKey")), handler: s.listeningPorts})
	}
	add(route{method: http.MethodPost, pattern: "/api/ports/getAll", tag: "ports", auth: authToken, body: jsRef("ListQuery"),
		summary: "Ports held by entities of the service", resp: jsArray(jsRef("PortClaim")), handler: s.listHandler(s.portDocs, false)})
	add(route{method: http.MethodPost, pattern: "/api/ports/getCount", tag: "ports", auth: authToken, body: jsRef("ListQuery"),
		summary: "Count the ports held", resp: jsRef("Count"), handler: s.listHandler(s.portDocs, true)})

	add(route{method: http.MethodPost, pattern: "/api/auth/login", tag: "auth", auth: authNone,
		summary: "Log in; answers a token (failed logins are rate limited per address and per user name; 503 while every password check slot is busy)",
		errs:    []int{http.StatusTooManyRequests, http.StatusServiceUnavailable},
		body: requireOne(jsObject([]string{"password"}, map[string]any{"email": jsString(1, 256), "username": jsString(1, 256),
			"password": jsString(1, maxPassword)}), "email", "username"),
		resp:    jsObject([]string{"success", "token"}, map[string]any{"success": jsBool(true), "token": jsString(1, 4096)}),
		handler: s.login})
	add(route{method: http.MethodPost, pattern: "/api/auth/getToken", tag: "auth", auth: authToken, body: empty,
		summary: "The caller's current token", resp: jsObject([]string{"token"}, map[string]any{"token": jsString(1, 4096)}),
		handler: s.getToken})
	add(route{method: http.MethodPost, pattern: "/api/auth/logout", tag: "auth", auth: authToken, body: empty,
		summary: "Revoke the caller's token", resp: jsRef("Success"), errs: writeErrs, handler: s.logout})
	add(route{method: http.MethodPost, pattern: "/api/auth/logoutAll", tag: "auth", auth: authToken, body: empty,
		summary: "Revoke every token of the caller's user issued until now, the caller's own included",
		resp:    jsRef("Success"), errs: writeErrs, handler: s.logoutAll})
	add(route{method: http.MethodGet, pattern: "/api/openapi.json", tag: "meta", auth: authNone,
		summary: "This OpenAPI document", resp: jsObject(nil, map[string]any{}), handler: s.openAPI})
	add(route{method: http.MethodGet, pattern: "/healthz", tag: "meta", auth: authNone,
		summary: "Readiness: 200 once the server is ready, else 503",
		resp:    jsObject([]string{"status"}, map[string]any{"status": jsEnum("ok")}), handler: s.healthz})
	add(route{method: http.MethodGet, pattern: "/metrics", tag: "meta", auth: authNone,
		summary: "Prometheus metrics (text exposition); needs the --metrics-token as a bearer token or basic-auth password, answers 404 when no token is set or --metrics-addr serves them",
		errs:    []int{http.StatusUnauthorized, http.StatusNotFound}, handler: s.metrics})
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
		add(route{method: m, pattern: "/hls/*", tag: "playback", auth: authNone,
			summary: "HLS and DASH playback: /hls/<id>/<id>/index.m3u8 and index.mpd; /hls/<id>/ is the player's watch page (?format=dash for dash.js)",
			handler: s.playback})
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		add(route{method: m, pattern: "/", tag: "console", auth: authNone,
			summary: "The web console (HTML; 503 when its assets were not built with make console)", handler: s.console})
		add(route{method: m, pattern: "/assets/*", tag: "console", auth: authNone,
			summary: "The console's and watch pages' scripts, styles and players, under /assets/<version>/ (immutable)", handler: s.console})
	}
	return rs
}

// modules are the managed modules, in the order of the route table.
func modules() []*module {
	return []*module{vodModule(), restreamModule(), recordingModule(), srtServersModule(), rtmpServersModule(), webhooksModule()}
}

// events serves the event stream (Config.Events); without one the route answers 404.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Events == nil {
		s.fail(w, r, errNotFound("the event stream is off on this server"))
		return
	}
	s.cfg.Events.ServeHTTP(w, r)
}

func eventsQuery() []any {
	p := func(name, desc string) any {
		return map[string]any{"name": name, "in": "query", "required": false, "description": desc, "schema": map[string]any{"type": "string"}}
	}
	return []any{
		p("module", "only events of this module (MODULE_VOD or vod, restream, recording, srt-servers, rtmp-servers, webhooks; MODULE_API for server_stats)"),
		p("id", "only events of this record id"),
		p("type", "only these event types, comma-separated"),
		p("last_event_id", "replay the stored events after this id first (as the Last-Event-ID header)"),
		p("token", "the API token, for clients that cannot send headers (EventSource)"),
	}
}

// moduleRoutes are the routes every managed module has.
func (s *server) moduleRoutes(m *module) []route {
	base := "/api/" + m.path
	rec := jsRef(componentName(m))
	idBody := jsRef("IdBody")
	post := func(verb, summary string, body, resp map[string]any, h http.HandlerFunc) route {
		return route{method: http.MethodPost, pattern: base + "/" + verb, tag: m.path, auth: authToken,
			summary: summary, body: body, resp: resp, handler: h}
	}
	if m.runs == runsNothing {
		rs := []route{
			post("create", "Create a "+m.noun, rec, jsRef("Created"), s.create(m)),
			post("update", "Update a "+m.noun+"; omitted fields keep their values", updateSchema(m.schema), jsRef("Updated"), s.update(m)),
			post("getAll", "List "+m.noun+"s", jsRef("ListQuery"), jsArray(readSchema()), s.getAll(m)),
			post("getById", "Read one "+m.noun, idBody, readSchema(), s.getByID(m)),
			post("getCount", "Count "+m.noun+"s", jsRef("ListQuery"), jsRef("Count"), s.getCount(m)),
		}
		rs[0].status = http.StatusCreated
		rs[0].errs, rs[1].errs = writeErrs, writeErrs
		return append(rs, route{method: http.MethodDelete, pattern: base + "/remove", tag: m.path, auth: authToken,
			summary: "Delete a " + m.noun + " and its pending deliveries", body: idBody, resp: jsRef("Success"), errs: writeErrs, handler: s.remove(m)})
	}
	rs := []route{
		post("create", "Create a "+m.noun, rec, jsRef("Created"), s.create(m)),
		post("update", "Update a "+m.noun+"; omitted fields keep their values", updateSchema(m.schema), jsRef("Updated"), s.update(m)),
		post("start", "Start a "+m.noun+" (sets active=true)", idBody, jsRef("Success"), s.setActive(m, true)),
		post("stop", "Stop a "+m.noun+" (sets active=false)", idBody, jsRef("Success"), s.setActive(m, false)),
		post("getAll", "List "+m.noun+"s", jsRef("ListQuery"), jsArray(readSchema()), s.getAll(m)),
		post("getById", "Read one "+m.noun, idBody, readSchema(), s.getByID(m)),
		post("getCount", "Count "+m.noun+"s", jsRef("ListQuery"), jsRef("Count"), s.getCount(m)),
	}
	rs[0].status = http.StatusCreated
	for i := range 4 { // create, update, start, stop
		rs[i].errs = writeErrs
	}
	if m.runs == runsProcess {
		rs = append(rs, post("getStat", "Live statistics of every "+m.noun, jsObject(nil, map[string]any{}), jsArray(jsRef("ProcessStat")), s.getStat(m)))
	} else {
		rs = append(rs, post("getActiveStreams", "Streams published to the "+m.noun+" now", idBody, jsArray(jsRef("ActiveStream")), s.activeStreams(m)))
	}
	rs = append(rs, route{method: http.MethodDelete, pattern: base + "/remove", tag: m.path, auth: authToken,
		summary: "Stop and delete a " + m.noun, body: idBody, resp: jsRef("Success"), errs: writeErrs, handler: s.remove(m)})
	return rs
}

package api

import (
	"maps"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/internal/tcvalues"
)

// JSON Schema helpers for the OpenAPI document. Numbers are also accepted as numeric strings.

func jsObject(required []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func jsString(minLen, maxLen int) map[string]any {
	return map[string]any{"type": "string", "minLength": minLen, "maxLength": maxLen}
}

func jsPattern(p string) map[string]any { return map[string]any{"type": "string", "pattern": p} }

func jsEnum(values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values}
}

func jsInt(lo, hi int64) map[string]any {
	return map[string]any{"type": []string{"integer", "string"}, "minimum": lo, "maximum": hi,
		"description": "an integer, or a string holding one"}
}

// withDefault returns schema s with a default value.
func withDefault(s map[string]any, def any) map[string]any {
	s["default"] = def
	return s
}

func jsIntEnum(values ...int) map[string]any {
	return map[string]any{"type": []string{"integer", "string"}, "enum": values}
}

func jsNumber(lo, hi float64) map[string]any {
	return map[string]any{"type": []string{"number", "string"}, "minimum": lo, "maximum": hi,
		"description": "a number, or a string holding one"}
}

// jsNumberAbove is jsNumber with an exclusive lower bound.
func jsNumberAbove(lo, hi float64) map[string]any {
	s := jsNumber(lo, hi)
	delete(s, "minimum")
	s["exclusiveMinimum"] = lo
	return s
}

// requireOne makes schema s need at least one of keys (a field and its accepted alias).
func requireOne(s map[string]any, keys ...string) map[string]any {
	alts := make([]any, len(keys))
	for i, k := range keys {
		alts[i] = map[string]any{"required": []string{k}}
	}
	s["anyOf"] = alts
	return s
}

func jsBool(def bool) map[string]any { return map[string]any{"type": "boolean", "default": def} }

func jsRef(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsArray(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

func jsID() map[string]any {
	return map[string]any{"type": "string", "pattern": "^[0-9a-fA-F]{24}$", "description": "ObjectId"}
}

func jsDate() map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "example": "2026-11-21T14:02:03.123Z"}
}

func jsOneOrArray(s map[string]any) map[string]any {
	return map[string]any{"oneOf": []any{s, map[string]any{"type": "array", "items": s, "minItems": 1, "maxItems": 1}}}
}

// updateSchema is a create schema with only id (or _id) required.
func updateSchema(create map[string]any) map[string]any {
	props := maps.Clone(create["properties"].(map[string]any))
	props["id"], props["_id"] = jsID(), jsID()
	return requireOne(jsObject(nil, props), "id", "_id")
}

// componentName names the record schema of a module.
func componentName(m *module) string {
	return map[string]string{"vod": "Player", "restream": "Restream", "recording": "Recording",
		"srt-servers": "SRTServer", "rtmp-servers": "RTMPServer", "webhooks": "Webhook"}[m.path]
}

func inputSchema() map[string]any {
	return jsObject([]string{"input_type"}, map[string]any{
		"input_type":      jsEnum(kinds.InputTypes()...),
		"input_server_id": jsID(),
		"input_module_id": jsID(),
		"input_stream_id": jsString(1, 512),
		"input_stream_listen_port": jsObject([]string{"port", "transport"}, map[string]any{
			"port": jsInt(1, 65535), "transport": map[string]any{"type": "string", "pattern": "^([Uu][Dd][Pp]|[Tt][Cc][Pp])$", "description": "UDP or TCP, in any case"}}),
		"input_stream_url":   jsString(1, maxURL),
		"module_name":        jsString(0, 256),
		"module_type":        jsString(0, 256),
		"encoding_rate":      jsInt(1, 120),
		"sound_hz":           jsInt(1, 20000),
		"resolution_width":   jsInt(16, 7680),
		"resolution_height":  jsInt(16, 4320),
		"video_duration_sec": jsInt(1, 604800),
		"test_video_bitrate": jsInt(50, 100000),
	})
}

func outputSchema() map[string]any {
	return jsObject([]string{"output_type", "output_stream_url"}, map[string]any{
		"output_type":       jsEnum(kinds.OutputTypes()...),
		"output_stream_url": jsString(1, maxURL),
		"output_stream_key": jsString(0, 1024),
	})
}

func transcodingSchema() map[string]any {
	return jsObject(nil, map[string]any{
		"video_transcoding":    jsEnum(append([]string{""}, videoCodecs...)...),
		"output_video_bitrate": jsInt(1, 200000),
		"force_key_frames": map[string]any{"oneOf": []any{jsNumberAbove(0, 60),
			map[string]any{"type": "string", "pattern": tcvalues.KeyFramesAlphabet,
				"description": "source, a list of times (0,2,4) or expr:<expression> (expr:gte(t,n_forced*2))"}}},
		"gop":                  jsInt(1, 1000),
		"frame_width":          jsInt(0, 7680),
		"frame_height":         jsInt(0, 4320),
		"preset":               jsEnum(presets...),
		"tune":                 jsEnum(tunes...),
		"crf":                  jsInt(0, 51),
		"pix_fmt":              jsEnum(pixFmts...),
		"filter_fps":           jsNumberAbove(0, 240),
		"audio_trancoding":     jsEnum(append([]string{""}, audioCodecs...)...),
		"audio_transcoding":    jsEnum(append([]string{""}, audioCodecs...)...),
		"output_audio_bitrate": jsInt(8, 1024),
		"sample_rate":          jsIntEnum(sampleRates...),
		"slices":               jsInt(0, 68),
		"cores":                jsInt(0, 4),
	})
}

// sharedSchemas are the components every document has besides the module records.
func sharedSchemas() map[string]any {
	success := map[string]any{"success": jsBool(true)}
	return map[string]any{
		"Input":       inputSchema(),
		"Output":      outputSchema(),
		"Transcoding": transcodingSchema(),
		"IdBody":      requireOne(jsObject(nil, map[string]any{"id": jsID(), "_id": jsID()}), "id", "_id"),
		"ListQuery": jsObject(nil, map[string]any{"limit": jsInt(1, 1000), "skip": jsInt(0, 1<<31-1),
			"sort":   map[string]any{"type": "object", "additionalProperties": jsIntEnum(1, -1), "maxProperties": maxListKeys},
			"filter": map[string]any{"type": "object", "description": "equality on top-level fields", "maxProperties": maxListKeys}}),
		"Success": jsObject([]string{"success"}, success),
		"Created": jsObject([]string{"success", "id", "created"}, map[string]any{"success": jsBool(true), "id": jsID(), "created": jsDate()}),
		"Updated": jsObject([]string{"success", "id", "updated"}, map[string]any{"success": jsBool(true), "id": jsID(), "updated": jsDate()}),
		"Count":   jsObject([]string{"count"}, map[string]any{"count": map[string]any{"type": "integer"}}),
		"ProcessStat": jsObject(nil, map[string]any{"id": jsID(), "bitrate": jsNumber(0, 1e9), "fps": jsNumber(0, 1e4),
			"bytes_in": map[string]any{"type": "integer"}, "uptime_sec": jsNumber(0, 1e12),
			"discontinuities": map[string]any{"type": "integer", "description": "times the input came back after a gap"}, "state": jsEnum("stopped", "starting", "waiting", "running", "reconnecting", "failed"),
			"srt": withDescription(jsArray(jsRef("SRTLink")), "the process's SRT connections now (input, output); absent for other protocols")}),
		"ActiveStream": jsObject(nil, map[string]any{"stream_id": jsString(0, 512), "publisher": jsString(0, 256), "since": jsDate(),
			"bitrate": jsNumber(0, 1e9), "readers": map[string]any{"type": "integer"},
			"rtt_ms": map[string]any{"type": "number"}, "packets_lost": map[string]any{"type": "integer"}, "retransmitted": map[string]any{"type": "integer"},
			"srt": withDescription(jsRef("SRTLink"), "SRT server modules: the publisher's link statistics")}),
		"SRTLink": srtLinkSchema(),
		"PortKey": jsObject(nil, map[string]any{"port": jsInt(1, 65535), "transport": jsEnum("TCP", "UDP")}),
		"PortClaim": jsObject(nil, map[string]any{"id": jsID(), "port": jsInt(1, 65535), "transport": jsEnum("TCP", "UDP"),
			"module_name": jsString(1, 64), "entity_id": apiOrID(), "entity_name": jsString(0, 128), "created": jsDate()}),
		"ServerStat": map[string]any{"type": "object", "description": "cpuUsage, RAM and drive (spec 2.7)"},
		"SpeedTest":  map[string]any{"type": "object", "description": "timestamp, ping, download, upload, packetLoss, isp, interface (spec 2.7)"},
		"Error": jsObject([]string{"success", "error"}, map[string]any{"success": jsBool(false), "error": jsObject([]string{"code", "message"},
			map[string]any{"code": jsEnum(CodeBadJSON, CodeValidation, CodeUnauthorized, CodeNotFound, CodeMethodNotAllowed, CodeNameTaken,
				CodePortTaken, CodeTooLarge, CodeUnsupported, CodeRateLimited, CodeInternal, CodeUnavailable, CodeInsufficientStorage, CodeNodeRunning),
				"message": jsString(0, 4096), "field": jsString(0, 512)})}),
	}
}

// apiOrID is the entity_id of a port claim: an ObjectId, or "api" for the API server's own ports.
func apiOrID() map[string]any {
	return map[string]any{"type": "string", "pattern": "^([0-9a-fA-F]{24}|api)$", "description": `ObjectId, or "api" for the API server's own ports`}
}

// withDescription returns a copy of schema with a description.
func withDescription(schema map[string]any, text string) map[string]any {
	c := maps.Clone(schema)
	c["description"] = text
	return c
}

package api

import (
	"net/http"
	"testing"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

func TestRestreamCreateAndRead(t *testing.T) {
	e := newEnv(t)
	body := merge(restreamBody("to youtube"), map[string]any{"restream_type": "RESTREAM_TYPE_FAKE"})
	body["transcoding"] = map[string]any{"video_transcoding": "libx264", "output_video_bitrate": "4000", "preset": "very fast", "audio_transcoding": "aac"}
	id := e.mustCreate("restream", body)
	r := e.getByID("restream", id)
	if r["restream_type"] != "RESTREAM_TYPE_SRT_TO_RTMP" || r["_id"] != id || r["restream_name"] != "to youtube" {
		t.Fatalf("record %v", r)
	}
	ins, outs := r["input"].([]any), r["output"].([]any)
	if len(ins) != 1 || len(outs) != 1 {
		t.Fatalf("input/output must be one-element arrays: %v", r)
	}
	in, out := ins[0].(map[string]any), outs[0].(map[string]any)
	if !storage.ValidID(in["id"].(string)) || !storage.ValidID(out["id"].(string)) {
		t.Fatalf("input/output ids: %v %v", in, out)
	}
	if in["input_stream_url"] != "srt://example.com:9000?streamid=cam1&rcvbuf=1000000" || out["output_stream_key"] != "key1" {
		t.Fatalf("fields %v %v", in, out)
	}
	tr := r["transcoding"].(map[string]any)
	if tr["preset"] != "very fast" || tr["output_video_bitrate"] != 4000.0 || tr["audio_trancoding"] != "aac" || tr["audio_transcoding"] != nil {
		t.Fatalf("transcoding %v", tr)
	}

	// What getById returns can be sent back as an update; ids of unchanged objects stay.
	r["restream_name"] = "renamed"
	wantSuccess(t, e.post("/api/restream/update", r))
	r2 := e.getByID("restream", id)
	if r2["restream_name"] != "renamed" || r2["input"].([]any)[0].(map[string]any)["id"] != in["id"] {
		t.Fatalf("after update %v", r2)
	}
	// Updating another field keeps the ids too.
	wantSuccess(t, e.post("/api/restream/update", map[string]any{"id": id, "active": false}))
	r3 := e.getByID("restream", id)
	if r3["output"].([]any)[0].(map[string]any)["id"] != out["id"] || r3["active"] != false {
		t.Fatalf("after second update %v", r3)
	}
	// A new output replaces the old one and the type follows.
	wantSuccess(t, e.post("/api/restream/update", map[string]any{"id": id,
		"output": []any{map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://239.0.0.1:1234?ttl=4"}}}))
	if r4 := e.getByID("restream", id); r4["restream_type"] != "RESTREAM_TYPE_SRT_TO_UDP" {
		t.Fatalf("type not derived on update: %v", r4["restream_type"])
	}
}

func TestRestreamTypeDerivation(t *testing.T) {
	ins := map[string]string{
		kinds.InputSRTSoftware: "SRT", kinds.InputSRTHardware: "SRT", kinds.InputRTMPSoftware: "RTMP", kinds.InputRTMPHardware: "RTMP",
		kinds.InputSRTListen: "SRT", kinds.InputRTMPListen: "RTMP", kinds.InputRTSPListen: "RTSP", kinds.InputUDPListen: "UDP", kinds.InputHTTPListen: "HTTP",
		kinds.InputSRTURL: "SRT", kinds.InputRTMPURL: "RTMP", kinds.InputRTSPURL: "RTSP", kinds.InputUDPURL: "UDP", kinds.InputHTTPURL: "HTTP",
		kinds.InputHLSURL: "HLS", kinds.InputMPEGDASHURL: "DASH", kinds.InputOther: "OTHER", kinds.InputGenerateVideo: "TEST",
	}
	outs := map[string]string{
		kinds.OutputLocalRTMPURL: "RTMP", kinds.OutputOtherRTMPURL: "RTMP", kinds.OutputRTSPURL: "RTSP", kinds.OutputSRTURL: "SRT",
		kinds.OutputUDPURL: "UDP", kinds.OutputHTTPURL: "HTTP", kinds.OutputRTPURL: "RTP",
	}
	if len(ins) != len(kinds.InputTypes()) || len(outs) != len(kinds.OutputTypes()) {
		t.Fatal("table does not cover every type")
	}
	for it, iw := range ins {
		for ot, ow := range outs {
			if got, want := restreamType(it, ot), "RESTREAM_TYPE_"+iw+"_TO_"+ow; got != want {
				t.Errorf("%s → %s: %s, want %s", it, ot, got, want)
			}
		}
	}
}

func TestRestreamInputsOutputs(t *testing.T) {
	e := newEnv(t)
	srt := e.mustCreate("srt-servers", merge(srtServerBody("Main Studio", 10080), map[string]any{"publisher_prefix": "pub"}))
	rtmp := e.mustCreate("rtmp-servers", rtmpServerBody("rtmp1", 1935))
	ok := []struct {
		name   string
		in     map[string]any
		out    map[string]any
		rsType string
	}{
		{"srt module alias", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_module_id": srt, "input_stream_id": "pub/main-studio/cam1"},
			map[string]any{"output_type": "OUTPUT_TYPE_LOCAL_RTMP_URL", "output_stream_url": "rtmp://localhost:1935/live"}, "RESTREAM_TYPE_SRT_TO_RTMP"},
		{"srt haivision", map[string]any{"input_type": "INPUT_TYPE_SRT_HARDWARE", "input_server_id": srt, "input_stream_id": "#!::r=cam1,m=publish"},
			map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": "srt://:9001?mode=listener"}, "RESTREAM_TYPE_SRT_TO_SRT"},
		{"rtmp module", map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": rtmp, "input_stream_id": "key"},
			map[string]any{"output_type": "OUTPUT_TYPE_RTP_URL", "output_stream_url": "rtp://10.0.0.1:5004"}, "RESTREAM_TYPE_RTMP_TO_RTP"},
		{"udp any", map[string]any{"input_type": "INPUT_TYPE_UDP_URL", "input_stream_url": "udp://@:5000"},
			map[string]any{"output_type": "OUTPUT_TYPE_HTTP_URL", "output_stream_url": "https://ingest.example.com/push"}, "RESTREAM_TYPE_UDP_TO_HTTP"},
		{"hls", map[string]any{"input_type": "INPUT_TYPE_HLS_URL", "input_stream_url": "https://cdn.example.com/live.m3u8"},
			map[string]any{"output_type": "OUTPUT_TYPE_RTSP_URL", "output_stream_url": "rtsps://r.example.com/x"}, "RESTREAM_TYPE_HLS_TO_RTSP"},
		{"other", map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": "rtsp://cam.example.com:554/h264"},
			map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": "rtmps://live.example.com/app"}, "RESTREAM_TYPE_OTHER_TO_RTMP"},
		{"test video", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": "1280", "resolution_height": 720},
			map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://239.1.1.1:1234"}, "RESTREAM_TYPE_TEST_TO_UDP"},
		{"srt listen", map[string]any{"input_type": "INPUT_TYPE_SRT_LISTEN", "input_stream_listen_port": map[string]any{"port": 7000, "transport": "Udp"}},
			map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": "srt://1.2.3.4:9000"}, "RESTREAM_TYPE_SRT_TO_SRT"},
	}
	for i, c := range ok {
		body := map[string]any{"restream_name": c.name, "input": []any{c.in}, "output": c.out}
		res := e.post("/api/restream/create", body)
		if res.code != http.StatusCreated {
			t.Fatalf("%s: %d %s", c.name, res.code, res.raw)
		}
		r := e.getByID("restream", res.obj()["id"].(string))
		if r["restream_type"] != c.rsType {
			t.Errorf("%d %s: type %v", i, c.name, r["restream_type"])
		}
		if c.name == "srt module alias" && r["input"].([]any)[0].(map[string]any)["input_server_id"] != srt {
			t.Errorf("input_module_id alias not stored as input_server_id: %v", r["input"])
		}
		if c.name == "test video" {
			in := r["input"].([]any)[0].(map[string]any)
			if in["resolution_width"] != 1280.0 || in["encoding_rate"] != 24.0 || in["sound_hz"] != 216.0 ||
				in["video_duration_sec"] != 3600.0 || in["test_video_bitrate"] != 6000.0 {
				t.Errorf("test video defaults not stored: %v", in)
			}
		}
	}

	bad := []struct {
		name  string
		in    any
		out   any
		field string
	}{
		{"unknown server", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": storage.NewID(), "input_stream_id": "pub/x/y"}, nil, "input.input_server_id"},
		{"malformed server", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_module_id": "xyz", "input_stream_id": "pub/x/y"}, nil, "input.input_server_id"},
		{"rtmp server for srt", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": rtmp, "input_stream_id": "pub/x/y"}, nil, "input.input_server_id"},
		{"srt server for rtmp", map[string]any{"input_type": "INPUT_TYPE_RTMP_HARDWARE", "input_server_id": srt, "input_stream_id": "k"}, nil, "input.input_server_id"},
		{"missing stream id", map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": rtmp}, nil, "input.input_stream_id"},
		{"bad srt stream id", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srt, "input_stream_id": "cam1"}, nil, "input.input_stream_id"},
		{"wrong prefix", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srt, "input_stream_id": "publisher/x/cam1"}, nil, "input.input_stream_id"},
		{"haivision no mode", map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srt, "input_stream_id": "#!::r=cam1"}, nil, "input.input_stream_id"},
		{"srt url scheme", map[string]any{"input_type": "INPUT_TYPE_SRT_URL", "input_stream_url": "rtmp://x/y"}, nil, "input.input_stream_url"},
		{"rtmp url no host", map[string]any{"input_type": "INPUT_TYPE_RTMP_URL", "input_stream_url": "rtmp:///live"}, nil, "input.input_stream_url"},
		{"http url scheme", map[string]any{"input_type": "INPUT_TYPE_HLS_URL", "input_stream_url": "ftp://x/y.m3u8"}, nil, "input.input_stream_url"},
		{"udp url opaque", map[string]any{"input_type": "INPUT_TYPE_UDP_URL", "input_stream_url": "udp:5000"}, nil, "input.input_stream_url"},
		{"missing url", map[string]any{"input_type": "INPUT_TYPE_RTSP_URL"}, nil, "input.input_stream_url"},
		{"other option", map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": "-f lavfi"}, nil, "input.input_stream_url"},
		{"other control", map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": "a\x00b"}, nil, "input.input_stream_url"},
		{"udp listen tcp", map[string]any{"input_type": "INPUT_TYPE_UDP_LISTEN", "input_stream_listen_port": map[string]any{"port": 5000, "transport": "TCP"}}, nil, "input.input_stream_listen_port.transport"},
		{"odd width", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 1281}, nil, "input.resolution_width"},
		{"rate high", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "encoding_rate": 121}, nil, "input.encoding_rate"},
		{"bitrate low", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "test_video_bitrate": 10}, nil, "input.test_video_bitrate"},
		{"two inputs", []any{map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": "x"}, map[string]any{"input_type": "INPUT_TYPE_OTHER", "input_stream_url": "y"}}, nil, "input"},
		{"bad output type", nil, map[string]any{"output_type": "OUTPUT_TYPE_FILE", "output_stream_url": "file:///x"}, "output.output_type"},
		{"output scheme", nil, map[string]any{"output_type": "OUTPUT_TYPE_OTHER_RTMP_URL", "output_stream_url": "srt://x:1"}, "output.output_stream_url"},
		{"output missing url", nil, map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL"}, "output.output_stream_url"},
		{"rtp scheme", nil, map[string]any{"output_type": "OUTPUT_TYPE_RTP_URL", "output_stream_url": "udp://x:1"}, "output.output_stream_url"},
		{"missing output", nil, "", "output"},
	}
	for _, c := range bad {
		body := restreamBody("bad " + c.name)
		if c.in != nil {
			body["input"] = c.in
		}
		if c.out != nil {
			body["output"] = c.out
			if c.out == "" {
				delete(body, "output")
			}
		}
		wantErr(t, e.post("/api/restream/create", body), http.StatusBadRequest, CodeValidation, c.field)
	}
}

func TestRestreamListenPortConflictAcrossModules(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("srt-servers", srtServerBody("s", 9000))
	body := merge(restreamBody("r"), map[string]any{"input": map[string]any{"input_type": "INPUT_TYPE_SRT_LISTEN",
		"input_stream_listen_port": map[string]any{"port": 9000, "transport": "udp"}}})
	wantErr(t, e.post("/api/restream/create", body), http.StatusConflict, CodePortTaken, "input.input_stream_listen_port.port")
	body["input"].(map[string]any)["input_stream_listen_port"] = map[string]any{"port": 9001, "transport": "udp"}
	e.mustCreate("restream", body)
	// A taken name names its field, as a taken port does.
	wantErr(t, e.post("/api/restream/create", restreamBody("r")), http.StatusConflict, CodeNameTaken, "restream_name")
}

// TestKindsTransportsAreTheStores: a listen input's transport from the types table is checked
// against the stored port's.
func TestKindsTransportsAreTheStores(t *testing.T) {
	if kinds.TCP != storage.TCP || kinds.UDP != storage.UDP {
		t.Fatalf("kinds transports %q %q, store's %q %q", kinds.TCP, kinds.UDP, storage.TCP, storage.UDP)
	}
}

package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestURLOptionsChecked: a UDP, RTP or RTSP address with a bad value of an option sluice
// reads is refused at create with 400 naming the option, not accepted to fail at each start;
// options sluice does not read pass, as does a listen input's address, which is not read.
func TestURLOptionsChecked(t *testing.T) {
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	for _, c := range []struct{ typ, url, option string }{
		{"OUTPUT_TYPE_UDP_URL", "udp://239.1.1.1:5000?pkt_size=1000", "pkt_size"},
		{"OUTPUT_TYPE_RTP_URL", "rtp://10.0.0.1:5004?ttl=300", "ttl"},
		{"OUTPUT_TYPE_RTSP_URL", "rtsp://10.0.0.1/live?rtsp_transport=http", "rtsp_transport"},
	} {
		body := restreamBody("bad", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"})
		body["output"] = map[string]any{"output_type": c.typ, "output_stream_url": c.url}
		ts.call("/api/restream/create", body, http.StatusBadRequest, &e)
		if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "output_stream_url") || !strings.Contains(e.Error.Message, c.option) {
			t.Errorf("%s: %+v", c.url, e)
		}
	}
	ts.call("/api/recording/create", recordingBody("ssm", urlInput("INPUT_TYPE_UDP_URL", "udp://@10.0.0.1:5000?sources=10.0.0.2")),
		http.StatusBadRequest, &e)
	if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") || !strings.Contains(e.Error.Message, "sources") {
		t.Errorf("sources on a unicast input: %+v", e)
	}
	ts.create("recording", recordingBody("ffmpeg-options", urlInput("INPUT_TYPE_UDP_URL",
		"udp://@239.1.1.1:5000?overrun_nonfatal=1&fifo_size=50000&reuse=1&sources=10.0.0.2")))
	ts.create("recording", recordingBody("rtsp", urlInput("INPUT_TYPE_RTSP_URL", "rtsp://u:p@10.0.0.1/live?rtsp_transport=tcp&channel=1")))
	ts.create("vod", playerBody("udp-listen", testutil.FreePort(t), map[string]any{"input_type": "INPUT_TYPE_UDP_LISTEN",
		"input_stream_listen_port": map[string]any{"port": testutil.FreePort(t), "transport": "UDP"},
		"input_stream_url":         "udp://@:5000?pkt_size=1000"}))
}

// TestRTMPListenPasswordChecked: the password an RTMP listen input's address sets is checked at
// create and update (400 on input_stream_url, the password not in the message); an RTMP pull's
// query goes to its server unread.
func TestRTMPListenPasswordChecked(t *testing.T) {
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	listen := func(query string) map[string]any {
		port := testutil.FreePort(t)
		in := listenInput("INPUT_TYPE_RTMP_LISTEN", port, "TCP")
		in["input_stream_url"] = fmt.Sprintf("rtmp://0.0.0.0:%d/live/cam%s", port, query)
		body := restreamBody(fmt.Sprintf("guarded-%d", port), in)
		body["active"] = false
		return body
	}
	for _, query := range []string{"?password=sh0rt.pw", "?password=", "?password=long%20enough%20but%20spaced",
		"?password=Good-pass.1&password=Good-pass.2", "?password=" + strings.Repeat("x", 129)} {
		ts.call("/api/restream/create", listen(query), http.StatusBadRequest, &e)
		if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") ||
			!strings.Contains(e.Error.Message, "password") || strings.Contains(e.Error.Message, "sh0rt") ||
			strings.Contains(e.Error.Message, "Good-pass") {
			t.Errorf("%s: %+v", query, e)
		}
	}
	id := ts.create("restream", listen("?password=Good-pass.1"))
	ts.create("restream", listen("?token=anything")) // no password: any publisher, as before
	update := map[string]any{"id": id, "input": listenInput("INPUT_TYPE_RTMP_LISTEN", testutil.FreePort(t), "TCP")}
	update["input"].(map[string]any)["input_stream_url"] = "rtmp://:1935/live?password=sh0rt.pw"
	ts.call("/api/restream/update", update, http.StatusBadRequest, &e)
	if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") {
		t.Errorf("update: %+v", e)
	}
	pull := restreamBody("pull", urlInput("INPUT_TYPE_RTMP_URL", "rtmp://10.0.0.1/live/cam?password=x"))
	pull["active"] = false
	ts.create("restream", pull)
}

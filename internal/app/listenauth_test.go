package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestListenCredentialsChecked: the password an HTTP listen input's address sets is checked at
// create and update as an RTMP listen input's is (400 on input_stream_url, the password not in
// the message); an HTTP pull's or output's query goes to its server unread.
func TestListenCredentialsChecked(t *testing.T) {
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	for _, c := range []struct {
		kind, address string
		bad           []string // address tails refused
		good          []string // address tails taken
	}{
		{"INPUT_TYPE_HTTP_LISTEN", "http://0.0.0.0:%d/in%s",
			[]string{"?password=sh0rt.pw", "?password=", "?password=long%20enough%20but%20spaced",
				"?password=Good-pass.1&password=Good-pass.2", "?password=" + strings.Repeat("x", 129)},
			[]string{"?password=Good-pass.1", "?token=anything", ""}},
	} {
		body := func(tail string) map[string]any {
			port := testutil.FreePort(t)
			in := listenInput(c.kind, port, "TCP")
			in["input_stream_url"] = fmt.Sprintf(c.address, port, tail)
			b := restreamBody(fmt.Sprintf("guarded-%d", port), in)
			b["active"] = false
			return b
		}
		for _, tail := range c.bad {
			ts.call("/api/restream/create", body(tail), http.StatusBadRequest, &e)
			if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") ||
				!strings.Contains(e.Error.Message, "password") || strings.Contains(e.Error.Message, "sh0rt") ||
				strings.Contains(e.Error.Message, "Good-pass") || strings.Contains(e.Error.Message, "xxxxxxxxxx") {
				t.Errorf("%s %s: %+v", c.kind, tail, e)
			}
		}
		var id string
		for _, tail := range c.good {
			id = ts.create("restream", body(tail))
		}
		update := map[string]any{"id": id, "input": body(c.bad[0])["input"]}
		ts.call("/api/restream/update", update, http.StatusBadRequest, &e)
		if e.Error.Code != "VALIDATION" || !strings.Contains(e.Error.Field, "input_stream_url") {
			t.Errorf("%s update: %+v", c.kind, e)
		}
	}
	pull := restreamBody("pull", urlInput("INPUT_TYPE_HTTP_URL", "http://10.0.0.1/live.ts?password=x"))
	pull["active"] = false
	ts.create("restream", pull)
	out := restreamBody("out", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"})
	out["output"] = map[string]any{"output_type": "OUTPUT_TYPE_HTTP_URL", "output_stream_url": "http://10.0.0.1/in?password=x"}
	out["active"] = false
	ts.create("restream", out)
}

// checkListenCredentials creates a recording of a listen input of kind whose address sets
// credentials; each of refused (ffmpeg output arguments for the port) publishes nothing into
// it, then accepted is recorded at its bitrate. The secrets show in no log line or event, the
// refusal (refusedLog) is logged, and the record reads back as stored.
func checkListenCredentials(t *testing.T, kind, address, refusedLog string, refused [][]string, accepted []string, secrets ...string) {
	t.Helper()
	testutil.RequireFFmpeg(t)
	ts, logs := startServerLogging(t, "--log-level", "debug")
	t.Cleanup(ts.stop)
	events := ts.follow("", "")
	defer events.close()
	port := testutil.FreePort(t)
	in := listenInput(kind, port, "tcp")
	address = strings.ReplaceAll(address, "PORT", fmt.Sprint(port))
	in["input_stream_url"] = address
	rec := ts.create("recording", recordingBody("guarded", in))
	waitBound(t, port, "TCP")

	port2 := fmt.Sprint(port)
	for _, args := range refused {
		args = replaceAll(args, "PORT", port2)
		// An encoder may or may not see its refusal (ffmpeg's HTTP output reads the answer
		// only after its body): what counts is that nothing is taken.
		_ = testutil.FFmpeg(t, append(append(testutil.Source(1000), "-t", "3"), args...)...).Wait(30 * time.Second)
	}
	if s := ts.stat("recording", rec); s.BytesIn > 0 {
		t.Fatalf("a refused encoder's media was taken: %+v", s)
	}
	testutil.FFmpeg(t, append(testutil.Source(1000), replaceAll(accepted, "PORT", port2)...)...)
	ts.checkBitrate("recording", rec)

	var got struct {
		Input struct {
			URL string `json:"input_stream_url"`
		} `json:"input"`
	}
	ts.call("/api/recording/getById", map[string]any{"id": rec}, http.StatusOK, &got)
	if got.Input.URL != address {
		t.Errorf("input_stream_url reads %q, stored %q", got.Input.URL, address)
	}
	var seen []string
	for drained := false; !drained; {
		select {
		case e := <-events.events:
			raw, _ := json.Marshal(e.Data)
			seen = append(seen, string(raw))
		default:
			drained = true
		}
	}
	for _, secret := range secrets {
		testutil.NoSecret(t, secret, logs)
		if strings.Contains(strings.Join(seen, "\n"), secret) {
			t.Fatalf("secret %q in the events", secret)
		}
	}
	if len(seen) == 0 || !strings.Contains(logs.String(), refusedLog) {
		t.Fatalf("no events (%d) or no refusal logged", len(seen))
	}
}

func replaceAll(args []string, old, new string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, old, new)
	}
	return out
}

// TestHTTPListenInputPassword: an HTTP listen input whose address sets a password takes
// nothing from an encoder without it or with another (in the query or as Basic auth), and
// records one that gives it in the query; then one that gives it as Basic auth.
func TestHTTPListenInputPassword(t *testing.T) {
	const secret, wrong = "h77p-Pass.42", "h77p-Pass.43"
	checkListenCredentials(t, "INPUT_TYPE_HTTP_LISTEN", "http://0.0.0.0:PORT/in?password="+secret, "http: publish refused",
		[][]string{
			{"-f", "mpegts", "http://127.0.0.1:PORT/in"},
			{"-f", "mpegts", "http://127.0.0.1:PORT/in?password=" + wrong},
			{"-auth_type", "basic", "-f", "mpegts", "http://enc:" + wrong + "@127.0.0.1:PORT/in"},
		},
		[]string{"-auth_type", "basic", "-f", "mpegts", "http://enc:" + secret + "@127.0.0.1:PORT/other"},
		secret, wrong)
}

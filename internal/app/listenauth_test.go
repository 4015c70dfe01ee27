package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// TestListenCredentialsChecked: the password an HTTP listen input's address sets, and the user
// and password an RTSP one's sets, are checked at create and update as an RTMP listen input's
// password is (400 on input_stream_url, the password not in the message); an HTTP pull's or
// output's query, and an RTSP pull's or output's user information, go to the remote unread.
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
		{"INPUT_TYPE_RTSP_LISTEN", "rtsp://TAIL0.0.0.0:PORT/cam",
			[]string{"enc:sh0rt.pw@", "enc:@", "enc@", ":Good-pass.1@", "en%20c:Good-pass.1@", "enc:Good%20pass.1@",
				"enc:" + strings.Repeat("x", 129) + "@", strings.Repeat("u", 65) + ":Good-pass.1@"},
			[]string{"enc:Good-pass.1@", "", "A.b_c~d-9:Good-pass.1@"}},
		{"INPUT_TYPE_HTTP_LISTEN", "http://0.0.0.0:PORT/inTAIL",
			[]string{"?password=sh0rt.pw", "?password=", "?password=long%20enough%20but%20spaced",
				"?password=Good-pass.1&password=Good-pass.2", "?password=" + strings.Repeat("x", 129)},
			[]string{"?password=Good-pass.1", "?token=anything", ""}},
	} {
		body := func(tail string) map[string]any {
			port := testutil.FreePort(t)
			in := listenInput(c.kind, port, "TCP")
			in["input_stream_url"] = strings.NewReplacer("PORT", fmt.Sprint(port), "TAIL", tail).Replace(c.address)
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
	for i, c := range []struct{ input, output string }{
		{"INPUT_TYPE_HTTP_URL", "OUTPUT_TYPE_HTTP_URL"},
		{"INPUT_TYPE_RTSP_URL", "OUTPUT_TYPE_RTSP_URL"},
	} {
		scheme := strings.ToLower(strings.Split(c.input, "_")[2])
		pull := restreamBody(fmt.Sprintf("pull-%d", i), urlInput(c.input, scheme+"://u:p@10.0.0.1/live?password=x"))
		pull["active"] = false
		ts.create("restream", pull)
		out := restreamBody(fmt.Sprintf("out-%d", i), map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"})
		out["output"] = map[string]any{"output_type": c.output, "output_stream_url": scheme + "://u:p@10.0.0.1/in?password=x"}
		out["active"] = false
		ts.create("restream", out)
	}
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

// TestRTSPListenInputCredentials: an RTSP listen input whose address sets credentials takes
// nothing from an encoder without them, with another password or under another user, and
// records one that gives them (ffmpeg answers the 401 with digest authentication).
func TestRTSPListenInputCredentials(t *testing.T) {
	const secret, wrong = "r75p-Pass.42", "r75p-Pass.43"
	rtsp := func(userinfo string) []string {
		return []string{"-f", "rtsp", "-rtsp_transport", "tcp", "rtsp://" + userinfo + "127.0.0.1:PORT/cam"}
	}
	checkListenCredentials(t, "INPUT_TYPE_RTSP_LISTEN", "rtsp://enc:"+secret+"@0.0.0.0:PORT/cam", "rtsp: publish refused",
		[][]string{rtsp(""), rtsp("enc:" + wrong + "@"), rtsp("other:" + secret + "@")},
		rtsp("enc:"+secret+"@"), secret, wrong)
}

// TestListenCredentialsHeldAtStart: an RTSP or HTTP listen input stored with credentials the
// create check would refuse (written into the store behind the API) refuses to start, 422
// UNSUPPORTED naming input_stream_url, the password not in the message, rather than run
// unguarded.
func TestListenCredentialsHeldAtStart(t *testing.T) {
	data := t.TempDir()
	ts := startServer(t, data, nil)
	bad := map[string]string{}
	for kind, address := range map[string]string{
		"INPUT_TYPE_RTSP_LISTEN": "rtsp://enc:sh0rt.pw@0.0.0.0:%d/cam",
		"INPUT_TYPE_HTTP_LISTEN": "http://0.0.0.0:%d/in?password=sh0rt.pw",
	} {
		port := testutil.FreePort(t)
		body := recordingBody(fmt.Sprintf("stored-%d", port), listenInput(kind, port, "tcp"))
		body["active"] = false
		bad[ts.create("recording", body)] = fmt.Sprintf(address, port)
	}
	ts.stop()

	st, err := storage.Open(filepath.Join(data, "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, address := range bad {
		var r storage.Recording
		if err := st.Get(ctx, storage.ModuleRecording, id, &r); err != nil {
			t.Fatal(err)
		}
		r.Input.InputStreamURL = address
		if err := st.Update(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, data, nil)
	defer ts.stop()
	for id := range bad {
		var refused struct {
			Error struct{ Code, Message string }
		}
		ts.call("/api/recording/start", map[string]any{"id": id}, http.StatusUnprocessableEntity, &refused)
		if refused.Error.Code != "UNSUPPORTED" || !strings.Contains(refused.Error.Message, "input_stream_url") ||
			!strings.Contains(refused.Error.Message, "password") || strings.Contains(refused.Error.Message, "sh0rt") {
			t.Errorf("start %s: %+v", id, refused)
		}
	}
}

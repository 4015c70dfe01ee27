package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/kinds"
)

// otherCases are INPUT_TYPE_OTHER addresses under the default policy, shared with the fuzz seeds:
// want is "" when accepted, else a word the refusal must contain.
var otherCases = []struct {
	addr string
	want string
}{
	{"http://cam.example.com/live.ts", ""},
	{"https://cdn.example.com/live/index.m3u8", ""},
	{"rtmp://live.example.com/app/key", ""},
	{"rtmps://live.example.com:443/app/key", ""},
	{"rtsp://user:pass@10.0.0.7:554/stream1", ""},
	{"srt://10.0.0.8:9000?streamid=cam&latency=200", ""},
	{"udp://@239.1.1.1:5000?fifo_size=100000", ""},
	{"rtp://0.0.0.0:5004", ""},
	{"HTTP://cam.example.com/x", ""}, // ffmpeg itself matches protocol names exactly and refuses it
	// Local files and their spellings.
	{"/etc/passwd", "local file"},
	{"./clip.mp4", "local file"},
	{"clip.mp4", "local file"},
	{" /etc/passwd", "local file"},
	{"/dev/video0", "local file"},
	{"file:/etc/passwd", "file:"},
	{"file:///etc/passwd", "file:"},
	{"FILE:/etc/passwd", "file:"},
	{"C:/Windows/win.ini", `"c"`},
	// Protocols that read the server's descriptors or files, or open raw connections.
	{"pipe:0", `"pipe"`},
	{"fd:3", `"fd"`},
	{"unix:/run/docker.sock", `"unix"`},
	{"data:video/mp2t;base64,R0lGODdh", `"data"`},
	{"gopher://internal:70/x", `"gopher"`},
	{"tcp://127.0.0.1:6379", `"tcp"`},
	{"tls://127.0.0.1:443", `"tls"`},
	{"ftp://files.example.com/a.ts", `"ftp"`},
	{"sftp://files.example.com/a.ts", `"sftp"`},
	{"ipfs://bafy/x", `"ipfs"`},
	// Nested and wrapping protocols.
	{"concat:/etc/passwd|/etc/shadow", `"concat"`},
	{"concatf:/tmp/list.txt", `"concatf"`},
	{"subfile,,start,0,end,100,,:/etc/passwd", `"subfile"`},
	{"cache:file:/etc/passwd", `"cache"`},
	{"async:/etc/passwd", `"async"`},
	{"crypto+file:/etc/passwd", `"crypto"`},
	{"crypto:/etc/passwd", `"crypto"`},
	{"hls+file:/tmp/x.m3u8", `"hls"`},
	{"http+file:/etc/passwd", "file:"},
	{"https+tcp://127.0.0.1:22", `"tcp"`},
	// Malformed network addresses and option lookalikes.
	{"http:/etc/passwd", "http://"},
	{"rtmp:live", "rtmp://"},
	{":/etc/passwd", "empty protocol"},
	{"-i", "'-'"},
	{" -f lavfi", "'-'"},
}

func TestOtherInputDefaultPolicy(t *testing.T) {
	var p *InputPolicy // the default
	for _, c := range otherCases {
		err := p.Check(c.addr)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q refused: %v", c.addr, err)
		case c.want != "" && err == nil:
			t.Errorf("%q accepted", c.addr)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%q: %v, want it to say %s", c.addr, err, c.want)
		}
	}
}

// TestOtherInputWrappersCheckWhatTheyWrap: with the wrapping protocols allowed, what they wrap
// is judged as if given alone.
func TestOtherInputWrappersCheckWhatTheyWrap(t *testing.T) {
	p := &InputPolicy{Schemes: append([]string{"cache", "async", "crypto", "concat", "concatf", "subfile", "hls", "tcp"}, DefaultInputSchemes...)}
	for addr, ok := range map[string]bool{
		"cache:http://cdn.example.com/a.ts":                        true,
		"cache:file:/etc/passwd":                                   false,
		"cache:/etc/passwd":                                        false,
		"async:cache:http://x.example.com/a":                       true,
		"crypto+http://keys.example.com/a.ts":                      true,
		"crypto+file:/etc/passwd":                                  false,
		"CRYPTO+FILE:/etc/passwd":                                  false,
		"crypto:/etc/passwd":                                       false,
		"hls+https://cdn.example.com/x.m3u8":                       true,
		"concat:http://a.example.com/1.ts|http://b/2.ts":           true,
		"concat:http://a.example.com/1.ts|/etc/passwd":             false,
		"concat:http://a.example.com/1.ts|pipe:0":                  false,
		"concatf:http://a.example.com/list.txt":                    true,
		"subfile,,start,0,end,9,,:http://a.example.com/x":          true,
		"subfile,,start,0,end,9,,:/etc/passwd":                     false,
		"subfile:file:/etc/passwd":                                 false,
		"cache:cache:cache:cache:http://x.example.com/":            true,
		"cache:cache:cache:cache:cache:http://x.example.com":       false, // nested too deep
		"crypto+crypto+crypto+crypto+crypto+http://x.example.com/": false,
		"tcp://10.0.0.9:1234":                                      true,
		"tcp:10.0.0.9:1234":                                        false,
	} {
		if err := p.Check(addr); (err == nil) != ok {
			t.Errorf("%q: %v, want allowed %v", addr, err, ok)
		}
	}
	local := &InputPolicy{AllowLocalFiles: true, Schemes: []string{"concat"}}
	for addr, ok := range map[string]bool{
		"/media/clip.mp4":                true,
		"file:/media/clip.mp4":           true,
		"concat:/media/a.ts|/media/b.ts": true,
		"http://cdn.example.com/x":       false, // not in this list
		"pipe:0":                         false,
		"-i":                             false,
	} {
		if err := local.Check(addr); (err == nil) != ok {
			t.Errorf("local files allowed: %q: %v, want allowed %v", addr, err, ok)
		}
	}
}

// TestOtherInputRefusedAtCreateAndUpdate: the API answers 400 VALIDATION naming the field and
// the protocol, at create and at update; a server configured for local files accepts them.
func TestOtherInputRefusedAtCreateAndUpdate(t *testing.T) {
	e := newEnv(t)
	other := func(addr string) map[string]any {
		return map[string]any{"input_type": kinds.InputOther, "input_stream_url": addr}
	}
	for _, addr := range []string{"/etc/passwd", "gopher://10.0.0.1/", "concat:/a|/b", "crypto+file:/etc/shadow"} {
		res := e.post("/api/recording/create", merge(recordingBody("r"), map[string]any{"input": other(addr)}))
		wantErr(t, res, http.StatusBadRequest, CodeValidation, "input.input_stream_url")
	}
	res := e.post("/api/recording/create", merge(recordingBody("r"), map[string]any{"input": other("gopher://10.0.0.1/")}))
	if !strings.Contains(string(res.raw), `\"gopher\"`) {
		t.Fatalf("the protocol is not named: %s", res.raw)
	}
	id := e.mustCreate("recording", merge(recordingBody("r"), map[string]any{"input": other("srt://10.0.0.1:9000")}))
	wantErr(t, e.post("/api/recording/update", map[string]any{"id": id, "input": other("file:/etc/passwd")}),
		http.StatusBadRequest, CodeValidation, "input.input_stream_url")
	wantErr(t, e.post("/api/vod/create", merge(playerBody("p", 8000), map[string]any{"input": other("pipe:0")})),
		http.StatusBadRequest, CodeValidation, "input.input_stream_url")
	wantErr(t, e.post("/api/restream/create", merge(restreamBody("x"), map[string]any{"input": other("tcp://127.0.0.1:22")})),
		http.StatusBadRequest, CodeValidation, "input.input_stream_url")

	local := newEnv(t, func(c *Config) { c.AllowLocalFiles, c.InputSchemes = true, []string{"srt"} })
	local.mustCreate("recording", merge(recordingBody("file"), map[string]any{"input": other("/media/clip.mp4")}))
	wantErr(t, local.post("/api/recording/create", merge(recordingBody("web"), map[string]any{"input": other("http://cdn.example.com/x.ts")})),
		http.StatusBadRequest, CodeValidation, "input.input_stream_url")

	if _, err := New(Config{Store: newFakeStore(), Procs: newFakeProcs(), InputSchemes: []string{"file"}}); err == nil {
		t.Fatal("a scheme list with file accepted")
	}
}

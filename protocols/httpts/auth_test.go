package httpts

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestServerPassword: a server with a password answers a request without it, or with another
// (in the query or as Basic auth), 401 with a Basic challenge and publishes nothing, also while
// another publisher is live (checked before the busy check); ffmpeg publishing with the
// password in the query or as Basic auth (-auth_type basic) is taken. No log line shows a
// password, and the refusals are logged.
func TestServerPassword(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	const secret, wrong = "H77p-s3cret.x", "H77p-s3cret.y"
	s := stream.New("http-password", stream.Options{})
	log, logs := testutil.LogBuffer()
	_, addr := serveOpts(t, s, ServerOptions{Password: secret, Log: log})
	base := "http://" + addr + "/in"

	refused := func(url, user, pass string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(strings.Repeat("x", 1000)))
		if err != nil {
			t.Fatal(err)
		}
		if user != "" || pass != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Basic realm="sluice"` {
			t.Fatalf("POST %s (user %q): %s, WWW-Authenticate %q; want 401 with a Basic challenge", url, user, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	refused(base, "", "")
	refused(base+"?password="+wrong, "", "")
	refused(base+"?token="+secret, "", "")
	refused(base, "u", wrong)
	refused(base, secret, "")

	// ffmpeg without the password, or with a wrong one, publishes nothing. ffmpeg 5.1 reads
	// the answer to a streaming POST only after its body, so it may not fail: what counts is
	// that nothing reaches the stream.
	col := streamtest.Collect(t, s)
	_ = publishHTTP(t, base, 2, "-f", "mpegts")
	_ = publishHTTP(t, "http://u:"+wrong+"@"+addr+"/in", 2, "-auth_type", "basic", "-f", "mpegts")
	if s.Publishing() || len(col.Snapshot()) > 0 {
		t.Fatal("a refused publisher publishes")
	}

	// The password in the query; while it publishes, a request without it gets 401, not 409.
	done := make(chan error, 1)
	go func() { done <- publishHTTP(t, base+"?password="+secret, 4, "-f", "mpegts") }()
	testutil.Eventually(t, 20*time.Second, "the publisher with the password in the query", s.Publishing)
	refused(base, "", "")
	if err := <-done; err != nil {
		t.Fatalf("ffmpeg with the password in the query: %v", err)
	}
	testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
	streamtest.CheckCBRReceived(t, s, col, 100, 10*time.Second)

	// The password as Basic auth, any user: sent at once (-auth_type basic), or after the 401
	// to the "Expect: 100-continue" ffmpeg sends first when its URL has credentials.
	for _, auth := range [][]string{{"-auth_type", "basic"}, nil} {
		n := len(col.Snapshot())
		if err := publishHTTP(t, "http://enc:"+secret+"@"+addr+"/in", 2, append(auth, "-f", "mpegts")...); err != nil {
			t.Fatalf("ffmpeg %v with the password as Basic auth: %v", auth, err)
		}
		testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
		if len(col.Snapshot()) == n {
			t.Fatalf("ffmpeg %v with the password as Basic auth: nothing published", auth)
		}
	}

	testutil.NoSecret(t, secret, logs)
	testutil.NoSecret(t, wrong, logs)
	if !strings.Contains(logs.String(), "http: publish refused") {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
}

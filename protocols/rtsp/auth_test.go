package rtsp

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestListenCredentials(t *testing.T) {
	for _, c := range []struct {
		url, user, pass string
		err             bool
	}{
		{url: ""},
		{url: "rtsp://0.0.0.0:8554/cam"},
		{url: "rtsp://:8554/cam?x=1"},
		{url: "rtsp://enc:Abc.def_12@0.0.0.0:8554/cam", user: "enc", pass: "Abc.def_12"},
		{url: "rtsps://enc:a%7Eb@:8554/", user: "enc", pass: "a~b"},
		{url: "rtsp://enc:@:8554/cam", user: "enc"},
		{url: "rtsp://enc@:8554/cam", user: "enc"},
		{url: "rtsp://:Abc.def_12@:8554/cam", pass: "Abc.def_12"},
		{url: "rtsp://enc:Abc%zzdef_12@:8554/cam", err: true},
		{url: "rtsp://enc:Abc.def_12@[::1/cam", err: true},
	} {
		user, pass, err := ListenCredentials(c.url)
		if c.err {
			if err == nil || strings.Contains(err.Error(), "Abc") {
				t.Errorf("ListenCredentials(%q): err %v, want one that does not show the password", c.url, err)
			}
			continue
		}
		if err != nil || user != c.user || pass != c.pass {
			t.Errorf("ListenCredentials(%q) = %q, %q, %v; want %q, %q", c.url, user, pass, err, c.user, c.pass)
		}
	}
}

// TestServerCredentialsRefused: a listen input with credentials refuses ffmpeg publishing
// without them, with another password or under another user (401: ffmpeg fails, nothing is
// published), also while another publisher is live; it takes the publisher that gives them.
// The refusals are logged, and no log line shows a password.
func TestServerCredentialsRefused(t *testing.T) {
	t.Parallel()
	const secret, wrong = "Rtsp-s3cret.x", "Rtsp-s3cret.y"
	log, logs := testutil.LogBuffer()
	rs := startServer(t, ListenOptions{User: "enc", Password: secret, Log: log})
	with := func(user, pass string) string {
		return strings.Replace(rs.url, "rtsp://", "rtsp://"+user+":"+pass+"@", 1)
	}
	refused := func(url string) {
		t.Helper()
		err := startPublisher(t, url, "tcp", "libx264", "aac", 3).Wait(30 * time.Second)
		if err == nil {
			t.Fatalf("ffmpeg publishing to %s: no error", strings.ReplaceAll(url, wrong, "WRONG"))
		}
	}
	refused(rs.url)
	refused(with("enc", wrong))
	refused(with("other", secret))
	if rs.strm.Publishing() {
		t.Fatal("a refused publisher publishes")
	}
	p := startPublisher(t, with("enc", secret), "tcp", "libx264", "aac", 30)
	waitTracks(t, rs.strm, 2)
	refused(with("enc", wrong))
	p.Kill()

	testutil.NoSecret(t, secret, logs)
	testutil.NoSecret(t, wrong, logs)
	if !strings.Contains(logs.String(), "rtsp: publish refused") {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
}

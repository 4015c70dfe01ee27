package rtsp

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// TestPullPushNoSecret pulls and pushes with addresses that carry a password and a query
// token, against a server that refuses them, a closed port and an address that does not
// parse: no error or log line shows a secret.
func TestPullPushNoSecret(t *testing.T) {
	t.Parallel()
	const (
		password = "pa55S3cret"
		token    = "tok3nS3cret"
	)
	rs := startServer(t, ListenOptions{User: "user", Password: "right-password"})
	closed := "127.0.0.1:" + itoa(testutil.FreePort(t))
	host := strings.TrimPrefix(rs.url, "rtsp://")
	host = host[:strings.IndexByte(host, '/')]
	secret := func(hostport string) string {
		return "rtsp://user:" + password + "@" + hostport + "/live?token=" + token + "&rtsp_transport=tcp"
	}
	for _, tc := range []struct{ name, url string }{
		{"wrong password", secret(host)},
		{"closed port", secret(closed)},
		{"bad transport", "rtsp://user:" + password + "@" + host + "/live?token=" + token + "&rtsp_transport=sctp"},
		{"unparsable", "rtsp://user:" + password + "@" + host + "/live?token=" + token + "%zz"},
		{"unparsable host", "rtsp://user:" + password + "@ho st/live?token=" + token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []string{"pull", "push"} {
				testutil.FailsKeeping(t, 30*time.Second, func(ctx context.Context, log *slog.Logger) error {
					if op == "pull" {
						return Pull(ctx, stream.New("pulled", stream.Options{}), PullOptions{URL: tc.url, Log: log})
					}
					r, err := stream.New("src", stream.Options{}).NewReader("push")
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					return Push(ctx, r, []media.Track{mediatest.H264(0)}, PushOptions{URL: tc.url, Log: log})
				}, password, token)
			}
		})
	}
}

package rtmp

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestPushPullNoSecret pushes and pulls with addresses that carry a password, a token and a
// stream key, against a server that refuses them and a closed port: no error or log line of
// the client shows a secret.
func TestPushPullNoSecret(t *testing.T) {
	t.Parallel()
	const (
		password = "pa55S3cret"
		token    = "tok3nS3cret"
		key      = "streamK3yS3cret"
	)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	addr := startServer(t, &Server{Registry: reg, PublishPassword: "server-password-0"})
	closed := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))

	pull := func(ctx context.Context, u string, log *slog.Logger) error {
		return Pull(ctx, stream.New("pull", stream.Options{}), PullOptions{URL: u, Log: log})
	}
	push := func(u, k string) func(ctx context.Context, _ string, log *slog.Logger) error {
		return func(ctx context.Context, _ string, log *slog.Logger) error {
			s := stream.New("push", stream.Options{})
			r, err := s.NewReader("push")
			if err != nil {
				return err
			}
			defer r.Close()
			return Push(ctx, r, nil, PushOptions{URL: u, Key: k, Log: log})
		}
	}
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, u string, log *slog.Logger) error
		url  string
	}{
		// The server answers Play.StreamNotFound, naming the key.
		{"pull not found", pull, "rtmp://user:" + password + "@" + addr + "/live/" + key + "?token=" + token},
		{"pull closed port", pull, "rtmp://user:" + password + "@" + closed + "/live/" + key + "?token=" + token},
		// The server refuses the password.
		{"push key in the URL", push("rtmp://"+addr+"/live/"+key+"?password="+token, ""), ""},
		{"push key apart", push("rtmp://user:"+password+"@"+addr+"/live?token="+token, key+"?password="+token), ""},
		{"push closed port", push("rtmp://"+closed+"/live/"+key+"?password="+token, ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testutil.FailsKeeping(t, 30*time.Second, func(ctx context.Context, log *slog.Logger) error {
				return tc.run(ctx, tc.url, log)
			}, password, token, key)
		})
	}
}

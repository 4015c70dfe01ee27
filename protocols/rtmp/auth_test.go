package rtmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/protocols/internal/passwd"
)

func TestPasswordOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"cam1", "", false},
		{"cam1?", "", false},
		{"cam1?token=x", "", false},
		{"cam1?password=s3cret", "s3cret", true},
		{"cam1?a=1&password=s3cret&b=2", "s3cret", true},
		{"cam1?password=", "", true},
		{"cam1?password=a%7Eb", "a~b", true},
		{"cam1?password=a%zz", "a%zz", true}, // not an escape: taken as sent
		{"cam1?passwords=x", "", false},
		{"live?password=s3cret", "s3cret", true},
	} {
		got, ok := passwordOf(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("passwordOf(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestServerPublishPassword: with a publish password, ffmpeg publishing without it or with
// another is refused (NetStream.Publish.BadName, nothing registered, nothing told), with it in
// the stream key's query or the app's it publishes under the bare key, and the password is in
// no log line, event or ActiveStreams entry. Players need none.
func TestServerPublishPassword(t *testing.T) {
	testutil.RequireFFmpeg(t)
	const secret = "Pub-s3cret_0123"
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	var logs testutil.SyncBuffer
	events := &testutil.SessionLog{}
	srv := &Server{Registry: reg, Publishers: events, PublishPassword: secret,
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	addr := startServer(t, srv)
	base := fmt.Sprintf("rtmp://%s/live/cam1", addr)

	for _, c := range []struct{ url, why string }{
		{base, reasonNoPassword},
		{base + "?password=Pub-s3cret_0124", reasonWrongPassword},
		{base + "?token=" + secret, reasonNoPassword},
	} {
		err := startFFmpeg(t, append(encodeArgs(3, "500k"), "-f", "flv", c.url)...).Wait(30 * time.Second)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("publish to %s: %v, want refused with %q", c.url, err, c.why)
		}
	}
	if _, ok := reg.Get("cam1"); ok || len(events.Calls()) != 0 {
		t.Fatalf("a refused publisher was registered or told: %v", events.Calls())
	}

	pub := startFFmpeg(t, append(encodeArgs(20, "500k"), "-f", "flv", base+"?password="+secret)...)
	strm := waitPublished(t, reg, "cam1", 20*time.Second)
	if infos := srv.ActiveStreams(); len(infos) != 1 || infos[0].Key != "cam1" {
		t.Fatalf("ActiveStreams %+v", infos)
	}
	if calls := events.Calls(); len(calls) != 1 || calls[0].StreamID != "cam1" {
		t.Fatalf("publisher events %+v", calls)
	}

	// Our own client: the status code, and the password in the app's query (OBS's server field).
	push := func(ctx context.Context, url, key string) error {
		r, err := strm.NewReader("push")
		if err != nil {
			return err
		}
		defer r.Close()
		return Push(ctx, r, strm.Tracks(), PushOptions{URL: url, Key: key})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	err := push(ctx, "rtmp://"+addr+"/live", "cam2?password=nope")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), codePublishBadName) || !strings.Contains(err.Error(), reasonWrongPassword) {
		t.Fatalf("push with a wrong password: %v", err)
	}
	if d := time.Since(start); d < passwd.Delay {
		t.Errorf("refused after %v, before passwd.Delay", d)
	}
	pushed := make(chan error, 1)
	go func() { pushed <- push(ctx, "rtmp://"+addr+"/live?password="+secret, "cam2") }()
	waitPublished(t, reg, "cam2", 20*time.Second)

	// A player needs no password when only publishing has one.
	played := testutil.FFmpeg(t, "-i", base, "-t", "1", "-f", "null", "-")
	if err := played.Wait(30 * time.Second); err != nil {
		t.Fatalf("player: %v", err)
	}
	select {
	case err := <-pushed:
		t.Fatalf("push ended early: %v", err)
	default:
	}
	cancel()
	if err := <-pushed; err != nil {
		t.Fatalf("push: %v", err)
	}
	pub.Kill()
	testutil.Eventually(t, 15*time.Second, "the end of both publications", func() bool {
		return len(srv.ActiveStreams()) == 0
	})
	keys := map[string]bool{}
	for _, c := range events.Calls() {
		keys[c.StreamID] = true
	}
	if len(keys) != 2 || !keys["cam1"] || !keys["cam2"] {
		t.Fatalf("publisher events %+v", events.Calls())
	}
	out := logs.String()
	if strings.Contains(out, secret) || strings.Contains(out, "nope") || strings.Contains(out, "Pub-s3cret_0124") {
		t.Fatalf("a password in the logs:\n%s", out)
	}
	if !strings.Contains(out, "rtmp: publish refused") {
		t.Fatalf("no refusal logged:\n%s", out)
	}
}

// TestServerPlayPassword: with only a play password, publishing needs none; a player without
// it or with another is refused (NetStream.Play.Failed) whether or not the stream exists, and
// plays with it.
func TestServerPlayPassword(t *testing.T) {
	testutil.RequireFFmpeg(t)
	const secret = "Play.s3cret~42"
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	addr := startServer(t, &Server{Registry: reg, PlayPassword: secret})
	base := fmt.Sprintf("rtmp://%s/live/cam1", addr)
	startFFmpeg(t, append(encodeArgs(20, "500k"), "-f", "flv", base)...)
	waitPublished(t, reg, "cam1", 20*time.Second)

	pull := func(url string) error {
		s, r, closeAll := readStream(t, "pulled", "test")
		defer closeAll()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- Pull(ctx, s, PullOptions{URL: url, Log: testLog(t)}) }()
		rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
		defer rcancel()
		got := make(chan error, 1)
		go func() { _, err := r.Read(rctx); got <- err }()
		select {
		case err := <-done:
			return err
		case err := <-got:
			if err != nil {
				return err
			}
			cancel()
			return <-done
		}
	}
	for _, c := range []struct{ url, why string }{
		{base, reasonNoPassword},
		{base + "?password=Play.s3cret~43", reasonWrongPassword},
		{fmt.Sprintf("rtmp://%s/live/nosuch", addr), reasonNoPassword},
	} {
		err := pull(c.url)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), codePlayFailed) || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("play %s: %v, want refused with %s %q", c.url, err, codePlayFailed, c.why)
		}
	}
	if err := pull(base + "?password=" + secret); err != nil {
		t.Fatalf("play with the password: %v", err)
	}
	// ffmpeg too, the password escaped.
	if err := testutil.FFmpeg(t, "-i", base, "-t", "1", "-f", "null", "-").Wait(30 * time.Second); err == nil {
		t.Fatal("ffmpeg played without the password")
	}
	escaped := strings.ReplaceAll(secret, "~", "%7E")
	if err := testutil.FFmpeg(t, "-i", base+"?password="+escaped, "-t", "1", "-f", "null", "-").Wait(30 * time.Second); err != nil {
		t.Fatalf("ffmpeg with the password: %v", err)
	}
}

package rtmp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// TestListenReconnect publishes to a listen input, stops and starts again three times: the
// Stream marks three discontinuities, a second concurrent publisher is refused, and goroutines and descriptors
// come back to where they were.
func TestListenReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	func() {
		s, r, closeStream := readStream(t, "listen", "test")
		defer closeStream()
		addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- Listen(ctx, s, ListenOptions{Addr: addr, Log: testLog(t)}) }()

		readerDiscs := streamtest.CountDiscontinuities(r)

		url := "rtmp://" + addr + "/any/thing"
		for i := range 3 {
			var p *testutil.Child
			// The listener may not be up yet for the first round.
			deadline := time.Now().Add(10 * time.Second)
			for {
				p = startFFmpeg(t, append(encodeArgs(2, "500k"), "-f", "flv", url)...)
				err := p.Wait(30 * time.Second)
				if err != nil && strings.Contains(err.Error(), "Connection refused") && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				if err != nil {
					t.Fatalf("round %d: %v: %s", i, err, p.Stderr())
				}
				break
			}
			testutil.Eventually(t, 10*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })
		}

		// One at a time: a second publisher is refused while the first one is live.
		first := startFFmpeg(t, append(encodeArgs(6, "500k"), "-f", "flv", "rtmp://"+addr+"/a/b")...)
		testutil.Eventually(t, 10*time.Second, "the publisher", func() bool { return s.Publishing() })
		second := startFFmpeg(t, append(encodeArgs(2, "500k"), "-f", "flv", "rtmp://"+addr+"/c/d")...)
		if err := second.Wait(30 * time.Second); err == nil {
			t.Fatal("a second concurrent publisher was accepted")
		}
		if err := first.Wait(30 * time.Second); err != nil {
			t.Fatalf("first publisher: %v", err)
		}
		testutil.Eventually(t, 10*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })

		if tr := s.Tracks(); len(tr) != 2 || tr[0].Codec != media.CodecH264 || tr[0].Params.Width != 640 ||
			tr[0].Params.Height != 360 || tr[1].Codec != media.CodecAAC {
			t.Errorf("tracks %+v", tr)
		}
		if got := s.Discontinuities(); got != 3 {
			t.Errorf("stream discontinuities %d, want 3 (four sessions)", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Listen: %v", err)
		}
		if n := readerDiscs(); n != 3 {
			t.Errorf("reader saw %d discontinuities, want 3", n)
		}
	}()
	base.Check(t, 15*time.Second)
}

func TestListenBusyPort(t *testing.T) {
	srv := &Server{Registry: stream.NewRegistry(stream.Options{})}
	addr := startServer(t, srv)
	err := Listen(context.Background(), stream.New("x", stream.Options{}), ListenOptions{Addr: addr, Log: testLog(t)})
	if err == nil || !strings.Contains(err.Error(), "rtmp listen "+addr) {
		t.Fatalf("Listen on a busy port: %v", err)
	}
}

// TestListenPublishPassword: a listen input with a password refuses ffmpeg publishing without
// it, with another, or with it under another name (NetStream.Publish.BadName with the reason,
// nothing published), also while another publisher is live (the password is checked before
// the busy key); it takes a publisher that gives it after any app and key, or after the app
// (OBS's server field), and no log line shows a password.
func TestListenPublishPassword(t *testing.T) {
	testutil.RequireFFmpeg(t)
	const secret, wrong = "L1sten-s3cret.x", "L1sten-s3cret.y"
	s, r, closeStream := readStream(t, "listen", "test")
	defer closeStream()
	var logs testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Listen(ctx, s, ListenOptions{Addr: addr, Password: secret, Log: log}) }()
	testutil.Eventually(t, 10*time.Second, "the listener", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	refused := func(why string, args ...string) {
		t.Helper()
		err := startFFmpeg(t, append(encodeArgs(3, "500k"), args...)...).Wait(30 * time.Second)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Fatalf("publish %v: %v, want refused with %q", args, err, why)
		}
	}
	base := "rtmp://" + addr + "/live/cam"
	refused(reasonNoPassword, "-f", "flv", base)
	refused(reasonWrongPassword, "-f", "flv", base+"?password="+wrong)
	refused(reasonNoPassword, "-f", "flv", base+"?token="+secret)
	if s.Publishing() {
		t.Fatal("a refused publisher publishes")
	}

	// Any app and key, the password after the key.
	pub := startFFmpeg(t, append(encodeArgs(30, "500k"), "-f", "flv", "rtmp://"+addr+"/other/key1?password="+secret)...)
	testutil.Eventually(t, 20*time.Second, "the publisher", func() bool { return s.Publishing() })
	readUnits(t, r, 25, 20*time.Second)
	// While it is live, a publisher without the password learns nothing of it.
	refused(reasonNoPassword, "-f", "flv", base)
	pub.Kill()
	testutil.Eventually(t, 15*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })

	// The password after the app, the key apart (OBS's server and key fields).
	pub = startFFmpeg(t, append(encodeArgs(30, "500k"), "-f", "flv", "-rtmp_app", "live?password="+secret,
		"-rtmp_playpath", "cam", "rtmp://"+addr+"/x/y")...)
	testutil.Eventually(t, 20*time.Second, "the publisher giving the password after the app", func() bool { return s.Publishing() })
	pub.Kill()
	testutil.Eventually(t, 15*time.Second, "the publisher to detach", func() bool { return !s.Publishing() })

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Listen: %v", err)
	}
	out := logs.String()
	if strings.Contains(out, secret) || strings.Contains(out, wrong) {
		t.Fatalf("a password in the logs:\n%s", out)
	}
	if !strings.Contains(out, "rtmp: publish refused") {
		t.Fatalf("no refusal logged:\n%s", out)
	}
}

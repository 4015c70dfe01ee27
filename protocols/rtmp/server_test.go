package rtmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestServerPublishPlay(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv := &Server{Registry: reg}
	addr := startServer(t, srv)
	url := fmt.Sprintf("rtmp://%s/live/cam1", addr)

	pub := startFFmpeg(t, append(encodeArgs(12, "1000k"), "-f", "flv", url)...)
	strm := waitPublished(t, reg, "cam1", 20*time.Second)
	tracks := strm.Tracks()
	if tracks[0].Codec != media.CodecH264 || tracks[0].Params.Width != 640 || tracks[0].Params.Height != 360 {
		t.Fatalf("video track %+v", tracks[0])
	}
	if tracks[1].Codec != media.CodecAAC || tracks[1].ClockRate != 44100 {
		t.Fatalf("audio track %+v", tracks[1])
	}
	r, err := strm.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	units := readUnits(t, r, 100, 20*time.Second)
	if !units[0].Key || units[0].Track != 0 {
		t.Fatalf("first unit: track %d key %v", units[0].Track, units[0].Key)
	}

	// A second publisher on the busy key is refused with BadName; the first goes on.
	second := startFFmpeg(t, append(encodeArgs(5, "500k"), "-f", "flv", url)...)
	err = second.Wait(30 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("second publisher: %v", err)
	}
	// The status code, seen by our own client.
	pr, err := strm.NewReader("push")
	if err != nil {
		t.Fatal(err)
	}
	err = Push(context.Background(), pr, strm.Tracks(), PushOptions{URL: "rtmp://" + addr + "/live", Key: "cam1"})
	pr.Close()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), codePublishBadName) {
		t.Fatalf("second publisher, ours: %v", err)
	}

	// A player gets the stream from a key frame.
	out := filepath.Join(t.TempDir(), "play.flv")
	player := testutil.FFmpeg(t, "-i", url, "-t", "3", "-c", "copy", out)

	// Bitrate settles after two seconds of the window.
	time.Sleep(3 * time.Second)
	infos := srv.ActiveStreams()
	if len(infos) != 1 || infos[0].Key != "cam1" || infos[0].RemoteAddr == "" {
		t.Fatalf("ActiveStreams %+v", infos)
	}
	const want = 1064.0 // configured kbit/s: video and audio
	if got := infos[0].Bitrate; got < want*0.85 || got > want*1.15 {
		t.Errorf("bitrate %.0f kbit/s, want %.0f ±15%%", got, want)
	}
	t.Logf("active: %+v", infos[0])
	if err := player.Wait(30 * time.Second); err != nil {
		t.Fatalf("player: %v", err)
	}
	if got := probe(t, out); !strings.Contains(got, "h264,640,360") || !strings.Contains(got, "aac") {
		t.Fatalf("played file: %q", got)
	}
	// The player started at a key frame.
	flags, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-read_intervals", "%+#1",
		"-show_entries", "packet=flags", "-of", "csv=p=0", out).Output()
	if err != nil || !strings.HasPrefix(string(flags), "K") {
		t.Fatalf("first video packet flags %q, %v", flags, err)
	}
	if err := pub.Wait(30 * time.Second); err != nil {
		t.Fatalf("publisher: %v", err)
	}
	testutil.Eventually(t, 10*time.Second, "the end of the publication", func() bool { return len(srv.ActiveStreams()) == 0 })
}

func TestServerRefusesWrongApp(t *testing.T) {
	testutil.RequireFFmpeg(t)
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	addr := startServer(t, &Server{Registry: reg})
	p := startFFmpeg(t, append(encodeArgs(3, "500k"), "-f", "flv", fmt.Sprintf("rtmp://%s/other/cam1", addr))...)
	if err := p.Wait(30 * time.Second); err == nil {
		t.Fatal("publishing to app other worked")
	}
	if _, ok := reg.Get("cam1"); ok {
		t.Fatal("stream created")
	}
}

// TestServerMaxConnections refuses connections past the limit, and Run returns with idle
// connections open, leaving no goroutine or descriptor behind.
func TestServerMaxConnections(t *testing.T) {
	base := testutil.TakeBaseline()
	func() {
		srv := &Server{Registry: stream.NewRegistry(stream.Options{}), MaxConnections: 1}
		addr, stop := startServerStop(t, srv)
		defer stop()
		first, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		// The first connection is served: it gets S0 and S1 after its C0.
		if _, err := first.Write([]byte{3}); err != nil {
			t.Fatal(err)
		}
		_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(first, make([]byte, 1537)); err != nil {
			t.Fatalf("first connection: %v", err)
		}
		second, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = second.Write([]byte{3})
		if n, err := second.Read(make([]byte, 1)); err == nil {
			t.Fatalf("second connection served: read %d bytes", n)
		} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("second connection left open")
		}
		stop()
		if _, err := first.Read(make([]byte, 1)); err == nil {
			t.Fatal("first connection open after Run returned")
		}
	}()
	base.Check(t, 15*time.Second)
}

package srt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// startServer starts a server named "Studio" on a free loopback port.
func startServer(t *testing.T, opts Options) (*Server, *stream.Registry, func() error) {
	t.Helper()
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	srv, err := NewServer(ServerConfig{Name: "Studio", Addr: "127.0.0.1:0", Options: opts, Log: testLog(t)}, reg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, reg, testutil.Run(t, srv.Run)
}

// publishing waits until the registry's stream name has a publisher with tracks.
func publishing(t *testing.T, reg *stream.Registry, name string, p *ffmpegProc) *stream.Stream {
	t.Helper()
	var s *stream.Stream
	testutil.Eventually(t, 30*time.Second, "stream "+name+" to be published", func() bool {
		if p.exited() {
			t.Fatalf("publisher exited: %v\n%s", p.err, p.out.String())
		}
		var ok bool
		s, ok = reg.Get(name)
		return ok && s.Publishing() && len(s.Tracks()) > 0 && s.Stats().UnitsIn > 0
	})
	return s
}

func TestServerPublishReceive(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	srv, reg, stop := startServer(t, Options{})
	port := portOf(srv.Addr())
	pubURL := fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/studio/cam1&latency=200000", port)
	pub := publish(t, pubURL, 60)
	s := publishing(t, reg, "cam1", pub)
	requireTracks(t, s.Tracks())
	if n := checkUnits(t, s, 2*time.Second); n < 40 {
		t.Fatalf("read %d units in 2 s", n)
	}

	// A second publisher of the same name is refused; the first goes on.
	busy := publish(t, pubURL, 10)
	if err := busy.wait(t, 30*time.Second); err == nil {
		t.Fatalf("second publisher of a busy stream id was accepted (first publisher exited: %v, %v; publishing: %v):\n%s\nfirst:\n%s",
			pub.exited(), pub.err, s.Publishing(), busy.out.String(), pub.out.String())
	}
	// A wrong server slug is refused.
	wrong := publish(t, fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/other/cam2&latency=200000", port), 10)
	if err := wrong.wait(t, 30*time.Second); err == nil {
		t.Fatalf("publisher with a wrong server slug was accepted:\n%s", wrong.out.String())
	}
	if _, ok := reg.Get("cam2"); ok {
		t.Fatal("stream cam2 exists after a refused publisher")
	}
	units := s.Stats().UnitsIn
	testutil.Eventually(t, 10*time.Second, "the first publisher to go on", func() bool {
		return s.Publishing() && s.Stats().UnitsIn > units+25
	})

	// A receiver gets the stream back as MPEG-TS.
	out := filepath.Join(t.TempDir(), "out.ts")
	recv := startFFmpeg(t, "-i", fmt.Sprintf("srt://127.0.0.1:%d?streamid=receiver/studio/cam1", port),
		"-t", "5", "-c", "copy", out)
	waitReceivers(t, srv, 1, 20*time.Second, "one receiver in ActiveStreams")
	list := srv.ActiveStreams()
	info := list[0]
	t.Logf("active stream: %+v", info)
	if info.Name != "cam1" || info.StreamID != "publisher/studio/cam1" || info.Readers < 1 ||
		time.Since(info.Since) > time.Minute || info.Link.PktRecv == 0 {
		t.Errorf("ActiveStreams = %+v", info)
	}
	if host, _, _ := netSplit(info.PublisherAddr); host != "127.0.0.1" {
		t.Errorf("publisher address %q", info.PublisherAddr)
	}
	if !withinPct(info.Bitrate, sourceKbps, 15) {
		t.Errorf("bitrate %.0f kbit/s, source %d kbit/s", info.Bitrate, sourceKbps)
	}
	if err := recv.wait(t, 40*time.Second); err != nil {
		t.Fatalf("receiver: %v\n%s", err, recv.out.String())
	}
	requireH264AAC(t, out)
	waitReceivers(t, srv, 0, 15*time.Second, "the receiver to leave")

	pub.stop()
	testutil.Eventually(t, 15*time.Second, "the publisher to leave", func() bool {
		return len(srv.ActiveStreams()) == 0 && !s.Publishing()
	})
	stopAndCheck(t, stop, base)
}

// TestServerPassphrase: the right passphrase publishes, a wrong one or none is refused.
func TestServerPassphrase(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	const pass = "correct-horse-battery"
	srv, reg, stop := startServer(t, Options{Passphrase: pass, PBKeyLen: 32})
	url := fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/studio/%%s&latency=200000%%s", portOf(srv.Addr()))
	for _, c := range []struct{ name, extra string }{
		{"wrong", "&passphrase=wrong-horse-battery"},
		{"none", ""},
	} {
		p := publish(t, fmt.Sprintf(url, c.name, c.extra), 10)
		if err := p.wait(t, 30*time.Second); err == nil {
			t.Fatalf("publisher with passphrase %s was accepted:\n%s", c.name, p.out.String())
		}
		if _, ok := reg.Get(c.name); ok {
			t.Fatalf("stream %s exists after a refused publisher", c.name)
		}
	}
	good := publish(t, fmt.Sprintf(url, "right", "&passphrase="+pass+"&pbkeylen=32"), 60)
	s := publishing(t, reg, "right", good)
	requireTracks(t, s.Tracks())
	good.stop()
	stopAndCheck(t, stop, base)
}

// TestServerRandomBytes sends 2 MB of random datagrams to the server's port, and random bytes
// over a real SRT connection as a publisher; a real publisher then still works.
func TestServerRandomBytes(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	srv, reg, stop := startServer(t, Options{})
	port := portOf(srv.Addr())
	sendRandomDatagrams(t, port, 2<<20)

	// Random bytes inside an SRT connection: no tracks ever come; the session stays bounded.
	conn := dialSRT(t, fmt.Sprintf("127.0.0.1:%d", port), Options{StreamID: "publisher/studio/noise"})
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, payloadSize)
	for range (2 << 20) / payloadSize {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		if _, err := conn.Write(buf); err != nil {
			t.Fatalf("write noise: %v", err)
		}
		time.Sleep(200 * time.Microsecond)
	}
	_ = conn.Close()

	p := publish(t, fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/studio/cam1&latency=200000", port), 60)
	s := publishing(t, reg, "cam1", p)
	requireTracks(t, s.Tracks())
	if noise, ok := reg.Get("noise"); ok && len(noise.Tracks()) > 0 {
		t.Fatal("random bytes produced tracks")
	}
	p.stop()
	stopAndCheck(t, stop, base)
}

// sendRandomDatagrams sends n bytes of random UDP datagrams (up to 1500 bytes each) to the
// loopback port, paced so the socket buffers keep up.
func sendRandomDatagrams(t testing.TB, port, n int) {
	t.Helper()
	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 1500)
	for sent := 0; sent < n; {
		k := 1 + rng.IntN(len(buf))
		for i := range k {
			buf[i] = byte(rng.Uint32())
		}
		// Some datagrams look like SRT control packets (handshakes) to reach deeper code.
		if rng.IntN(4) == 0 && k >= 16 {
			buf[0] = 0x80
			buf[1] = 0x00
			for i := 12; i < 16; i++ {
				buf[i] = 0 // destination socket id 0: a handshake to the listener
			}
		}
		_, _ = c.Write(buf[:k])
		sent += k
		if sent%(64<<10) < k {
			time.Sleep(time.Millisecond)
		}
	}
}

// TestServerSilentPublishers: a publisher that sends no media, or stops sending it while its
// connection stays up, is dropped and its stream name freed.
func TestServerSilentPublishers(t *testing.T) {
	tracks, units := sourceUnits(t)
	oldTracks, oldStall := tracksTimeout, stallTimeout
	tracksTimeout, stallTimeout = time.Second, time.Second
	defer func() { tracksTimeout, stallTimeout = oldTracks, oldStall }()
	base := testutil.TakeBaseline()
	srv, reg, stop := startServer(t, Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", portOf(srv.Addr()))

	dialPublisher := func(name string) *link.Conn { return dialSRT(t, addr, Options{StreamID: "publisher/studio/" + name}) }
	quiet := dialPublisher("quiet")
	defer quiet.Close()
	testutil.Eventually(t, 10*time.Second, "the quiet publisher to be listed", func() bool { return len(srv.ActiveStreams()) == 1 })
	testutil.Eventually(t, 10*time.Second, "the quiet publisher to be dropped", func() bool { return len(srv.ActiveStreams()) == 0 })

	stall := dialPublisher("stall")
	defer stall.Close()
	out := newTSOut(stall, tracks)
	for _, au := range units[:len(units)/2] {
		if err := out.write(context.Background(), au, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	s, ok := reg.Get("stall")
	if !ok {
		t.Fatal("no stream for the stalling publisher")
	}
	testutil.Eventually(t, 10*time.Second, "media from the stalling publisher", func() bool { return s.Stats().UnitsIn > 0 })
	testutil.Eventually(t, 10*time.Second, "the stalled publisher to be dropped", func() bool {
		return !s.Publishing() && len(srv.ActiveStreams()) == 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	_ = quiet.Close()
	_ = stall.Close()
	base.Check(t, 15*time.Second)
}

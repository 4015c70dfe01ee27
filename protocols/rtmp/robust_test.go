package rtmp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/yutopp/go-rtmp/handshake"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// sendRandom sends size random bytes to addr over a few connections, ignoring write errors:
// the server closes on garbage.
func sendRandom(t *testing.T, addr string, size int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const conns = 8
	var wg sync.WaitGroup
	for range conns {
		buf := make([]byte, size/conns)
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		buf[0] = 3 // a valid C0, so that the garbage reaches the chunk reader
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Errorf("dial: %v", err)
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			_, _ = c.Write(buf)
		})
	}
	wg.Wait()
}

// sendHostile completes a handshake and sends a connect command whose strict array claims
// 2^31-1 elements: five bytes that make go-amf0 allocate 32 GiB and crash the process.
func sendHostile(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := handshake.HandshakeWithServer(c, c, &handshake.Config{SkipHandshakeVerification: true}); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	body := amfAppend(nil, "connect", 1)
	body = append(body, 0x0a, 0x7f, 0xff, 0xff, 0xff, 0)
	if err := newChunkWriter(c).writeMessage(csidCommand, msgCommandAMF0, 0, 0, body); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection.
	var b [1]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}

func TestRobustness(t *testing.T) {
	testutil.RequireFFmpeg(t)
	base := testutil.TakeBaseline()
	func() {
		reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
		srv := &Server{Registry: reg, Log: testLog(t)}
		addr, stop := startServerStop(t, srv)
		defer stop()

		ls := stream.New("listen", stream.Options{Log: testLog(t)})
		defer ls.Close()
		laddr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Listen(ctx, ls, ListenOptions{Addr: laddr, Log: testLog(t)}) }()
		testutil.Eventually(t, 10*time.Second, "the listen input", func() bool {
			c, err := net.Dial("tcp", laddr)
			if err == nil {
				c.Close()
			}
			return err == nil
		})

		for _, a := range []string{addr, laddr} {
			sendRandom(t, a, 2<<20)
			sendHostile(t, a)
		}

		// Real publishers still work on both ports.
		for _, url := range []string{"rtmp://" + addr + "/live/after", "rtmp://" + laddr + "/x/y"} {
			p := startFFmpeg(t, append(encodeArgs(2, "500k"), "-f", "flv", url)...)
			if err := p.Wait(30 * time.Second); err != nil {
				t.Fatalf("publisher after garbage: %v", err)
			}
		}
		if s, ok := reg.Get("after"); !ok || len(s.Tracks()) != 2 {
			t.Fatal("no publication after garbage")
		}
		if len(ls.Tracks()) != 2 {
			t.Fatal("no publication on the listen input after garbage")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}()
	base.Check(t, 15*time.Second)
}

// fakeConn is a net.Conn that reads from a buffer and discards what is written.
type fakeConn struct{ r *bytes.Reader }

func (f fakeConn) Read(p []byte) (int, error)       { return f.r.Read(p) }
func (f fakeConn) Write(p []byte) (int, error)      { return len(p), nil }
func (f fakeConn) Close() error                     { return nil }
func (f fakeConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (f fakeConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (f fakeConn) SetDeadline(time.Time) error      { return nil }
func (f fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (f fakeConn) SetWriteDeadline(time.Time) error { return nil }

// sessionSeed is a client's side of a publishing session: the handshake, connect,
// createStream, publish, metadata and a few tags.
func sessionSeed(tb testing.TB) []byte {
	var buf bytes.Buffer
	buf.WriteByte(3)
	buf.Write(make([]byte, 2*1536))
	cw := newChunkWriter(&buf)
	w := func(csid, typ uint8, sid uint32, body []byte) {
		if err := cw.writeMessage(csid, typ, sid, 0, body); err != nil {
			tb.Fatal(err)
		}
	}
	w(csidCommand, msgCommandAMF0, 0, amfAppend(nil, "connect", 1, amfObj{{"app", "live"}, {"fourCcList", []any{"hvc1"}}}))
	w(csidCommand, msgCommandAMF0, 0, amfAppend(nil, "releaseStream", 2, nil, "key"))
	w(csidCommand, msgCommandAMF0, 0, amfAppend(nil, "createStream", 3, nil))
	w(csidData, msgCommandAMF0, 1, amfAppend(nil, "publish", 0, nil, "key?token=1", "live"))
	w(csidData, msgDataAMF0, 1, amfAppend(nil, "@setDataFrame", "onMetaData", amfECMA{{"videocodecid", 7}, {"audiocodecid", 10}}))
	w(csidAudio, msgAudio, 1, []byte{0xaf, 0, 0x12, 0x10})
	w(csidAudio, msgAudio, 1, []byte{0xaf, 1, 0x21, 0x00})
	w(csidVideo, msgVideo, 1, []byte{0x17, 1, 0, 0, 0, 0, 0, 0, 2, 0x65, 0x88})
	w(csidCommand, msgCommandAMF0, 0, amfAppend(nil, "deleteStream", 4, nil, 1))
	return buf.Bytes()
}

// FuzzServerSession runs a server connection on arbitrary client bytes after a valid
// handshake prefix: commands, metadata and tags must not panic or leak.
func FuzzServerSession(f *testing.F) {
	f.Add(sessionSeed(f))
	for _, tc := range chunkCases {
		f.Add(append(append([]byte{3}, make([]byte, 2*1536)...), tc.in...))
	}
	reg := stream.NewRegistry(stream.Options{Log: discardLog})
	srv := &Server{Registry: reg, Log: discardLog}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := newServerConn(srv, fakeConn{bytes.NewReader(b)}, discardLog)
		sc.serve(context.Background())
		for _, s := range reg.List() {
			if s.Publishing() {
				t.Fatalf("stream %q still has a publisher", s.Name())
			}
		}
	})
}

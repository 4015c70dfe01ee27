package link

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/tooling"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveClips()
	if relayDir != "" {
		_ = os.RemoveAll(relayDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// requireSLT fails the test without srt-live-transmit (libsrt's tool, Debian srt-tools), which
// `make test` installs (make deps): an interop test never skips.
func requireSLT(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("srt-live-transmit"); err != nil {
		t.Fatal("srt-live-transmit is not installed: install srt-tools (make deps)")
	}
}

// slt is a running srt-live-transmit.
type slt struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	errb bytes.Buffer
	done chan struct{}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startSLT runs srt-live-transmit with args; it is stopped when the test ends.
func startSLT(t testing.TB, args ...string) *slt {
	t.Helper()
	s := &slt{}
	return startSLTWriter(t, lockedWriter{&s.mu, &s.out}, args...)
}

// startSLTWriter runs srt-live-transmit with its stdout going to w.
func startSLTWriter(t testing.TB, w io.Writer, args ...string) *slt {
	t.Helper()
	requireSLT(t)
	s := &slt{done: make(chan struct{})}
	if lw, ok := w.(lockedWriter); ok {
		lw.mu, lw.b = &s.mu, &s.out
		w = lw
	}
	s.cmd = exec.Command("srt-live-transmit", args...)
	s.cmd.Stdout = w
	s.cmd.Stderr = lockedWriter{&s.mu, &s.errb}
	s.cmd.SysProcAttr = childAttr()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start srt-live-transmit: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("srt-live-transmit %v stderr:\n%s", args, s.stderr())
		}
	})
	return s
}

// startSLTQuiet runs srt-live-transmit with its output discarded.
func startSLTQuiet(t testing.TB, args ...string) *slt {
	t.Helper()
	requireSLT(t)
	s := &slt{done: make(chan struct{})}
	s.cmd = exec.Command("srt-live-transmit", args...)
	s.cmd.SysProcAttr = childAttr()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start srt-live-transmit: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	return s
}

func (s *slt) stdout() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.out.Bytes()...)
}

func (s *slt) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.String()
}

// stop interrupts srt-live-transmit (its process group: childAttr makes one) and kills it
// when it has not ended within 3 s.
func (s *slt) stop() {
	if !tooling.Closed(s.done) {
		tooling.StopGroup(s.cmd.Process.Pid, s.done, syscall.SIGINT, 3*time.Second)
	}
}

// testClip returns a 4-second MPEG-TS clip made by ffmpeg (lavfi test pattern and sine,
// 1.5 Mbit/s), made once per test binary.
func testClip(t testing.TB) []byte {
	t.Helper()
	return testutil.ReadClip(t, "clip.ts", slices.Concat(testutil.Pattern{}.Args(), []string{"-t", "4"}, testutil.Encode(1500))...)
}

// chunks cuts b into SRT payloads of 1316 bytes (the last may be shorter).
func chunks(b []byte) [][]byte { return slices.Collect(slices.Chunk(b, DefaultPayloadSize)) }

// pace calls send for each chunk at bitrate bits per second, on a schedule (no drift).
func pace(ctx context.Context, cs [][]byte, bitrate int, send func([]byte) error) error {
	start := time.Now()
	sent := 0
	for _, c := range cs {
		due := start.Add(time.Duration(int64(sent) * 8 * int64(time.Second) / int64(bitrate)))
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		if err := send(c); err != nil {
			return err
		}
		sent += len(c)
	}
	return nil
}

// udpDial opens a UDP socket sending to the loopback port of srt-live-transmit's UDP input;
// its writes wait, within ctx, while that input's receive queue is over half full (see
// inputFeed).
func udpDial(ctx context.Context, port int) (net.Conn, error) {
	c, err := net.Dial("udp", loopback(port))
	if err != nil {
		return nil, err
	}
	return inputFeed{Conn: c, ctx: ctx, port: port, limit: udpRmemDefault() / 2}, nil
}

// inputFeed writes datagrams into srt-live-transmit's UDP input without overflowing it. The
// tool reads that socket with the default receive buffer (net.core.rmem_default, 208 KiB on
// Debian: about 90 datagrams of 1316 bytes, 120 ms of the 8 Mbit/s feed), and a starved
// process (a full `make test` on two cores) leaves it unread for longer: the kernel then drops
// datagrams before libsrt sees them, which no SRT retransmission can recover, and the
// receiver under test times out short of the clip. Each write therefore first waits until the
// socket holds less than half its buffer (its rx_queue in /proc/net/udp), so that everything
// fed reaches libsrt, only later when the tool lags; where the queue cannot be read it writes
// at once.
type inputFeed struct {
	net.Conn
	ctx   context.Context
	port  int
	limit int64 // bytes queued at which a write waits
}

func (f inputFeed) Write(b []byte) (int, error) {
	for {
		q, _, ok := udpSocketStats(f.port)
		if !ok || q < f.limit {
			break
		}
		t := time.NewTimer(time.Millisecond)
		select {
		case <-f.ctx.Done():
			t.Stop()
			return 0, f.ctx.Err()
		case <-t.C:
		}
	}
	return f.Conn.Write(b)
}

// udpRmemDefault is the receive buffer a UDP socket gets without SO_RCVBUF
// (net.core.rmem_default), 212992 where it cannot be read.
func udpRmemDefault() int64 {
	if n, err := procfs.RmemDefault(); err == nil {
		return n
	}
	return 212992
}

// udpSocketStats returns the receive queue (bytes counted against the receive buffer) and the
// drops (datagrams the kernel discarded, mostly for a full receive buffer) of the UDP socket
// bound to local port port; ok is false where it cannot be read or there is no such socket.
func udpSocketStats(port int) (queued, drops int64, ok bool) {
	s, ok, err := procfs.UDPSocket(port)
	if err != nil || !ok {
		return 0, 0, false
	}
	return s.RxQueue, s.Drops, true
}

// feedUDP sends the chunks to srt-live-transmit's UDP input on loopback port port, paced
// (udpDial); it may run on its own goroutine (it reports with t.Error).
func feedUDP(ctx context.Context, t testing.TB, port int, cs [][]byte, bitrate int) {
	c, err := udpDial(ctx, port)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	if err := pace(ctx, cs, bitrate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil && ctx.Err() == nil {
		t.Error(err)
	}
}

// readAll reads messages from c until want bytes arrived, an error, or ctx ends.
func readAll(ctx context.Context, c *Conn, want int) ([][]byte, error) {
	var got [][]byte
	n := 0
	buf := make([]byte, 2048)
	for n < want {
		dl, _ := ctx.Deadline()
		_ = c.SetReadDeadline(dl)
		k, err := c.Read(buf)
		if err != nil {
			return got, err
		}
		got = append(got, append([]byte(nil), buf[:k]...))
		n += k
	}
	return got, nil
}

// sendReady is the first half of a mux round, run by hand: it serves the connections that are
// ready now and sends what they made in one batch, leaving the due timers alone. It returns
// the round's time.
func sendReady(m *mux) int64 {
	now := m.now()
	list := m.clk.takeReady()
	for _, c := range list {
		m.serve(c, now)
	}
	m.clk.giveBack(list)
	_ = m.cout.flush(m.tr)
	return now
}

// accept accepts the next connection on ln within ctx, failing the test otherwise; the
// connection is closed when the test ends.
func accept(ctx context.Context, t testing.TB, ln *Listener) (*Conn, *Request) {
	t.Helper()
	c, req, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, req
}

// relayClip feeds clip to the UDP input port in of srt-live-transmit at interopRate, once
// settle has passed (it reads its input only once connected), and checks that c receives
// the same messages; what names the path in failures.
func relayClip(ctx context.Context, t testing.TB, c *Conn, in int, clip [][]byte, settle time.Duration, what string) {
	t.Helper()
	time.Sleep(settle)
	drops := udpRcvbufErrors(t)
	_, inDrops, _ := udpSocketStats(in)
	go feedUDP(ctx, t, in, clip, interopRate)
	got, err := readAll(ctx, c, len(bytes.Join(clip, nil)))
	if err != nil {
		// Where the missing messages went: lost on the UDP hop into libsrt (the drops of its
		// input socket, and the host's receive-buffer drops) or on the SRT link (our
		// receiver's counts).
		st := c.Stats()
		_, inDrops2, _ := udpSocketStats(in)
		t.Fatalf("%s: after %d of %d messages: %v (ours: %d received, %d lost, %d dropped, %d belated; "+
			"dropped at srt-live-transmit's UDP input: %d; UDP receive-buffer drops on the host meanwhile: %d)",
			what, len(got), len(clip), err, st.PktRecvUniq, st.PktRecvLoss, st.PktRecvDrop, st.PktRecvBelated,
			inDrops2-inDrops, udpRcvbufErrors(t)-drops)
	}
	sameMessages(t, got, clip)
}

// sameMessages checks that got are exactly want, in order.
func sameMessages(t testing.TB, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d of %d differs", i, len(want))
		}
	}
}

// waitBytes polls s's stdout until it has n bytes or d passes.
func waitBytes(t testing.TB, s *slt, n int, d time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out := s.stdout()
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func udpPort(t testing.TB) int { return testutil.FreePort(t) }

// loopbackUDP returns a UDP socket on a free loopback port, closed when the test ends.
func loopbackUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return pc
}

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// discardLog returns a logger that drops everything.
func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// dumpConn logs a connection's internal state, for a test that failed.
func dumpConn(t testing.TB, name string, c *Conn) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	// The clock fields are the clock's, under its lock (taken after c.mu, as the stack does).
	c.m.clk.mu.Lock()
	hidx, due, ready := c.hidx, c.clkDue, c.inReady
	c.m.clk.mu.Unlock()
	r, s := &c.rcv, &c.snd
	first := -1
	if r.buf.count > 0 {
		first = r.buf.firstPresent(r.span())
	}
	t.Logf("%s: state %d err %v now %d | rcv start %d next %d held %d first-present %d loss %d (first %v) lastAck %d acked %d nextACK %d nextNAK %d | snd start %d sentEnd %d end %d loss %d lastAckAt %d rexmitN %d fw %d nextSendAt %d | rtt %d/%d | clock idx %d due %d ready %v | %+v",
		name, c.state, c.err, c.m.now(), r.buf.start, r.next, r.buf.count, first, r.loss.len(), r.loss.r[:min(len(r.loss.r), 3)],
		r.lastAck, r.lastAckAcked, r.nextACK, r.nextNAK, s.buf.start, s.sentEnd, s.buf.end(), s.loss.len(), s.lastAckAt, s.rexmitN,
		s.flowWindow, s.nextSendAt, c.rtt, c.rttVar, hidx, due, ready, c.st)
}

// dialAccepted dials ln with cfg and returns the caller's connection and the one ln accepted;
// both are closed when the test ends.
func dialAccepted(ctx context.Context, t testing.TB, ln *Listener, cfg Config) (caller, accepted *Conn) {
	t.Helper()
	caller, err := Dial(ctx, ln.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caller.Close() })
	accepted, _, err = ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = accepted.Close() })
	return caller, accepted
}

// udpRcvbufErrors is the host's count of UDP datagrams dropped for a full receive buffer; 0,
// logged, where it cannot be read.
func udpRcvbufErrors(t testing.TB) int64 {
	n, err := procfs.UDPRcvbufErrors()
	if err != nil {
		t.Log(err)
	}
	return n
}

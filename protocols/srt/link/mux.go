package link

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// Batch sizes of a listener's socket, which serves many connections: the read loop answers
// at most two datagrams per datagram read (an ACKACK or NAK, a light ACK); the clock flushes
// whenever its outbox fills. A caller's socket serves one connection and gets smaller ones.
const (
	readOutboxSize  = 2 * readBatchSize
	clockOutboxSize = 64

	callerReadBatch  = 8
	callerOutboxSize = 16
)

// mux owns one UDP socket and everything on it: the read loop that demultiplexes datagrams
// to connections by destination socket id, and the clock goroutine that runs every
// connection's timers and sends. A listener has one; each caller connection has its own.
type mux struct {
	tr  transport
	log *slog.Logger
	t0  time.Time
	ln  *Listener              // nil for a caller's socket
	dl  atomic.Pointer[dialer] // a caller's handshake in progress

	mu     sync.Mutex
	conns  map[uint32]*Conn
	closed bool

	clk  *clock
	done chan struct{}
	wg   sync.WaitGroup

	readBatch int     // datagrams per read
	rout      *outbox // the read loop's
	sendMu    sync.Mutex
	cout      *outbox // the clock's, or a flushing Batch's (under sendMu)

	// Readers whose too-late drop waits for the read loop to catch up (see Conn.tooLateLocked)
	// wait on lagCh, closed the next time the loop finds the socket empty.
	lagMu     sync.Mutex
	lagCh     chan struct{}
	lagWanted atomic.Bool

	// nowFunc replaces the clock in tests that drive a mux in virtual time; nil in production.
	nowFunc func() int64
	// served is called by serve after each service of a connection, in tests that interleave
	// the read loop's work there; nil in production.
	served func(*Conn)

	dropped atomic.Uint64 // datagrams ignored: malformed, unknown socket, wrong source
	logMu   sync.Mutex
	lastLog time.Time
}

func newMux(tr transport, log *slog.Logger, caller bool) *mux {
	m := &mux{
		tr:        tr,
		log:       log,
		t0:        time.Now(),
		conns:     make(map[uint32]*Conn),
		clk:       newClock(),
		done:      make(chan struct{}),
		readBatch: readBatchSize,
		rout:      newOutbox(readOutboxSize),
		cout:      newOutbox(clockOutboxSize),
	}
	if caller {
		m.readBatch = callerReadBatch
		m.rout, m.cout = newOutbox(2*callerReadBatch), newOutbox(callerOutboxSize)
	}
	tr.setIdleHook(m.caughtUp)
	return m
}

// now returns the mux clock: microseconds since the mux started (monotonic).
func (m *mux) now() int64 {
	if m.nowFunc != nil {
		return m.nowFunc()
	}
	return int64(time.Since(m.t0) / time.Microsecond)
}

// lagWait returns a channel closed once the read loop next finds the socket empty, with
// everything it read before handled.
func (m *mux) lagWait() <-chan struct{} {
	m.lagMu.Lock()
	defer m.lagMu.Unlock()
	if m.lagCh == nil {
		m.lagCh = make(chan struct{})
		m.lagWanted.Store(true)
	}
	return m.lagCh
}

// caughtUp runs on the read loop each time it finds the socket empty: it wakes the readers
// that wait for it.
func (m *mux) caughtUp() {
	if !m.lagWanted.Load() {
		return
	}
	m.lagMu.Lock()
	if m.lagCh != nil {
		close(m.lagCh)
		m.lagCh = nil
	}
	m.lagWanted.Store(false)
	m.lagMu.Unlock()
}

func (m *mux) start() {
	m.wg.Add(2)
	go m.readLoop()
	go m.clockLoop()
}

// close closes the socket and waits for the mux's goroutines.
func (m *mux) close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return
	}
	m.closed = true
	m.mu.Unlock()
	close(m.done)
	_ = m.tr.close()
	m.wg.Wait()
}

func (m *mux) isClosed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// newSocketID returns a random socket id, unused on this mux (under m.mu).
func (m *mux) newSocketIDLocked() uint32 {
	var b [4]byte
	for {
		_, _ = rand.Read(b[:])
		id := binary.BigEndian.Uint32(b[:]) & 0x3FFFFFFF
		if _, taken := m.conns[id]; id != 0 && !taken && (m.ln == nil || id != m.ln.id) && (m.dl.Load() == nil || id != m.dl.Load().id) {
			return id
		}
	}
}

func (m *mux) lookup(id uint32) *Conn {
	m.mu.Lock()
	c := m.conns[id]
	m.mu.Unlock()
	return c
}

// remove forgets c.
func (m *mux) remove(c *Conn) {
	m.clk.forget(c)
	m.mu.Lock()
	if m.conns[c.id] == c {
		delete(m.conns, c.id)
	}
	m.mu.Unlock()
	if m.ln != nil {
		m.ln.forget(c)
	}
}

// logf logs a socket-level problem at most once a second.
func (m *mux) logLimited(msg string, args ...any) {
	m.logMu.Lock()
	now := time.Now()
	if now.Sub(m.lastLog) < time.Second {
		m.logMu.Unlock()
		return
	}
	m.lastLog = now
	m.logMu.Unlock()
	m.log.Warn(msg, args...)
}

func (m *mux) readLoop() {
	defer m.wg.Done()
	ps := make([]*packet, m.readBatch)
	for i := range ps {
		ps[i] = getPacket()
	}
	defer func() {
		for _, p := range ps {
			putPacket(p)
		}
	}()
	for {
		n, err := m.tr.readBatch(ps)
		if err != nil {
			if m.isClosed() || errors.Is(err, net.ErrClosed) {
				return
			}
			m.logLimited("srt socket read failed", "addr", m.tr.localAddr(), "err", err)
			select {
			case <-m.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		now := m.now()
		for i := range n {
			if m.handle(ps[i], now, m.rout) {
				ps[i] = getPacket()
			}
		}
		if err := m.rout.flush(m.tr); err != nil && !m.isClosed() {
			m.logLimited("srt socket write failed", "addr", m.tr.localAddr(), "err", err)
		}
	}
}

// handle dispatches one datagram; it reports whether a connection kept p.
func (m *mux) handle(p *packet, now int64, out *outbox) bool {
	b := p.buf[:p.n]
	if len(b) < wire.HeaderSize {
		m.dropped.Add(1)
		return false
	}
	dest := binary.BigEndian.Uint32(b[12:16])
	isCtrl := b[0]&0x80 != 0
	hs := isCtrl && b[0] == 0x80 && b[1] == 0 // control type 0: handshake
	var c *Conn
	if dest != 0 {
		c = m.lookup(dest)
	}
	if c == nil {
		d := m.dl.Load()
		switch {
		case hs && m.ln != nil:
			m.ln.handshake(p, now, out)
		case d != nil && d.wants(dest, hs):
			if !d.deliver(b, hs, p.from, now) {
				m.dropped.Add(1)
			}
		default:
			m.dropped.Add(1)
		}
		return false
	}
	if p.from != c.peer {
		m.dropped.Add(1)
		return false
	}
	if !isCtrl {
		return c.onData(p, now, out)
	}
	var ctl wire.Control
	if wire.ParseControl(b, &ctl) != nil {
		return false
	}
	if c.onControl(&ctl, now, out) {
		m.remove(c)
	}
	return false
}

// onControl handles a control packet for c; it reports whether c broke.
func (c *Conn) onControl(ctl *wire.Control, now int64, out *outbox) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateConnected {
		return false
	}
	c.lastRecv = now
	c.heard.Store(now)
	switch ctl.Type {
	case wire.CtrlACK:
		c.onACK(ctl, now, out)
	case wire.CtrlNAK:
		c.onNAK(ctl)
	case wire.CtrlACKACK:
		c.onACKACK(ctl, now)
	case wire.CtrlDropReq:
		c.onDropReq(ctl)
	case wire.CtrlShutdown:
		return c.breakLocked(io.EOF)
	case wire.CtrlUser:
		c.onUser(ctl, now, out)
	case wire.CtrlPeerError:
		c.log.Warn("srt peer reported an error", "code", ctl.Info)
	case wire.CtrlHandshake:
		c.onHandshake(ctl, now, out)
	}
	// Keep-alive, congestion warning, and a handshake repeated after the connection was made
	// (but for a rendezvous peer's) need nothing more than lastRecv.
	return false
}

// onHandshake answers a rendezvous peer that repeats its wave-a-hand or conclusion after we
// connected: it missed our agreement, and gets it again, as libsrt answers. One answer a
// datagram, no larger than it.
func (c *Conn) onHandshake(ctl *wire.Control, now int64, out *outbox) {
	var hs wire.Handshake
	if !c.rdv || out.room() == 0 || wire.ParseHandshake(ctl.CIF, &hs) != nil ||
		(hs.Type != wire.HSWaveAHand && hs.Type != wire.HSConclusion) {
		return
	}
	b := append(out.buf(), c.hsResp...)
	binary.BigEndian.PutUint32(b[8:12], c.ts(now))
	out.commit(b, c.peerUDP, c.peer)
}

func (m *mux) clockLoop() {
	defer m.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-m.clk.wake:
		case <-timer.C:
		}
		m.sendMu.Lock()
		m.round(m.now())
		m.sendMu.Unlock()
		d := m.clk.next(m.now())
		if d < 0 {
			d = time.Hour
		}
		timer.Reset(d)
	}
}

// round serves the ready connections and those due at now, and sends what they made. The
// caller holds sendMu: the clock goroutine, or a Batch flushing from its writer's goroutine.
func (m *mux) round(now int64) {
	list := m.clk.takeReady()
	for _, c := range list {
		m.serve(c, now)
	}
	m.clk.giveBack(list)
	for {
		c := m.clk.popDue(now)
		if c == nil {
			break
		}
		m.serve(c, now)
	}
	if err := m.cout.flush(m.tr); err != nil && !m.isClosed() {
		m.logLimited("srt socket write failed", "addr", m.tr.localAddr(), "err", err)
	}
}

// minRoom is the outbox room the clock wants before serving a connection: its control
// packets (ACK, NAK, keep-alive, drop request, KM) and a few data packets.
const minRoom = 8

func (m *mux) serve(c *Conn, now int64) {
	for {
		if m.cout.room() < minRoom {
			if err := m.cout.flush(m.tr); err != nil && !m.isClosed() {
				m.logLimited("srt socket write failed", "addr", m.tr.localAddr(), "err", err)
			}
		}
		// service sets c's next time on the clock itself, under c.mu.
		full, _, broke := c.service(now, m.cout)
		if m.served != nil {
			m.served(c)
		}
		if broke {
			m.remove(c)
			return
		}
		if !full {
			return
		}
	}
}

func randRead(b []byte) { _, _ = rand.Read(b) }

package link

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// FuzzListener feeds a listener arbitrary datagram sequences through the in-memory path (no
// socket, no goroutine), with the clock run between datagrams. The input is a sequence of
// records: a byte of flags, a byte of time step (milliseconds), two bytes of length, then the
// datagram. The harness fills in what a fuzzer cannot guess: a conclusion gets the valid
// cookie, and a datagram to a non-zero socket id goes to one of the connections. The
// listener must not panic, and its state stays bounded.
func FuzzListener(f *testing.F) {
	for _, seq := range fuzzSeeds(f) {
		f.Add(seq)
	}
	f.Fuzz(func(t *testing.T, in []byte) { runListenerInput(t, in, true) })
}

// runListenerInput runs one fuzz input; it returns the most connections seen at once.
func runListenerInput(t *testing.T, in []byte, closeAll bool) int {
	{
		rc, err := Config{MaxConns: 3, RecvBuffer: 64 * 1316, SendBuffer: 64 * 1316, Latency: 50e6}.resolve()
		if err != nil {
			t.Fatal(err)
		}
		rc.Log = discardLog()
		tr := &memTransport{}
		l := newListener(tr, rc, func(r *Request) Reject {
			if strings.HasPrefix(r.StreamID(), "no") {
				return RejectXForbidden
			}
			return RejectNone
		})
		m := l.m
		most := 0
		peers := [2]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5000"), netip.MustParseAddrPort("[::1]:6000")}
		now := int64(1_000_000)
		p := new(packet)
		out := newOutbox(readOutboxSize)
		payloadsBefore, queuedBefore := livePayloads.Load(), liveQueued.Load()
		var written uint64
		for records := 0; len(in) >= 4 && records < maxFuzzRecords; records++ {
			var flags byte
			flags, in = nextFuzzRecord(in, p, &now)
			p.from = peers[flags&1]
			b := p.buf[:p.n]
			if p.n >= wire.HeaderSize+wire.HandshakeCIFLen && b[0] == 0x80 && b[1] == 0 &&
				binary.BigEndian.Uint32(b[wire.HeaderSize+20:]) == uint32(wire.HSConclusion) && flags&2 == 0 {
				binary.BigEndian.PutUint32(b[wire.HeaderSize+28:], l.cookie(p.from, now/cookieBucket))
			}
			if p.n >= wire.HeaderSize && flags&4 != 0 {
				if c := anyConn(m, int(flags>>4)); c != nil {
					binary.BigEndian.PutUint32(b[12:16], c.id)
					p.from = c.peer
				}
			}
			checkSharedOut(t, out)
			out.reset()
			if m.handle(p, now, out) {
				p = new(packet)
			}
			// One shared payload for every connection, so that the input's ACKs, NAKs, drop
			// requests and shutdowns work on references.
			if cs := conns(m); len(cs) > 0 {
				pl := newPayload(fuzzPayload(written))
				written++
				for _, c := range cs {
					_, _ = c.WriteShared(pl)
				}
				pl.Release()
			}
			for _, c := range conns(m) {
				_, _, broke := c.service(now, out)
				if broke {
					m.remove(c)
				}
				if flags&8 != 0 {
					readNow(c)
				}
			}
			checkBounded(t, l)
			most = max(most, len(conns(m)))
		}
		if closeAll {
			for _, c := range conns(m) {
				// Close would linger for unacknowledged packets; end at once.
				c.breakConn(ErrClosed)
				c.mu.Lock()
				c.rcv.buf.release()
				c.mu.Unlock()
			}
			checkSharedOut(t, out)
			out.reset()
			if pl, q := livePayloads.Load()-payloadsBefore, liveQueued.Load()-queuedBefore; pl != 0 || q != 0 {
				t.Fatalf("after every connection ended: %d payloads and %d queued packets still live", pl, q)
			}
		}
		return most
	}
}

// fuzzPayload is the k-th payload the harness writes: k in its first 8 bytes, then 8 to 39
// bytes of k's low byte, so that a payload changed while a datagram refers to it shows.
func fuzzPayload(k uint64) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 48), k)
	for range 8 + k%32 {
		b = append(b, byte(k))
	}
	return b
}

// checkSharedOut fails unless every data datagram in out refers to a payload the outbox holds
// a reference on, with the bytes fuzzPayload made.
func checkSharedOut(t *testing.T, out *outbox) {
	for i := range out.n {
		pl := out.held[i]
		if pl == nil {
			continue
		}
		b := out.payload(i)
		if pl.refs.Load() < 1 || len(b) < 16 || &b[0] != &pl.b[0] {
			t.Fatalf("datagram %d: payload of %d bytes with %d references", i, len(b), pl.refs.Load())
		}
		k := binary.BigEndian.Uint64(b)
		for _, x := range b[8:] {
			if x != byte(k) || len(b) != int(16+k%32) {
				t.Fatalf("datagram %d: payload %d changed: % x", i, k, b)
			}
		}
	}
}

// TestFuzzSeedsReachConnections checks that the harness gets the libsrt session past the
// cookie: connections exist and receive the data packets.
func TestFuzzSeedsReachConnections(t *testing.T) {
	seeds := fuzzSeedsFrom(t)
	if most := runListenerInput(t, seeds[0], true); most == 0 {
		t.Fatal("the libsrt session seed made no connection")
	}
}

// maxFuzzRecords bounds the datagrams of one fuzz input.
const maxFuzzRecords = 256

// nextFuzzRecord reads the record at the start of in (at least 4 bytes): its datagram into p,
// its time step added to now. It returns the record's flags and the rest of the input.
func nextFuzzRecord(in []byte, p *packet, now *int64) (flags byte, rest []byte) {
	flags, step, n := in[0], in[1], int(binary.BigEndian.Uint16(in[2:4]))
	in = in[4:]
	n = min(n, len(in), len(p.buf))
	*now += int64(step) * 1000
	p.n = copy(p.buf[:], in[:n])
	return flags, in[n:]
}

// readNow delivers what Read would deliver at once, without waiting.
func readNow(c *Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.m.now()
	c.tooLateLocked(now)
	for {
		pk := c.rcv.buf.at(0)
		if pk == nil || now < c.due(pk) {
			return
		}
		c.rcv.buf.pop()
		c.rcv.bufBytes -= pk.n - wire.HeaderSize
		putPacket(pk)
	}
}

func conns(m *mux) []*Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Conn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	return out
}

func anyConn(m *mux, i int) *Conn {
	cs := conns(m)
	if len(cs) == 0 {
		return nil
	}
	return cs[i%len(cs)]
}

func checkBounded(t *testing.T, l *Listener) {
	m := l.m
	m.mu.Lock()
	n, peers := len(m.conns), len(l.byPeer)
	m.mu.Unlock()
	if n > l.cfg.MaxConns || peers > n || len(l.accepts) > cap(l.accepts) {
		t.Fatalf("%d connections (max %d), %d peers", n, l.cfg.MaxConns, peers)
	}
	for _, c := range conns(m) {
		c.mu.Lock()
		r, s := &c.rcv, &c.snd
		if r.buf.count > r.buf.limit || len(r.buf.slots) > 2*pow2(r.buf.limit) || r.loss.len() > r.buf.limit ||
			s.buf.n > s.buf.limit || s.loss.len() > s.buf.n || r.span() > r.buf.limit+1 {
			t.Fatalf("unbounded connection state: rcv %d/%d slots %d loss %d span %d, snd %d/%d loss %d",
				r.buf.count, r.buf.limit, len(r.buf.slots), r.loss.len(), r.span(), s.buf.n, s.buf.limit, s.loss.len())
		}
		c.mu.Unlock()
	}
}

// fuzzSeeds makes input sequences from the libsrt datagrams captured for the wire package's
// fuzz targets: a whole session (induction, conclusion, data, ACKs, NAKs, shutdown) and each
// packet kind after a handshake.
func fuzzSeeds(f *testing.F) [][]byte { return fuzzSeedsFrom(f) }

func fuzzSeedsFrom(f testing.TB) [][]byte {
	dir := filepath.Join("..", "wire", "testdata", "fuzz", "FuzzParsePacket")
	ents, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	var hs, other [][]byte
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		d, ok := parseCorpusBytes(string(b))
		if !ok {
			continue
		}
		if strings.Contains(e.Name(), "handshake") {
			hs = append(hs, d)
		} else {
			other = append(other, d)
		}
	}
	rec := func(flags, step byte, d []byte) []byte {
		r := []byte{flags, step, byte(len(d) >> 8), byte(len(d))}
		return append(r, d...)
	}
	var session []byte
	for _, d := range hs {
		session = append(session, rec(0, 1, d)...)
	}
	seeds := [][]byte{session}
	for i, d := range other {
		seeds = append(seeds, append(append([]byte(nil), session...), rec(4|8, byte(i), d)...))
	}
	return seeds
}

// parseCorpusBytes reads a "go test fuzz v1" file holding one []byte.
func parseCorpusBytes(s string) ([]byte, bool) {
	const head = "go test fuzz v1\n[]byte(\""
	if !strings.HasPrefix(s, head) {
		return nil, false
	}
	s = strings.TrimSuffix(strings.TrimSpace(s[len(head):]), "\")")
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			var v byte
			for _, c := range s[i+2 : i+4] {
				v <<= 4
				switch {
				case c >= '0' && c <= '9':
					v |= byte(c - '0')
				case c >= 'a' && c <= 'f':
					v |= byte(c-'a') + 10
				}
			}
			out = append(out, v)
			i += 3
			continue
		}
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		out = append(out, s[i])
	}
	return out, true
}

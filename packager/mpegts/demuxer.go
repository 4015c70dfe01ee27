package mpegts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// readBufferSize holds a whole UDP datagram, so a Demuxer can read a packet connection.
const readBufferSize = 64 << 10

// Probe limits: tracks are announced once every stream of the program is ready, or once one
// is and the probe has seen this much media; until then units wait in a bounded queue.
const (
	probeMaxDuration = 5 * clock90k
	probeMaxBytes    = 8 << 20
	probeMaxUnits    = 4096
)

// Stats counts what a Demuxer skipped or dropped on a damaged input.
type Stats struct {
	// SkippedBytes were outside packets (resynchronisation on the 0x47 sync byte).
	SkippedBytes int64
	// BadPackets had a transport error, scrambling or an invalid header, or carried an
	// invalid PAT or PMT section.
	BadPackets int64
	// CCErrors are continuity counter gaps: packets lost upstream.
	CCErrors int64
	// DroppedPES were PES packets lost to a gap, too large, or with a bad header.
	DroppedPES int64
	// DroppedUnits were units dropped: malformed or unusable audio frames, and units queued
	// while the probe waited for a track that never became ready.
	DroppedUnits int64
	// IncompletePES were PES packets still open at the end of the stream and dropped, never
	// emitted: at Flush those shorter than their declared length, at Cut every open one.
	IncompletePES int64
}

// Demuxer reads an MPEG-TS byte stream and yields its tracks, then its access units. It reads
// from an io.Reader (a TCP or SRT connection, an HTTP body, a UDP socket: each Read may be a
// datagram of up to 64 KiB) or, when created with a nil reader, takes bytes pushed with Write.
// Bytes need not be packet-aligned; garbage is skipped. A Demuxer is not safe for concurrent
// use.
type Demuxer struct {
	r      io.Reader
	rbuf   []byte
	carry  [PacketSize]byte
	carryN int
	locked bool // the previous packet ended where a sync byte followed

	pat     sectionAssembler
	pmt     sectionAssembler
	program uint16
	pmtPID  int // -1 until the PAT names it
	pmtSig  []pmtStream
	pmtTmp  []pmtStream
	streams []*esStream
	clock   unwrapper
	// pesHeld is the capacity of the streams' reassembly buffers, in bytes (maxHeldPES).
	pesHeld int

	tracks       []media.Track
	final        bool
	pending      []pendingUnit
	pendingBytes int
	probeStart   int64
	probeLast    int64
	probing      bool

	queue []*media.AccessUnit
	head  int
	err   error // fatal: the program cannot be carried or changed
	rerr  error // the reader's error, returned once the queue is empty
	stats Stats
	now   time.Time
}

type pendingUnit struct {
	s  *esStream
	au *media.AccessUnit
}

// NewDemuxer returns a Demuxer that reads from r, or one that takes pushed bytes when r is nil.
func NewDemuxer(r io.Reader) *Demuxer {
	d := &Demuxer{r: r, pmtPID: -1}
	if r != nil {
		d.rbuf = make([]byte, readBufferSize)
	}
	return d
}

// Tracks returns the program's tracks once the PMT and every stream's parameters are known
// (video parameter sets with the size, the AAC configuration, the MP3 header), reading as
// needed. Streams of codecs this package does not carry are left out. In push mode it returns
// ErrNeedMore until the written bytes are enough.
func (d *Demuxer) Tracks() ([]media.Track, error) {
	for !d.final {
		if d.err != nil {
			return nil, d.err
		}
		if d.rerr != nil {
			return nil, fmt.Errorf("mpegts: stream ended before its tracks were known: %w", d.rerr)
		}
		if d.r == nil {
			return nil, ErrNeedMore
		}
		d.fill()
	}
	return d.tracks, nil
}

// Read returns the next access unit, reading as needed. It returns the reader's error (io.EOF
// at the end) once every buffered unit was returned, and ErrNeedMore in push mode when the
// written bytes hold no further unit. Units are shared read-only once returned.
func (d *Demuxer) Read() (*media.AccessUnit, error) {
	if _, err := d.Tracks(); err != nil {
		return nil, err
	}
	for {
		if d.head < len(d.queue) {
			au := d.queue[d.head]
			d.queue[d.head] = nil
			d.head++
			return au, nil
		}
		d.queue, d.head = d.queue[:0], 0
		if d.err != nil {
			return nil, d.err
		}
		if d.rerr != nil {
			return nil, d.rerr
		}
		if d.r == nil {
			return nil, ErrNeedMore
		}
		d.fill()
	}
}

// Write pushes bytes of the transport stream into a Demuxer created with a nil reader; the
// units they complete are returned by Read, which the caller drains (until ErrNeedMore) after
// each Write: the queue of decoded units is not bounded. It never fails.
func (d *Demuxer) Write(p []byte) (int, error) {
	d.feed(p)
	return len(p), nil
}

// Flush ends a pushed stream that ended whole (a file, an HLS segment): a PES packet still
// open without a declared length ends here and is emitted; one shorter than its declared
// length is incomplete and dropped (Stats.IncompletePES). Read then returns the last units.
func (d *Demuxer) Flush() { d.end(false) }

// Cut ends a pushed stream that was cut off (a publisher that dropped, a connection lost):
// every PES packet still open is dropped and counted in Stats.IncompletePES. A PES without
// a declared length (video, ISO/IEC 13818-1 2.4.3.7) is only known to be whole when the next
// one of its stream starts, so the last one of a cut session cannot be proved whole; one with
// a declared length that was all received was emitted already. Read then returns the last
// whole units.
func (d *Demuxer) Cut() { d.end(true) }

// end completes or drops the PES packets still open, then announces the tracks if the probe
// was still going on.
func (d *Demuxer) end(cut bool) {
	for _, s := range d.streams {
		if !s.open {
			continue
		}
		if cut || s.want > 0 && len(s.pes) < s.want {
			s.open = false
			d.stats.IncompletePES++
			continue
		}
		d.completePES(s)
	}
	if !d.final {
		d.finalize()
	}
}

// Stats returns the counts of skipped and dropped data so far.
func (d *Demuxer) Stats() Stats { return d.stats }

// fill reads once from the reader and parses what came.
func (d *Demuxer) fill() {
	n, err := d.r.Read(d.rbuf)
	if n > 0 {
		d.feed(d.rbuf[:n])
	}
	if err != nil {
		// io.EOF ends a whole stream (a file, a pipe that was closed); any other error cut it.
		d.end(!errors.Is(err, io.EOF))
		d.rerr = err
	}
}

// feed splits bytes into packets, resynchronising on the sync byte.
func (d *Demuxer) feed(p []byte) {
	d.now = time.Now()
	for len(p) > 0 {
		if d.carryN > 0 {
			k := copy(d.carry[d.carryN:], p)
			d.carryN += k
			p = p[k:]
			if d.carryN < PacketSize {
				return
			}
			d.carryN = 0
			d.handlePacket(d.carry[:])
			d.locked = len(p) > 0 && p[0] == syncByte
			continue
		}
		if p[0] != syncByte {
			d.locked = false
			i := bytes.IndexByte(p, syncByte)
			if i < 0 {
				d.stats.SkippedBytes += int64(len(p))
				return
			}
			d.stats.SkippedBytes += int64(i)
			p = p[i:]
		}
		if len(p) < PacketSize {
			d.carryN = copy(d.carry[:], p)
			return
		}
		// After a loss of sync, trust a sync byte only when the next packet starts with one.
		if !d.locked && len(p) > PacketSize && p[PacketSize] != syncByte {
			d.stats.SkippedBytes++
			p = p[1:]
			continue
		}
		d.locked = true
		d.handlePacket(p[:PacketSize])
		p = p[PacketSize:]
	}
}

func (d *Demuxer) handlePacket(b []byte) {
	pkt, err := parsePacket(b)
	if err != nil {
		d.stats.BadPackets++
		return
	}
	switch {
	case pkt.pid == pidPAT:
		d.pat.push(pkt, d.onPAT)
	case int(pkt.pid) == d.pmtPID:
		d.pmt.push(pkt, d.onPMT)
	case pkt.pid == pidNull:
	default:
		for _, s := range d.streams {
			if s.pid == pkt.pid {
				d.onStreamPacket(s, pkt)
				return
			}
		}
	}
}

// emit hands a unit to the queue, or to the probe queue until the tracks are known.
func (d *Demuxer) emit(s *esStream, au *media.AccessUnit) {
	au.Arrival = d.now
	if d.final {
		if s.trackID >= 0 {
			au.Track = s.trackID
			d.queue = append(d.queue, au)
		}
		return
	}
	d.pending = append(d.pending, pendingUnit{s: s, au: au})
	d.pendingBytes += au.Size()
}

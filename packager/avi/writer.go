package avi

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Until the video frame duration is known, units wait in memory: until this many video
// frames, this much media, this many units, or this many payload bytes (32 MiB: 5 s of a
// 50 Mbit/s stream, so that units whose timestamps hardly advance cannot pile up).
const (
	probeFrames   = 9
	probeDuration = 2 * time.Second
	probeUnits    = 1024
	probeBytes    = 32 << 20
)

// maxGap is the longest timestamp jump a stream fills (video with empty chunks, audio with
// silent frames); a longer one, or a jump back, restarts the stream's timeline at its next
// chunk.
const maxGap = 10 * time.Second

// Writer writes an AVI file progressively: each chunk is written as its unit comes, so that a
// crash loses at most the last one (Repair restores the rest), and the header's sizes, lengths
// and indexes are patched when a RIFF segment ends and at Close. A Writer is not safe for
// concurrent use.
type Writer struct {
	w       io.WriteSeeker
	limit   int64
	streams []*stream
	ids     []fourCC
	lay     layout
	tot     []totals

	pos       int64 // where the next chunk goes: the bytes written so far
	segStart  int64 // offset of the current RIFF
	moviStart int64 // offset of the current movi LIST
	first     bool  // the current segment is the first RIFF
	seg       []entry

	started bool
	pending []*media.AccessUnit
	scratch []int64
	buf     []byte
	ibuf    []byte
	closed  bool
	err     error // a failed write: the file is in an unknown state

	pendingBytes int // payload bytes of pending
}

// NewWriter writes the header of an AVI file of the tracks at w's current position, which
// must be the start of the file. Tracks must be H.264, H.265, AAC or MP3 (ErrUnsupportedCodec
// otherwise), at most 100.
func NewWriter(w io.WriteSeeker, tracks []media.Track, opts Options) (*Writer, error) {
	if len(tracks) == 0 || len(tracks) > 100 {
		return nil, fmt.Errorf("avi: %d tracks: want 1 to 100", len(tracks))
	}
	opt.Zero(&opts.RIFFLimit, DefaultRIFFLimit)
	if opts.RIFFLimit < minRIFFLimit || opts.RIFFLimit > math.MaxUint32 {
		return nil, fmt.Errorf("avi: RIFF limit of %d bytes: want %d to %d", opts.RIFFLimit, minRIFFLimit, int64(math.MaxUint32))
	}
	wr := &Writer{w: w, limit: opts.RIFFLimit, first: true, tot: make([]totals, len(tracks))}
	for i, trk := range tracks {
		s, err := newStream(i, trk)
		if err != nil {
			return nil, err
		}
		wr.streams = append(wr.streams, s)
		wr.ids = append(wr.ids, s.id)
	}
	hdr, lay := buildHeader(wr.streams)
	wr.lay = lay
	if _, err := w.Write(hdr); err != nil {
		return nil, fmt.Errorf("avi: write %d-byte header: %w", len(hdr), err)
	}
	wr.pos = int64(len(hdr))
	wr.moviStart = wr.pos - listHeaderSize
	return wr, nil
}

// WriteUnit writes one access unit; units come in decode order, as a live stream gives them.
// The first units wait in memory until the video frame rate is known (a fraction of a
// second), so they must not be modified afterwards; later ones are written at once.
func (w *Writer) WriteUnit(au *media.AccessUnit) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if au.Track < 0 || au.Track >= len(w.streams) {
		return fmt.Errorf("avi: unit of track %d: the file has %d tracks", au.Track, len(w.streams))
	}
	if !w.started {
		w.pending = append(w.pending, au)
		w.pendingBytes += au.Size()
		if !w.probed() {
			return nil
		}
		w.err = w.start()
		return w.err
	}
	w.err = w.put(au)
	return w.err
}

// Duration returns the media written so far, the longest stream; zero while the first units
// wait for the video frame rate.
func (w *Writer) Duration() time.Duration {
	var d float64
	for _, s := range w.streams {
		d = max(d, s.seconds(s.count))
	}
	return time.Duration(d * float64(time.Second))
}

// Size returns the bytes written so far.
func (w *Writer) Size() int64 { return w.pos }

// Close writes the units still waiting, the indexes of the last RIFF segment and the header's
// totals. It does not close the underlying file; a second Close does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if !w.started {
		if err := w.start(); err != nil {
			w.err = err
			return err
		}
	}
	if err := w.finishSegment(); err != nil {
		w.err = err
		return err
	}
	w.fillTotals()
	if err := w.lay.patchHeader(w.w, w.tot, w.pos, w.ibuf); err != nil {
		w.err = err
		return err
	}
	return nil
}

// probed tells whether the waiting units tell the video frame rate, or are enough to wait.
func (w *Writer) probed() bool {
	if len(w.pending) >= probeUnits || w.pendingBytes >= probeBytes || w.pendingSpan() >= probeDuration {
		return true
	}
	video := false
	n := 0
	ms := true      // every step of the video a whole number of milliseconds
	varied := false // and the steps not all the same
	var last, first int64
	for _, au := range w.pending {
		if s := w.streams[au.Track]; s.video {
			if n > 0 {
				tick := int64(s.trk.ClockRate / 1000)
				step := au.DTS - last
				if tick == 0 || step%tick != 0 {
					ms = false
				}
				if n == 1 {
					first = step
				} else if step != first {
					varied = true
				}
			}
			video = true
			last = au.DTS
			n++
		}
	}
	if ms && varied {
		// Timed in milliseconds (RTMP, FLV): nine frames cannot tell 30 from 29.97 fps (0.1%
		// apart); the probeDuration of them can.
		return false
	}
	if !video {
		for _, s := range w.streams {
			if s.video {
				return false // the first video frame is still to come
			}
		}
		return true
	}
	return n >= probeFrames
}

// pendingSpan is the longest span of timestamps of one track among the waiting units.
func (w *Writer) pendingSpan() time.Duration {
	var span time.Duration
	for i, s := range w.streams {
		var lo, hi int64
		seen := false
		for _, au := range w.pending {
			if au.Track != i {
				continue
			}
			if !seen {
				lo, hi, seen = au.DTS, au.DTS, true
			}
			lo, hi = min(lo, au.DTS), max(hi, au.DTS)
		}
		span = max(span, time.Duration(media.Rescale(hi-lo, s.trk.ClockRate, int(time.Second))))
	}
	return span
}

// start fixes each stream's chunk duration and the common time origin from the waiting
// units, writes the rates into the header, then writes the units.
func (w *Writer) start() error {
	w.started = true
	var origin int64
	based := false
	for i, s := range w.streams {
		var dts []int64
		for _, au := range w.pending {
			if au.Track != i {
				continue
			}
			if len(dts) == 0 && len(au.Payload) > 0 {
				s.probeMP3(au.Payload[0])
			}
			dts = append(dts, au.DTS)
			ns := media.Rescale(au.DTS, s.trk.ClockRate, int(time.Second))
			if !based || ns < origin {
				origin, based = ns, true
			}
		}
		if s.video {
			s.scale, s.rate = estimateRate(dts, s.trk.ClockRate, w.scratch)
		}
	}
	for i, s := range w.streams {
		s.origin = media.Rescale(origin, int(time.Second), s.trk.ClockRate)
		w.tot[i].scale, w.tot[i].rate = s.scale, s.rate
	}
	if err := w.lay.patchRates(w.w, w.tot, w.pos); err != nil {
		return err
	}
	pending := w.pending
	w.pending, w.pendingBytes = nil, 0
	for _, au := range pending {
		if err := w.put(au); err != nil {
			return err
		}
	}
	return nil
}

// put writes the chunks of one unit: a video frame, or one chunk per audio frame, each after
// the empty chunks that fill a gap in its stream's timeline.
func (w *Writer) put(au *media.AccessUnit) error {
	s := w.streams[au.Track]
	if s.video {
		if err := w.align(s, au.DTS, nil); err != nil {
			return err
		}
		b := appendChunkHeader(w.buf[:0], s.id, 0)
		if au.Key && !hasParams(s.trk.Codec, au.Payload) {
			b = append(b, s.prefix...)
		}
		for _, n := range au.Payload {
			b = appendAnnexB(b, n)
		}
		w.buf = b
		return w.writeChunk(au.Track, au.Key)
	}
	for i, frame := range au.Payload {
		if err := w.align(s, au.DTS+s.ticks(int64(i))-s.origin, frame); err != nil {
			return err
		}
		w.buf = append(appendChunkHeader(w.buf[:0], s.id, 0), frame...)
		if err := w.writeChunk(au.Track, true); err != nil {
			return err
		}
	}
	return nil
}

// align fills the stream's timeline up to the slot of timestamp ts (see stream.fill), or
// restarts it at its next chunk when ts jumps too far or the gap cannot be filled. sample is
// the frame about to be written.
func (w *Writer) align(s *stream, ts int64, sample []byte) error {
	idx := w.indexOf(s)
	limit := int64(maxGap.Seconds() * float64(s.rate) / float64(s.scale))
	d := ts - s.origin
	if d > 1<<40 || d < -1<<40 {
		s.origin = ts - (s.ticks(s.count) - s.origin)
		return nil
	}
	gap := s.slot(ts) - s.count
	if gap <= 0 && gap >= -limit {
		return nil
	}
	body, ok := s.fill(sample)
	if gap > limit || gap < -limit || !ok {
		s.origin = ts - (s.ticks(s.count) - s.origin)
		return nil
	}
	for ; gap > 0; gap-- {
		w.buf = append(appendChunkHeader(w.buf[:0], s.id, 0), body...)
		if err := w.writeChunk(idx, !s.video); err != nil {
			return err
		}
	}
	return nil
}

// indexOf returns a stream's number.
func (w *Writer) indexOf(s *stream) int {
	for i, t := range w.streams {
		if t == s {
			return i
		}
	}
	return -1
}

// writeChunk fills in the size of the chunk in w.buf, pads it, and writes it, after starting
// a new RIFF segment if it would not fit in the current one with its indexes.
func (w *Writer) writeChunk(stream int, key bool) error {
	size := len(w.buf) - chunkHeaderSize
	if size > math.MaxInt32 {
		return fmt.Errorf("avi: stream %d: chunk of %d bytes", stream, size)
	}
	putLE32(w.buf[4:], uint32(size))
	if size&1 == 1 {
		w.buf = append(w.buf, 0)
	}
	n := int64(len(w.buf))
	if len(w.seg) > 0 && w.pos-w.segStart+n+indexBytes(len(w.seg)+1, len(w.streams), w.first) > w.limit {
		if err := w.nextSegment(); err != nil {
			return err
		}
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("avi: write %d-byte chunk of stream %d at %d: %w", n, stream, w.pos, err)
	}
	w.seg = append(w.seg, entry{off: w.pos, size: uint32(size), stream: uint8(stream), key: key})
	w.pos += n
	s := w.streams[stream]
	s.count++
	s.segCount++
	s.bytes += int64(size)
	s.maxChunk = max(s.maxChunk, uint32(size))
	return nil
}

// hasParams tells whether a video unit carries its own SPS.
func hasParams(c media.Codec, payload [][]byte) bool {
	for _, n := range payload {
		if nal.Classify(c, n) == nal.SPS {
			return true
		}
	}
	return false
}

// fillTotals copies the streams' counts into w.tot for the header.
func (w *Writer) fillTotals() {
	for i, s := range w.streams {
		w.tot[i] = totals{
			scale: s.scale, rate: s.rate, count: s.count, firstCount: s.firstCount,
			bytes: s.bytes, maxChunk: s.maxChunk, super: s.super,
		}
	}
}

package fmp4

import (
	"fmt"
	"math"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
)

// Fragmenter collects access units into one media fragment at a time: Add appends a unit's
// sample to reusable per-track buffers (no allocation once they have grown), Flush writes
// the fragment out and starts the next. A Fragmenter is not safe for concurrent use.
type Fragmenter struct {
	tracks []trackBuf // indexed by media track ID
	n      int        // samples in the open fragment
	bytes  int        // sample bytes in the open fragment
}

// trackBuf is one track's part of the open fragment.
type trackBuf struct {
	track   media.Track
	known   bool
	video   bool
	shift   int64 // added to every timestamp, in the track's clock
	samples []mp4.Sample
	data    []byte
	base    int64  // shifted DTS of the open fragment's first sample
	last    int64  // shifted DTS of the last sample added
	lastDur uint32 // the last duration measured between two units, 0 before two
}

// NewFragmenter returns a Fragmenter for tracks, whose IDs must be distinct and small (a
// Stream numbers them from 0).
func NewFragmenter(tracks []media.Track) (*Fragmenter, error) {
	f := &Fragmenter{}
	for _, t := range tracks {
		if t.ID < 0 || t.ID > 255 {
			return nil, fmt.Errorf("fmp4: track ID %d out of range", t.ID)
		}
		if t.ClockRate <= 0 {
			return nil, fmt.Errorf("fmp4: track %d (%s): clock rate %d: %w", t.ID, t.Codec, t.ClockRate, ErrMissingParams)
		}
		for len(f.tracks) <= t.ID {
			f.tracks = append(f.tracks, trackBuf{})
		}
		if f.tracks[t.ID].known {
			return nil, fmt.Errorf("fmp4: track ID %d given twice", t.ID)
		}
		f.tracks[t.ID] = trackBuf{track: t, known: true, video: t.Codec.IsVideo()}
	}
	return f, nil
}

// SetShift sets an amount of time added to the timestamps of the units added from now on,
// so that a timeline starting near zero (or below) stays positive in the file.
func (f *Fragmenter) SetShift(d time.Duration) {
	for i := range f.tracks {
		t := &f.tracks[i]
		t.shift = media.Rescale(int64(d), int(time.Second), t.track.ClockRate)
	}
}

// Samples returns the number of samples in the open fragment.
func (f *Fragmenter) Samples() int { return f.n }

// Size returns the sample bytes in the open fragment.
func (f *Fragmenter) Size() int { return f.bytes }

// Add appends au to the open fragment. The previous sample of its track gets its duration
// from the DTS difference. A unit whose payload is only delimiters or parameter sets adds
// nothing. It fails with ErrUnknownTrack or ErrTimestamp (wrapped) and then adds nothing.
func (f *Fragmenter) Add(au *media.AccessUnit) error {
	if au.Track < 0 || au.Track >= len(f.tracks) || !f.tracks[au.Track].known {
		return fmt.Errorf("fmp4: unit of track %d: %w", au.Track, ErrUnknownTrack)
	}
	t := &f.tracks[au.Track]
	dts := au.DTS + t.shift
	cto := au.PTS - au.DTS
	if dts < 0 || cto < math.MinInt32 || cto > math.MaxInt32 {
		return fmt.Errorf("fmp4: track %d: DTS %d PTS %d: %w", au.Track, au.DTS, au.PTS, ErrTimestamp)
	}
	off := len(t.data)
	flags := mp4.SyncSampleFlags
	if t.video {
		t.data = appendVideoSample(t.data, &t.track, au)
		if !au.Key {
			flags = mp4.SetNonSyncSampleFlags(0)
		}
	} else {
		t.data = appendAudioSample(t.data, au)
	}
	size := len(t.data) - off
	if size == 0 {
		return nil
	}
	if n := len(t.samples); n > 0 {
		t.lastDur = duration(dts - t.last)
		t.samples[n-1].Dur = t.lastDur
	} else {
		t.base = dts
	}
	t.samples = append(t.samples, mp4.Sample{Flags: flags, Size: uint32(size), CompositionTimeOffset: int32(cto)})
	t.last = dts
	f.n++
	f.bytes += size
	return nil
}

// duration clamps a DTS difference to a valid sample duration: at least one tick (the
// ingest keeps DTS increasing; equal ones would make a zero-length sample).
func duration(d int64) uint32 {
	return uint32(min(max(d, 1), math.MaxUint32))
}

// Flush writes the open fragment as sequence number seq and empties it; it returns nil when
// the fragment has no sample. next is the unit that will start the following fragment, or
// nil: the last sample of next's track lasts until next's DTS, other tracks' last samples
// repeat their previous duration.
func (f *Fragmenter) Flush(seq uint32, next *media.AccessUnit) (*Fragment, error) {
	return f.FlushTo(nil, seq, next, true)
}

// FlushTo is Flush writing the fragment after dst, as a low-latency segment's parts are
// written one after the other into one buffer: the returned Data is dst with the fragment
// appended (dst's array when it has the room), its Tracks' offsets count from the start of
// dst, and the styp box is left out unless withStyp is set (a segment's first part has it).
// Each TrackFragment's Header still starts with styp.
func (f *Fragmenter) FlushTo(dst []byte, seq uint32, next *media.AccessUnit, withStyp bool) (*Fragment, error) {
	if f.n == 0 {
		return nil, nil
	}
	for i := range f.tracks {
		t := &f.tracks[i]
		n := len(t.samples)
		if n == 0 {
			continue
		}
		d := t.lastDur
		if next != nil && next.Track == i && next.DTS+t.shift > t.last {
			d = duration(next.DTS + t.shift - t.last)
		} else if d == 0 {
			d = defaultDuration(&t.track)
		}
		t.samples[n-1].Dur = d
	}
	frag, err := f.encode(dst, seq, withStyp)
	f.empty()
	return frag, err
}

// Discard empties the open fragment without writing it.
func (f *Fragmenter) Discard() { f.empty() }

// A track's buffers are kept from one fragment to the next, unless they are over these sizes
// and more than twice what the fragment just written used: then they are let go, so that one
// oversized fragment (a burst, a hostile source) does not pin its memory for the rest of the
// stream. 4 MiB is a 16 Mbit/s track's 2 s segment, with room: at 1 MiB, a 4 Mbit/s stream
// whose 2 s segments vary around 1 MB (the SRT player bench's) had its buffer dropped after
// every large segment and grown again by doubling, 8 % of the player's CPU in growslice and
// memmove. 8192 samples are minutes of video.
const (
	keepDataBytes = 4 << 20
	keepSamples   = 8192
)

// empty starts the next fragment.
func (f *Fragmenter) empty() {
	for i := range f.tracks {
		t := &f.tracks[i]
		t.samples = reuse(t.samples, keepSamples)
		t.data = reuse(t.data, keepDataBytes)
	}
	f.n, f.bytes = 0, 0
}

// reuse returns b emptied, or nil when its capacity is over keep and more than twice its
// length.
func reuse[T any](b []T, keep int) []T {
	if c := cap(b); c > keep && c > 2*len(b) {
		return nil
	}
	return b[:0]
}

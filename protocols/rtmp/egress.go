package rtmp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/flv"
	protoingest "github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// egress writes a Stream's units to one connection as RTMP messages on one message stream:
// onMetaData and the sequence headers first, again after each discontinuity, then one tag per
// unit built by its own flv Packetizer. Timestamps start at 0 and keep increasing across
// discontinuities (media.Continuity). Make one with newEgress.
type egress struct {
	c            *conn
	streamID     uint32
	setDataFrame bool // publishing to a server: metadata goes in @setDataFrame

	pk *flv.Packetizer
	// timeline gives milliseconds from 0 that keep rising across discontinuities.
	timeline media.Continuity
	meta     []byte
	rates    []int // clock rate of each track, by ID
}

// newEgress returns an egress writing to message stream streamID of c; setDataFrame puts the
// metadata in @setDataFrame (publishing to a server).
func newEgress(c *conn, streamID uint32, setDataFrame bool) *egress {
	return &egress{c: c, streamID: streamID, setDataFrame: setDataFrame, timeline: media.Continuity{Rate: 1000, FromZero: true}}
}

// run writes units from r until ctx ends or r fails. tracks are the stream's tracks when
// known; they are read again from the stream on each discontinuity.
func (e *egress) run(ctx context.Context, r *stream.Reader, tracks []media.Track) error {
	for {
		au, err := r.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		reconfigure := e.pk == nil || au.Discontinuity
		if reconfigure {
			if cur := r.Stream().Tracks(); len(cur) > 0 || len(tracks) == 0 {
				tracks = cur
			}
			e.rates = e.rates[:0]
			for _, t := range tracks {
				e.rates = append(e.rates, t.ClockRate)
			}
		}
		ts := e.timestamp(au)
		if reconfigure {
			if err := e.configure(tracks, ts); err != nil {
				return err
			}
		}
		if err := e.write(au, ts); err != nil {
			return err
		}
	}
}

// timestamp returns the output milliseconds of au, moving the timeline on at a
// discontinuity so that it continues where the last session stopped.
func (e *egress) timestamp(au *media.AccessUnit) int64 {
	rate := 90000
	if au.Track >= 0 && au.Track < len(e.rates) {
		rate = e.rates[au.Track]
	}
	ms := media.Rescale(au.DTS, rate, 1000)
	return max(ms+e.timeline.Offset(ms, au.Discontinuity), 0)
}

// configure starts over with tracks: onMetaData and sequence headers at ts.
func (e *egress) configure(tracks []media.Track, ts int64) error {
	var carried []media.Track
	for _, t := range tracks {
		if flv.Carries(t.Codec) {
			carried = append(carried, t)
		}
	}
	if len(carried) == 0 {
		return fmt.Errorf("rtmp: no track RTMP can carry in %s", protoingest.Describe(tracks))
	}
	pk, err := flv.NewPacketizer(carried)
	if err != nil {
		return err
	}
	e.pk = pk
	e.meta = appendMetaData(e.meta[:0], e.setDataFrame, carried)
	if err := e.c.write(csidData, msgDataAMF0, e.streamID, uint32(ts), e.meta); err != nil {
		return err
	}
	seq, err := pk.SequenceHeaders(uint32(ts))
	if err != nil {
		return err
	}
	for _, t := range seq {
		if err := e.c.write(csidFor(t.Type), uint8(t.Type), e.streamID, uint32(ts), t.Body); err != nil {
			return err
		}
	}
	return nil
}

// write sends the tag of one unit; units of tracks RTMP does not carry are skipped.
func (e *egress) write(au *media.AccessUnit, ts int64) error {
	tag, err := e.pk.Packetize(au)
	if errors.Is(err, flv.ErrUnknownTrack) {
		return nil
	}
	if err != nil {
		return err
	}
	return e.c.write(csidFor(tag.Type), uint8(tag.Type), e.streamID, uint32(ts), tag.Body)
}

func csidFor(t flv.TagType) uint8 {
	if t == flv.TagAudio {
		return csidAudio
	}
	return csidVideo
}

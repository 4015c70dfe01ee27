package rtsp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// ErrTracksChanged is returned by Push when the stream's publisher came back with tracks the
// RTSP session cannot carry on: the caller starts a new Push with the new tracks.
var ErrTracksChanged = errors.New("tracks changed")

// Push publishes what r reads to the RTSP server at o.URL, with ANNOUNCE and RECORD and RTP
// interleaved over TCP; credentials go in the URL. tracks describe r's units (usually
// r.Stream().Tracks()); tracks of codecs RTSP does not carry here are left out. Timestamps
// keep increasing across the stream's discontinuities (media.Continuity). Push returns nil when ctx ends or the
// stream closes, ErrTracksChanged (wrapped) when a new publisher brought other tracks, and an
// error when the server refuses or drops the session.
func Push(ctx context.Context, r *stream.Reader, tracks []media.Track, o PushOptions) error {
	ep, err := newEndpoint("push", o.URL, o.Log)
	if err != nil {
		return err
	}
	u, log := ep.u, ep.log

	outs := make([]*outTrack, len(tracks))
	desc := &description.Session{}
	for i, t := range tracks {
		o, err := newOutTrack(t, uint8(96+len(desc.Medias)))
		if err != nil {
			log.Info("rtsp: track left out", "track", i, "error", err)
			continue
		}
		outs[i] = o
		desc.Medias = append(desc.Medias, o.media)
	}
	if len(desc.Medias) == 0 {
		return ep.wrap(errors.New("no track that RTSP carries"))
	}

	tcp := gortsplib.TransportTCP
	var lossLog atomic.Int64
	c := &gortsplib.Client{
		Scheme:         u.Scheme,
		Host:           u.Host,
		Transport:      &tcp,
		WriteQueueSize: writeQueueSize,
		OnTransportSwitch: func(err error) {
			log.Info("rtsp: transport switched", "reason", err)
		},
		OnPacketsLost: func(uint64) {},
		OnDecodeError: func(err error) {
			if allowAt(&lossLog) {
				log.Warn("rtsp: undecodable packet from the server", "error", err)
			}
		},
	}
	if err := c.Start2(); err != nil {
		return ep.wrap(err)
	}
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	waitErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		waitErr <- c.Wait()
		cancel() // the session ended: stop reading
	}()
	stop := closeOnDone(ctx, c.Close)
	defer wg.Wait()
	defer stop()

	fail := func(step string, err error) error { return ep.fail(ctx, step, err) }
	if _, err := c.Announce(u, desc); err != nil {
		return fail("announce", err)
	}
	if err := c.SetupAll(u, desc.Medias); err != nil {
		return fail("setup", err)
	}
	if _, err := c.Record(); err != nil {
		return fail("record", err)
	}
	log.Info("rtsp: pushing", "medias", len(desc.Medias))

	p := pusher{c: c, outs: outs, tracks: tracks, log: log}
	for {
		au, err := r.Read(readCtx)
		if err != nil {
			switch {
			case ctx.Err() != nil, errors.Is(err, io.EOF):
				return nil
			case readCtx.Err() != nil:
				return fail("session", <-waitErr)
			}
			return fail("read", err)
		}
		if err := p.write(r, au); err != nil {
			if errors.Is(err, ErrTracksChanged) {
				return ep.wrap(err)
			}
			return fail("write", err)
		}
	}
}

// packetWriter sends RTP packets of a media: the RTSP client.
type packetWriter interface {
	WritePacketRTP(m *description.Media, pkt *rtp.Packet) error
}

// pusher is the write side of Push.
type pusher struct {
	c      packetWriter
	outs   []*outTrack
	tracks []media.Track
	log    *slog.Logger

	timeline media.Continuity // at 90 kHz: keeps timestamps rising across discontinuities
	disc     bool             // a discontinuity came on a unit of a track left out: the next sent unit takes it
	dropped  int64
	dropLog  atomic.Int64
}

// write sends one unit.
func (p *pusher) write(r *stream.Reader, au *media.AccessUnit) error {
	if au.Track < 0 || au.Track >= len(p.outs) {
		return nil
	}
	if au.Discontinuity && !media.SameFormat(p.tracks, r.Stream().Tracks()) {
		return ErrTracksChanged
	}
	o := p.outs[au.Track]
	if o == nil {
		p.disc = p.disc || au.Discontinuity
		return nil
	}
	off90 := p.timeline.Offset(media.Rescale(au.DTS, o.clock, 90000), au.Discontinuity || p.disc)
	p.disc = false
	pkts, err := o.packets(au, au.PTS+media.Rescale(off90, 90000, o.clock))
	if err != nil {
		p.dropped++
		if allowAt(&p.dropLog) {
			p.log.Warn("rtsp: unit not sent", "track", au.Track, "error", err, "dropped", p.dropped)
		}
		return nil
	}
	for _, pkt := range pkts {
		if err := p.c.WritePacketRTP(o.media, pkt); err != nil {
			var full liberrors.ErrClientWriteQueueFull
			if !errors.As(err, &full) {
				return err
			}
			p.dropped++
			if allowAt(&p.dropLog) {
				p.log.Warn("rtsp: server too slow: packets dropped", "dropped", p.dropped)
			}
		}
	}
	return nil
}

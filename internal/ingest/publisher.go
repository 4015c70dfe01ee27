package ingest

import (
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Publisher publishes one input into a Stream, normalised: DTS monotonic per track (see
// Timeline), the first video unit of each publisher session a key frame. The stream's
// publisher attaches once the tracks are known; a jump of the timeline closes it and attaches
// a new one, so readers see a discontinuity. Not safe for concurrent use.
type Publisher struct {
	s   *stream.Stream
	log *slog.Logger

	pub     *stream.Publisher
	tracks  []media.Track
	tl      Timeline
	needKey []bool // per track: video waiting for a key frame
	units   int64  // units published
}

// NewPublisher returns a Publisher into s that logs its sessions to log.
func NewPublisher(s *stream.Stream, log *slog.Logger) *Publisher {
	return &Publisher{s: s, log: log}
}

// SetTracks attaches the publisher, if not yet attached, and sets the tracks. It fails when
// the stream is closed or has another publisher.
func (p *Publisher) SetTracks(tracks []media.Track) error {
	if p.pub == nil || p.tracks == nil {
		if p.pub == nil {
			pub, err := p.s.Publish()
			if err != nil {
				return err
			}
			p.pub = pub
		}
		p.log.Info("publishing", "tracks", Describe(tracks))
	}
	if err := p.pub.SetTracks(tracks); err != nil {
		return err
	}
	p.tracks = tracks
	p.tl = Timeline{}
	p.needKey = make([]bool, len(tracks))
	for i, t := range tracks {
		p.needKey[i] = t.Codec.IsVideo()
	}
	return nil
}

// Write publishes au, repairing its timestamps; units before SetTracks, of unknown tracks, or
// of video before a key frame are dropped. au must not be shared yet.
func (p *Publisher) Write(au *media.AccessUnit) error {
	if p.pub == nil || au.Track < 0 || au.Track >= len(p.tracks) {
		return nil
	}
	switch p.tl.Check(au, p.tracks[au.Track].ClockRate) {
	case Drop:
		return nil
	case Restart:
		p.log.Info("timestamps jumped: new session", "track", au.Track, "dts", au.DTS)
		p.pub.Close()
		p.pub = nil
		tl := p.tl // keep what Check learnt from this unit
		if err := p.SetTracks(p.tracks); err != nil {
			return err
		}
		p.tl = tl
	}
	if p.needKey[au.Track] {
		if !au.Key {
			return nil
		}
		p.needKey[au.Track] = false
	}
	if err := p.pub.Write(au); err != nil {
		return err
	}
	p.units++
	return nil
}

// Close detaches the publisher; the next SetTracks starts a new session.
func (p *Publisher) Close() {
	if p.pub != nil {
		p.pub.Close()
		p.pub = nil
		p.log.Info("publisher gone", "units", p.units)
	}
	p.tracks = nil
}

// Publishing tells whether the publisher is attached: SetTracks succeeded and no Close or
// failed restart followed.
func (p *Publisher) Publishing() bool { return p.pub != nil }

// Units returns how many units were published, over all sessions.
func (p *Publisher) Units() int64 { return p.units }

// Describe summarises tracks for a log line, e.g. "H264 1920x1080, AAC 48000 Hz".
func Describe(tracks []media.Track) string {
	s := ""
	for i, t := range tracks {
		if i > 0 {
			s += ", "
		}
		s += t.Codec.String()
		switch {
		case t.Params.Width > 0:
			s += fmt.Sprintf(" %dx%d", t.Params.Width, t.Params.Height)
		case t.Params.SampleRate > 0:
			s += fmt.Sprintf(" %d Hz", t.Params.SampleRate)
		}
	}
	return s
}

package ingest

import (
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Publisher publishes one input into a Stream: it attaches the stream's publisher once the
// tracks are known and detaches it on Close, each attachment a publisher session. What the
// units need (timestamps, the key-frame gate) is done by the stream's publisher, the one
// normaliser (internal/stream/normalize.go). Not safe for concurrent use.
type Publisher struct {
	s   *stream.Stream
	log *slog.Logger

	pub    *stream.Publisher
	tracks []media.Track
	done   int64 // units written by the sessions before the current one
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
	return nil
}

// Write publishes au; units before SetTracks are dropped, and the stream's publisher drops
// those of unknown tracks and of video before a key frame. au must not be shared yet.
func (p *Publisher) Write(au *media.AccessUnit) error {
	if p.pub == nil || p.tracks == nil {
		return nil
	}
	return p.pub.Write(au)
}

// Close detaches the publisher; the next SetTracks starts a new session.
func (p *Publisher) Close() {
	if p.pub != nil {
		n := p.pub.Written()
		p.done += n
		p.pub.Close()
		p.pub = nil
		p.log.Info("publisher gone", "units", p.done)
	}
	p.tracks = nil
}

// Publishing tells whether the publisher is attached: SetTracks succeeded and no Close or
// failed restart followed.
func (p *Publisher) Publishing() bool { return p.pub != nil }

// Units returns how many units were published, over all sessions.
func (p *Publisher) Units() int64 {
	if p.pub != nil {
		return p.done + p.pub.Written()
	}
	return p.done
}

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

package udp

import (
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// ingest publishes one input session into a Stream, normalised: DTS monotonic per track
// (see timeline), the first video unit of each publisher session a key frame. The publisher
// attaches once the tracks are known; a jump of the timeline closes it and attaches a new one,
// so readers see a discontinuity. Not safe for concurrent use.
type ingest struct {
	s   *stream.Stream
	log *slog.Logger

	pub     *stream.Publisher
	tracks  []media.Track
	tl      timeline
	needKey []bool // per track: video waiting for a key frame
	units   int64  // units published
}

func newIngest(s *stream.Stream, log *slog.Logger) *ingest {
	return &ingest{s: s, log: log}
}

// setTracks attaches the publisher, if not yet attached, and sets the tracks. It fails when
// the stream is closed or has another publisher.
func (in *ingest) setTracks(tracks []media.Track) error {
	if in.pub == nil {
		pub, err := in.s.Publish()
		if err != nil {
			return err
		}
		in.pub = pub
		in.log.Info("publishing", "tracks", describe(tracks))
	}
	if err := in.pub.SetTracks(tracks); err != nil {
		return err
	}
	in.tracks = tracks
	in.tl = timeline{}
	in.needKey = make([]bool, len(tracks))
	for i, t := range tracks {
		in.needKey[i] = t.Codec.IsVideo()
	}
	return nil
}

// write publishes au, repairing its timestamps; units before setTracks, of unknown tracks, or
// of video before a key frame are dropped.
func (in *ingest) write(au *media.AccessUnit) error {
	if in.pub == nil || au.Track < 0 || au.Track >= len(in.tracks) {
		return nil
	}
	switch in.tl.check(au, in.tracks[au.Track].ClockRate) {
	case drop:
		return nil
	case restart:
		in.log.Info("timestamps jumped: new session", "track", au.Track, "dts", au.DTS)
		in.pub.Close()
		in.pub = nil
		tl := in.tl // keep what check learnt from this unit
		if err := in.setTracks(in.tracks); err != nil {
			return err
		}
		in.tl = tl
	}
	if in.needKey[au.Track] {
		if !au.Key {
			return nil
		}
		in.needKey[au.Track] = false
	}
	if err := in.pub.Write(au); err != nil {
		return err
	}
	in.units++
	return nil
}

// close detaches the publisher; the next setTracks starts a new session.
func (in *ingest) close() {
	if in.pub != nil {
		in.pub.Close()
		in.pub = nil
		in.log.Info("publisher gone", "units", in.units)
	}
	in.tracks = nil
}

// describe summarises tracks for a log line.
func describe(tracks []media.Track) string {
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

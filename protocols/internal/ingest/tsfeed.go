package ingest

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/packager/mpegts"
)

// TSFeed takes the bytes of one MPEG-TS session, pushed as they come, and publishes them
// through a Publisher. A change of program starts a new demuxer and a new publisher session.
// Not safe for concurrent use.
type TSFeed struct {
	in  *Publisher
	dmx *mpegts.Demuxer
	err error // sticky: the program cannot be carried, or the stream refused the publisher
}

// NewTSFeed returns a feed that publishes through in.
func NewTSFeed(in *Publisher) *TSFeed {
	return &TSFeed{in: in, dmx: mpegts.NewDemuxer(nil)}
}

// Write pushes bytes and publishes the units they complete. It fails, and keeps failing,
// when the program carries no supported track or the stream refuses the publisher.
func (f *TSFeed) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	_, _ = f.dmx.Write(p)
	if err := f.drain(); err != nil {
		f.err = err
		return 0, err
	}
	return len(p), nil
}

// Finish ends the session: the units the demuxer completed are published, the access
// units still open are dropped (a session ends when its publisher stops or drops, maybe in
// the middle of a frame, and a video PES without a length cannot be proved whole: see
// mpegts.Demuxer.Cut), counted in Stats().IncompletePES and logged, then the session is
// closed. After a failed Write it only closes the session.
func (f *TSFeed) Finish() {
	if f.err == nil {
		before := f.dmx.Stats().IncompletePES
		f.dmx.Cut()
		_ = f.drain()
		if n := f.dmx.Stats().IncompletePES - before; n > 0 {
			f.in.log.Info("session ended in the middle of an access unit: dropped", "units", n)
		}
	}
	f.in.Close()
}

// Err returns the error that stopped the feed, nil while it takes bytes.
func (f *TSFeed) Err() error { return f.err }

// Stats returns what the demuxer of the current program skipped or dropped on damaged input.
func (f *TSFeed) Stats() mpegts.Stats { return f.dmx.Stats() }

// Units returns how many units the feed's Publisher published.
func (f *TSFeed) Units() int64 { return f.in.Units() }

// drain publishes every unit the demuxer can give.
func (f *TSFeed) drain() error {
	for {
		if f.in.pub == nil || f.in.tracks == nil {
			tracks, err := f.dmx.Tracks()
			if errors.Is(err, mpegts.ErrNeedMore) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := f.in.SetTracks(tracks); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
		au, err := f.dmx.Read()
		switch {
		case err == nil:
			if err := f.in.Write(au); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		case errors.Is(err, mpegts.ErrNeedMore):
			return nil
		case errors.Is(err, mpegts.ErrProgramChanged):
			// The tables that follow describe the new program: a new demuxer reads them.
			f.in.log.Info("program changed: new session", "error", err)
			f.in.Close()
			f.dmx = mpegts.NewDemuxer(nil)
			return nil
		default:
			return err
		}
	}
}

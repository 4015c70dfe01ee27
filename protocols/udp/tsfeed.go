package udp

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/packager/mpegts"
)

// tsFeed takes the bytes of one MPEG-TS session, pushed as they come, and publishes them
// through an ingest. A change of program starts a new demuxer and a new publisher session.
type tsFeed struct {
	in  *ingest
	dmx *mpegts.Demuxer
	err error // sticky: the program cannot be carried, or the stream refused the publisher
}

func newTSFeed(in *ingest) *tsFeed {
	return &tsFeed{in: in, dmx: mpegts.NewDemuxer(nil)}
}

// Write pushes bytes and publishes the units they complete. It fails, and keeps failing,
// when the program carries no supported track or the stream refuses the publisher.
func (f *tsFeed) Write(p []byte) (int, error) {
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

// finish completes what the demuxer holds, publishes it and closes the session.
func (f *tsFeed) finish() {
	if f.err == nil {
		f.dmx.Flush()
		_ = f.drain()
	}
	f.in.close()
}

// drain publishes every unit the demuxer can give.
func (f *tsFeed) drain() error {
	for {
		if f.in.pub == nil {
			tracks, err := f.dmx.Tracks()
			if errors.Is(err, mpegts.ErrNeedMore) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := f.in.setTracks(tracks); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
		au, err := f.dmx.Read()
		switch {
		case err == nil:
			if err := f.in.write(au); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		case errors.Is(err, mpegts.ErrNeedMore):
			return nil
		case errors.Is(err, mpegts.ErrProgramChanged):
			// The tables that follow describe the new program: a new demuxer reads them.
			f.in.log.Info("program changed: new session", "error", err)
			f.in.close()
			f.dmx = mpegts.NewDemuxer(nil)
			return nil
		default:
			return err
		}
	}
}

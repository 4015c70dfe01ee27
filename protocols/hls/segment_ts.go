package hls

import (
	"errors"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// segmentReader turns the segments of one rendition, in order, into access units of the
// rendition's tracks (au.Track is the index in those tracks).
type segmentReader interface {
	// segment reads one segment. It returns the rendition's tracks when they are first known
	// or have changed, and nil otherwise.
	segment(b []byte) (tracks []media.Track, units []*media.AccessUnit, err error)
}

// tsReader reads MPEG-TS segments with one Demuxer for the whole rendition, so timestamps
// stay continuous (33-bit wraps included) from segment to segment. The Demuxer normalises:
// AUDs dropped, parameter sets on key frames, one unit per audio frame, video from a key frame.
type tsReader struct {
	d      *mpegts.Demuxer
	tracks []media.Track
}

func newTSReader() *tsReader { return &tsReader{d: mpegts.NewDemuxer(nil)} }

func (r *tsReader) segment(b []byte) ([]media.Track, []*media.AccessUnit, error) {
	_, _ = r.d.Write(b)
	var announce []media.Track
	if r.tracks == nil {
		tracks, err := r.d.Tracks()
		if errors.Is(err, mpegts.ErrNeedMore) {
			return nil, nil, nil // the probe goes on with the next segment
		}
		if err != nil {
			return nil, nil, err
		}
		r.tracks, announce = tracks, tracks
	}
	// A segment holds whole PES packets: complete the last ones now rather than when the
	// next segment starts.
	r.d.Flush()
	var units []*media.AccessUnit
	for {
		au, err := r.d.Read()
		if errors.Is(err, mpegts.ErrNeedMore) {
			return announce, units, nil
		}
		if err != nil {
			return nil, nil, err
		}
		units = append(units, au)
	}
}

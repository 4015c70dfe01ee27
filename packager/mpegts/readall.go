package mpegts

import (
	"errors"
	"io"
	"os"

	"github.com/sluicemedia/sluice/internal/media"
)

// ReadAll demuxes a whole MPEG-TS stream: its tracks and every access unit, in order.
func ReadAll(r io.Reader) ([]media.Track, []*media.AccessUnit, error) {
	d := NewDemuxer(r)
	tracks, err := d.Tracks()
	if err != nil {
		return nil, nil, err
	}
	var aus []*media.AccessUnit
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			return tracks, aus, nil
		}
		if err != nil {
			return tracks, aus, err
		}
		aus = append(aus, au)
	}
}

// ReadFile is ReadAll of a file.
func ReadFile(path string) ([]media.Track, []*media.AccessUnit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadAll(f)
}

package dash

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// errFMP4 is wrapped by the errors of the fMP4 reader (packager/fmp4).
var errFMP4 = fmp4.ErrInvalid

// parseInit reads an init segment (packager/fmp4) and returns its first track of the given
// kind that sluice carries.
func parseInit(b []byte, kind media.Kind) (*fmp4.InitTrack, error) {
	tracks, err := fmp4.ReadInit(b)
	if err != nil {
		return nil, err
	}
	for i := range tracks {
		if tracks[i].Track.Kind() == kind {
			return &tracks[i], nil
		}
	}
	return nil, fmt.Errorf("%w: init segment without a supported %s track", errFMP4, kindName(kind))
}

func kindName(k media.Kind) string {
	if k == media.KindVideo {
		return "video"
	}
	return "audio"
}

package media

import "errors"

// The errors every packager means alike. Each format wraps them in its own (flv, mpegts, fmp4,
// avi), so a caller that writes to several formats tells "the format cannot carry this codec"
// or "this unit's track was not announced" apart with one errors.Is, whichever format said it.
var (
	// ErrUnsupportedCodec: the format cannot carry the track's codec.
	ErrUnsupportedCodec = errors.New("unsupported codec")

	// ErrUnknownTrack: an access unit names a track the writer was not given.
	ErrUnknownTrack = errors.New("unknown track")
)

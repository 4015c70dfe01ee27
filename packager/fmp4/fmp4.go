// Package fmp4 writes CMAF (fragmented MP4) for live packaging: init segments (ftyp + moov with
// one trak per media track) and media fragments (styp + moof + mdat), from media tracks and
// access units. It is built on mp4ff, whose types stay inside this package.
//
// Every track gets the MP4 track ID Track.ID+1 and the timescale Track.ClockRate, so that
// timestamps go into the file unchanged. Video samples are the access unit's NAL units, each
// prefixed by its 4-byte length; parameter sets equal to the track's are left out of the
// samples (they are in the sample entry), access unit delimiters too. Audio samples are the
// unit's frame bytes.
package fmp4

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

var (
	// ErrUnsupportedCodec is returned for a track whose codec fMP4 cannot carry here. It wraps
	// media.ErrUnsupportedCodec.
	ErrUnsupportedCodec = fmt.Errorf("fmp4: %w", media.ErrUnsupportedCodec)

	// ErrMissingParams is returned for a track whose decoder parameters are missing or invalid
	// (no SPS, no AudioSpecificConfig, no sample rate).
	ErrMissingParams = errors.New("fmp4: missing codec parameters")

	// ErrUnknownTrack is returned for an access unit of a track the Fragmenter was not given.
	// It wraps media.ErrUnknownTrack.
	ErrUnknownTrack = fmt.Errorf("fmp4: %w", media.ErrUnknownTrack)

	// ErrTimestamp is returned for an access unit whose DTS is negative (plus the shift) or
	// whose PTS-DTS does not fit the file's 32-bit composition offset.
	ErrTimestamp = errors.New("fmp4: timestamp out of range")
)

// TrackID returns the MP4 track ID of a media track: its index plus one.
func TrackID(t media.Track) uint32 { return uint32(t.ID) + 1 }

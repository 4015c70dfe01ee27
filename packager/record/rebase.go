package record

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// A memory download starts at zero, like a recorded file: every track's decode times move
// back by the same time, the earliest decode time held (firstDecodeTime over the fragments).

// firstDecodeTime returns the earliest decode time of the track fragments in frag (encoded
// moof+mdat pairs), or -1 when none is of one of tracks. frag is written in place with the
// same values: call it only on bytes no reader shares yet.
func firstDecodeTime(frag []byte, tracks []media.Track) time.Duration {
	first := time.Duration(-1)
	fmp4.RewriteDecodeTimes(frag, func(track uint32, v uint64) uint64 {
		if r := clockRate(tracks, track); r > 0 {
			t := time.Duration(media.Rescale(int64(v), r, int(time.Second)))
			if first < 0 || t < first {
				first = t
			}
		}
		return v
	})
	return first
}

// shiftDecodeTimes moves the decode times of the track fragments in frag back by start, in
// place (not below zero).
func shiftDecodeTimes(frag []byte, tracks []media.Track, start time.Duration) {
	fmp4.RewriteDecodeTimes(frag, func(track uint32, v uint64) uint64 {
		if r := clockRate(tracks, track); r > 0 {
			d := uint64(media.Rescale(int64(start), int(time.Second), r))
			return v - min(v, d)
		}
		return v
	})
}

// trackDurations returns each track's duration in a file that starts at start: from there to
// the end of its last sample (ends, in its clock; 0 without a sample).
func trackDurations(tracks []media.Track, ends []int64, start time.Duration) []time.Duration {
	d := make([]time.Duration, len(tracks))
	for i, t := range tracks {
		if i < len(ends) && ends[i] > 0 {
			d[i] = max(time.Duration(media.Rescale(ends[i], t.ClockRate, int(time.Second)))-start, 0)
		}
	}
	return d
}

// clockRate returns the clock rate of the track of MP4 track ID id, 0 when none is.
func clockRate(tracks []media.Track, id uint32) int {
	for _, t := range tracks {
		if fmp4.TrackID(t) == id {
			return t.ClockRate
		}
	}
	return 0
}

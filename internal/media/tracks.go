package media

import "bytes"

// SameFormat tells whether two track lists carry the same formats, track for track: codec,
// clock and audio format (AudioSpecificConfig, sample rate, channels). Video parameter sets
// and picture sizes may differ: what depends only on the format (an MPEG-TS or RTP session
// that repeats parameter sets in band, a transcoder's arguments) goes on across such a change.
func SameFormat(a, b []Track) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Codec != y.Codec || x.ClockRate != y.ClockRate || x.Params.SampleRate != y.Params.SampleRate ||
			x.Params.Channels != y.Params.Channels || !bytes.Equal(x.Params.AudioConfig, y.Params.AudioConfig) {
			return false
		}
	}
	return true
}

// SameTracks tells whether two track lists describe the same media: SameFormat, and the same
// track IDs and decoder parameters (VPS, SPS, PPS, picture size). What is written once per
// session (an init segment, a file header, a publisher's session) goes on across lists that
// are the same; any other change starts anew.
func SameTracks(a, b []Track) bool {
	if !SameFormat(a, b) {
		return false
	}
	for i := range a {
		x, y := &a[i].Params, &b[i].Params
		if a[i].ID != b[i].ID || !bytes.Equal(x.VPS, y.VPS) || !bytes.Equal(x.SPS, y.SPS) || !bytes.Equal(x.PPS, y.PPS) ||
			x.Width != y.Width || x.Height != y.Height {
			return false
		}
	}
	return true
}

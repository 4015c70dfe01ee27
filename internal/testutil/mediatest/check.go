package mediatest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// CheckTracks fails the test unless got are want: the same IDs, codecs, clock rates and
// parameters, in order.
func CheckTracks(t testing.TB, got, want []media.Track) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tracks, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Codec != w.Codec || g.ClockRate != w.ClockRate {
			t.Errorf("track %d: got %v id %d clock %d, want %v id %d clock %d", i, g.Codec, g.ID, g.ClockRate, w.Codec, w.ID, w.ClockRate)
		}
		gp, wp := g.Params, w.Params
		if !bytes.Equal(gp.VPS, wp.VPS) || !bytes.Equal(gp.SPS, wp.SPS) || !bytes.Equal(gp.PPS, wp.PPS) ||
			!bytes.Equal(gp.AudioConfig, wp.AudioConfig) || gp.Width != wp.Width || gp.Height != wp.Height ||
			gp.SampleRate != wp.SampleRate || gp.Channels != wp.Channels {
			t.Errorf("track %d params:\n got %+v\nwant %+v", i, gp, wp)
		}
	}
}

// WithParams is the payload a demuxer or depacketizer gives back for au of track trk: a key
// frame gets, in front, the track's parameter sets it does not carry (VPS for H.265, SPS,
// PPS); any other unit is unchanged.
func WithParams(trk media.Track, au *media.AccessUnit) [][]byte {
	if !au.Key || !trk.Codec.IsVideo() {
		return au.Payload
	}
	carries := func(ps []byte) bool {
		return slices.ContainsFunc(au.Payload, func(n []byte) bool { return bytes.Equal(n, ps) })
	}
	var out [][]byte
	if trk.Codec == media.CodecH265 && !carries(trk.Params.VPS) {
		out = append(out, trk.Params.VPS)
	}
	if !carries(trk.Params.SPS) {
		out = append(out, trk.Params.SPS)
	}
	if !carries(trk.Params.PPS) {
		out = append(out, trk.Params.PPS)
	}
	return append(out, au.Payload...)
}

// CheckUnits fails the test unless got are the units want written of tracks (indexed by
// track ID), read back: the same track, PTS, DTS and key flag in order, and the payload
// WithParams expects.
func CheckUnits(t testing.TB, tracks []media.Track, got, want []*media.AccessUnit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d units, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Track != w.Track || g.PTS != w.PTS || g.DTS != w.DTS || g.Key != w.Key {
			t.Fatalf("unit %d: got track %d pts %d dts %d key %v, want track %d pts %d dts %d key %v",
				i, g.Track, g.PTS, g.DTS, g.Key, w.Track, w.PTS, w.DTS, w.Key)
		}
		if wp := WithParams(tracks[w.Track], w); !slices.EqualFunc(g.Payload, wp, bytes.Equal) {
			t.Fatalf("unit %d (track %d, key %v): payload of %d parts differs from the %d written", i, w.Track, w.Key, len(g.Payload), len(wp))
		}
	}
}

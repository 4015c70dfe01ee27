package srt

import "github.com/sluicemedia/sluice/internal/media"

// maxRepairStep is the longest backward DTS step (in seconds) repaired by nudging the unit
// forward; a longer one is a clock reset of the source and rebases the timeline instead.
const maxRepairStep = 1

// rebaseGap90k is where a rebased timeline continues after the last unit: 40 ms later.
const rebaseGap90k = 3600

// dtsFixer makes DTS strictly increasing per track, as the ingest contract requires. A small
// backward step (B-frame reordering gone wrong, a muxer's rounding) moves the unit to one tick
// after its predecessor; a large one (an encoder restarting its clock) shifts every track by
// one common offset, so audio and video stay aligned. PTS is kept at or after DTS.
type dtsFixer struct {
	rates  []int
	last   []int64 // last DTS out, per track, in the track's clock
	seen   []bool
	off90k int64 // offset added to every track, in 90 kHz ticks
	offs   []int64
	fixed  int64 // units nudged
	rebase int64 // clock resets absorbed
}

// newDTSFixer returns a fixer for tracks.
func newDTSFixer(tracks []media.Track) *dtsFixer {
	f := &dtsFixer{
		rates: make([]int, len(tracks)),
		last:  make([]int64, len(tracks)),
		seen:  make([]bool, len(tracks)),
		offs:  make([]int64, len(tracks)),
	}
	for i, t := range tracks {
		f.rates[i] = max(t.ClockRate, 1)
	}
	return f
}

// fix adjusts au in place; au must not be shared yet. Units of unknown tracks pass unchanged.
func (f *dtsFixer) fix(au *media.AccessUnit) {
	i := au.Track
	if i < 0 || i >= len(f.rates) {
		return
	}
	rate := f.rates[i]
	dts := au.DTS + f.offs[i]
	if f.seen[i] && dts <= f.last[i] {
		if f.last[i]-dts <= int64(maxRepairStep*rate) {
			dts = f.last[i] + 1
			f.fixed++
		} else {
			f.rebaseTo(i, au.DTS)
			dts = au.DTS + f.offs[i]
			f.rebase++
		}
	}
	au.PTS = max(au.PTS+f.offs[i], dts)
	au.DTS = dts
	f.last[i], f.seen[i] = dts, true
}

// rebaseTo sets the common offset so that raw DTS d of track i lands just after the latest
// unit of any track.
func (f *dtsFixer) rebaseTo(i int, d int64) {
	var end int64
	for j := range f.last {
		if f.seen[j] {
			end = max(end, media.Rescale(f.last[j], f.rates[j], 90000))
		}
	}
	f.off90k = end + rebaseGap90k - media.Rescale(d, f.rates[i], 90000)
	for j := range f.offs {
		f.offs[j] = media.Rescale(f.off90k, 90000, f.rates[j])
	}
}

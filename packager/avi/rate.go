package avi

import (
	"math"
	"slices"
)

// standardRates are the frame rates, as rate/scale, that an estimate close to one snaps to.
var standardRates = [][2]uint32{
	{24000, 1001}, {24, 1}, {25, 1}, {30000, 1001}, {30, 1}, {48, 1}, {50, 1},
	{60000, 1001}, {60, 1}, {15, 1}, {12, 1}, {10, 1}, {5, 1}, {100, 1}, {120, 1},
}

// snapTolerance is how close, relatively, an estimate must be to snap to a standard rate.
const snapTolerance = 0.003

// estimateRate derives a constant frame duration, as scale/rate seconds, from the decode
// timestamps of the first frames in ticks of clock: the mean of the steps near their median
// (gaps and bursts left out), snapped to the nearest standard rate when close to one. Without a step it
// returns 25 fps.
func estimateRate(dts []int64, clock int, scratch []int64) (scale, rate uint32) {
	steps := scratch[:0]
	for i := 1; i < len(dts); i++ {
		if d := dts[i] - dts[i-1]; d > 0 {
			steps = append(steps, d)
		}
	}
	if len(steps) == 0 || clock <= 0 {
		return 1, 25
	}
	sorted := slices.Clone(steps)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	var sum, n int64
	for _, d := range steps {
		if 2*d >= median && 2*d <= 3*median {
			sum, n = sum+d, n+1
		}
	}
	mean := float64(sum) / float64(n)
	fps := float64(clock) / mean
	// The nearest standard rate within the tolerance: 30 and 29.97 (or 60 and 59.94, 24 and
	// 23.976) are 0.1% apart, both within it of either.
	best, bestOff := -1, math.Inf(1)
	for i, r := range standardRates {
		want := float64(r[0]) / float64(r[1])
		if off := math.Abs(fps-want) / want; off <= snapTolerance && off < bestOff {
			best, bestOff = i, off
		}
	}
	if best >= 0 {
		return standardRates[best][1], standardRates[best][0]
	}
	// Otherwise a whole number of clock ticks per frame.
	ticks := uint64(math.Round(mean))
	c := uint64(clock)
	if g := gcd(ticks, c); g > 1 {
		ticks, c = ticks/g, c/g
	}
	if ticks == 0 || ticks > math.MaxUint32 || c > math.MaxUint32 {
		return 1, 25
	}
	return uint32(ticks), uint32(c)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

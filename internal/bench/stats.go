package bench

import (
	"math"
	"slices"
)

// Median is the middle value of xs (the mean of the two middle values for an even count), or
// NaN for none.
func Median(xs []float64) float64 { return Percentile(xs, 50) }

// Percentile is the p-th percentile (0..100) of xs, interpolated linearly between the two
// nearest ranks, or NaN for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	p = min(max(p, 0), 100)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

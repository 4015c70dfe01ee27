package bench

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{xs, 50, 3},
		{xs, 0, 1},
		{xs, 100, 5},
		{xs, 25, 2},
		{xs, 99, 4.96},
		{[]float64{10, 20}, 50, 15},
		{[]float64{7}, 99, 7},
		{xs, 150, 5},
	}
	for _, c := range cases {
		if got := Percentile(c.xs, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
	if xs[0] != 5 {
		t.Fatal("Percentile sorted its argument in place")
	}
	if !math.IsNaN(Median(nil)) {
		t.Fatal("median of nothing is not NaN")
	}
	if got := Median([]float64{3, 1, 2, 4}); got != 2.5 {
		t.Fatalf("median of an even count %v, want 2.5", got)
	}
}

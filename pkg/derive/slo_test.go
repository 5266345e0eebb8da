package derive

import (
	"math"
	"testing"
)

// TestSLOAttainment: the share under a threshold interpolates inside its bucket the way histogram_quantile does,
// so the two invert each other; bounds read exactly; the +Inf bucket gives a lower bound; missing data gives none.
func TestSLOAttainment(t *testing.T) {
	inf := math.Inf(1)
	// 100 observations: 20 ≤ 0.1, 60 ≤ 0.25, 90 ≤ 0.5, 100 ≤ 1 (and +Inf).
	b := []Bucket{{0.1, 20}, {0.25, 60}, {0.5, 90}, {1, 100}, {inf, 100}}
	bounds := []float64{0.1, 0.25, 0.5, 1, inf}
	for _, c := range []struct {
		threshold, want float64
		exact           bool
	}{
		{0.25, 0.6, true},
		{0.3, 0.6 + 0.3*(0.05/0.25), false},
		{0.05, 0.2 * 0.5, false}, // the first bucket's lower edge is 0
		{0.75, 0.9 + 0.1*0.5, false},
		{5, 1, false}, // past the highest finite bound: the count there
	} {
		bb := BoundsAround(bounds, c.threshold)
		got, ok := SLOAttainment(b, bb, c.threshold)
		if !ok || math.Abs(got-c.want) > 1e-12 || bb.Exact != c.exact {
			t.Errorf("threshold %v: %v %v (exact %v), want %v (exact %v)", c.threshold, got, ok, bb.Exact, c.want, c.exact)
		}
		if c.threshold < 1 {
			// histogram_quantile of the attainment gives the threshold back.
			if q := HistogramQuantile(got, b); math.Abs(q-c.threshold) > 1e-9 {
				t.Errorf("threshold %v: attainment %v, whose quantile is %v", c.threshold, got, q)
			}
		}
	}
	// Goodput is the attainment's numerator: 66 of the 100 observations within 0.3.
	if within, total, ok := CountWithin(b, BoundsAround(bounds, 0.3), 0.3); !ok || math.Abs(within-66) > 1e-9 || total != 100 {
		t.Errorf("within 0.3: %v of %v (%v)", within, total, ok)
	}
	// Equal bounds of several histograms are summed, as sum by (le) does.
	two := append(append([]Bucket(nil), b...), b...)
	if got, _ := SLOAttainment(two, BoundsAround(bounds, 0.3), 0.3); math.Abs(got-0.66) > 1e-12 {
		t.Errorf("two histograms: %v", got)
	}
	for name, bs := range map[string][]Bucket{
		"no +Inf":      b[:4],
		"+Inf is zero": {{0.25, 0}, {0.5, 0}, {inf, 0}},
		"no upper":     {{0.25, 60}, {inf, 100}},
	} {
		if v, ok := SLOAttainment(bs, SLOBounds{Lo: 0.25, Hi: 0.5}, 0.3); ok {
			t.Errorf("%s: %v, want no value", name, v)
		}
	}
}

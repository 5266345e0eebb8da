package derive

import (
	"fmt"
	"testing"
)

// TestStepRatesMatchRateSteps checks StepRates against RateSteps over a grid reaching before and after the points
// (more than 64 steps: several bitset words): a series over the whole grid, one younger than it, one that stopped,
// one starting with a staleness marker, too few points, and a reset and missed scrapes throughout.
func TestStepRatesMatchRateSteps(t *testing.T) {
	series := func(from, to int) []Point {
		var pts []Point
		for i := from; i < to; i++ {
			if i%37 == 5 {
				continue // a missed scrape
			}
			v := float64(i * 3)
			if i > 200 {
				v = float64((i - 200) * 2) // a restarted server
			}
			if i == 300 {
				v = StaleNaN
			}
			pts = append(pts, Point{T: int64(i) * 5000, V: v})
		}
		return pts
	}
	staleFirst := append([]Point{{T: 0, V: StaleNaN}}, series(1, 50)...)
	cases := map[string][]Point{
		"whole grid": series(0, 400), "younger": series(350, 400), "stopped": series(0, 60),
		"stale first": staleFirst, "one point": series(10, 11), "none": nil,
	}
	steps := Steps(-100*5000, 500*5000, 7000)
	for name, pts := range cases {
		for _, window := range []int64{16_000, 300_000} {
			var want, got []string
			RateSteps(pts, steps, window, func(i int, v float64) { want = append(want, fmt.Sprintf("%d:%v", i, v)) })
			r := &RatesOf([][]Point{nil, pts, pts[:min(len(pts), 3)]}, steps, window)[1]
			if r.Points() != len(pts) {
				t.Errorf("%s: rates of %d points report %d", name, len(pts), r.Points())
			}
			r.Each(func(i int, v float64) { got = append(got, fmt.Sprintf("%d:%v", i, v)) })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, window %d: StepRates gave %v, RateSteps %v", name, window, got, want)
			}
			if held := r.Bytes(); len(want) > 0 && held > 9*(int64(len(want))+window/7000+2) {
				t.Errorf("%s, window %d: %d bytes held for %d rates: more steps than the points can give a rate", name, window, held, len(want))
			}
		}
	}
	if len(steps) <= 64 {
		t.Fatalf("%d steps: the grid must span several bitset words", len(steps))
	}
}

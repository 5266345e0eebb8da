package derive

import (
	"fmt"
	"testing"
)

// TestStepRatesMatchRateSteps checks StepRates.Each against derive.RateSteps, with steps past 64 (a second bitset
// word), windows too short for a rate, a reset and a staleness marker.
func TestStepRatesMatchRateSteps(t *testing.T) {
	var pts []Point
	for i := range 400 {
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
	steps := Steps(0, 400*5000, 7000)
	type hit struct {
		i int
		v float64
	}
	var want, got []hit
	RateSteps(pts, steps, 16000, func(i int, v float64) { want = append(want, hit{i, v}) })
	a := NewRateArena(2, len(steps))
	a.Rates(nil, steps, 16000).Each(func(i int, v float64) { t.Errorf("a series without points has a rate at step %d", i) })
	a.Rates(pts, steps, 16000).Each(func(i int, v float64) { got = append(got, hit{i, v}) })
	if len(want) < 100 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stepRates gave %d rates, RateSteps %d; they differ or are too few to test", len(got), len(want))
	}
}

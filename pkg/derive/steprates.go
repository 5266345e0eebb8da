package derive

import "math/bits"

// StepRates is a counter series' rate at each step of a grid (RateSteps), which a rate read keeps in place of the
// series' points: what rate, quantile and attainment evaluations read is only these, and a cold hour's points at a
// 5 s scrape take six times the memory of 240 steps' rates. So a heavy evaluation holds each endpoint's decoded
// points only while it computes their rates, and the queries of a refresh can share rates instead of points.
type StepRates struct {
	v   []float64
	has []uint64 // bit i: step i has a rate (its window holds two samples or more)
}

// Each calls f for every step with a rate, steps ascending, as RateSteps calls it.
func (r StepRates) Each(f func(i int, v float64)) {
	for w, word := range r.has {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			f(i, r.v[i])
			word &= word - 1
		}
	}
}

// Bytes is what the rates hold.
func (r StepRates) Bytes() int64 { return int64(8*cap(r.v) + 8*cap(r.has)) }

// RateArena hands out the StepRates of one selection from two allocations.
type RateArena struct {
	steps int
	v     []float64
	has   []uint64
}

// NewRateArena sizes an arena for series series at steps steps.
func NewRateArena(series, steps int) *RateArena {
	words := (steps + 63) / 64
	return &RateArena{steps: steps, v: make([]float64, series*steps), has: make([]uint64, series*words)}
}

// Rates computes one series' StepRates from its points (RateSteps over steps and window).
func (a *RateArena) Rates(points []Point, steps []int64, window int64) StepRates {
	words := (a.steps + 63) / 64
	r := StepRates{v: a.v[:a.steps:a.steps], has: a.has[:words:words]}
	a.v, a.has = a.v[a.steps:], a.has[words:]
	RateSteps(points, steps, window, func(i int, v float64) {
		r.v[i] = v
		r.has[i/64] |= 1 << (i % 64)
	})
	return r
}

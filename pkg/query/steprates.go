package query

import (
	"math/bits"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// stepRates is a counter series' rate at each step of an evaluation (derive.RateSteps), which a rate read keeps in
// place of the series' points: every consumer of a rate read (rate, quantiles, attainment) reads only these, and a
// cold hour's points at a 5 s scrape take six times the memory of 240 steps' rates. So a heavy evaluation holds one
// endpoint's decoded points at a time, not its whole selection's (a fleet histogram's: a hundred MiB and more).
type stepRates struct {
	v   []float64
	has []uint64 // bit i: step i has a rate (its window holds two samples or more)
}

// rateArena hands out the stepRates of one selection from two allocations.
type rateArena struct {
	steps int
	v     []float64
	has   []uint64
}

// newRateArena sizes an arena for series series at steps steps.
func newRateArena(series, steps int) *rateArena {
	words := (steps + 63) / 64
	return &rateArena{steps: steps, v: make([]float64, series*steps), has: make([]uint64, series*words)}
}

// rates computes one series' stepRates from its points.
func (a *rateArena) rates(points []derive.Point, steps []int64, window int64) stepRates {
	words := (a.steps + 63) / 64
	r := stepRates{v: a.v[:a.steps:a.steps], has: a.has[:words:words]}
	a.v, a.has = a.v[a.steps:], a.has[words:]
	derive.RateSteps(points, steps, window, func(i int, v float64) {
		r.v[i] = v
		r.has[i/64] |= 1 << (i % 64)
	})
	return r
}

// each calls f for every step with a rate, steps ascending, as derive.RateSteps calls it.
func (r stepRates) each(f func(i int, v float64)) {
	for w, word := range r.has {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			f(i, r.v[i])
			word &= word - 1
		}
	}
}

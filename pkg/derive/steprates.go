package derive

import (
	"math/bits"
	"sort"
)

// StepRates is a counter series' rate at each step of a grid (RateSteps), which a rate read keeps in place of the
// series' points: what rate, quantile and attainment evaluations read is only these, and a cold hour's points at a
// 5 s scrape take six times the memory of 240 steps' rates. So a heavy evaluation holds each endpoint's decoded
// points only while it computes their rates, and the queries of a refresh can share rates instead of points. Only
// the steps the series' points can give a rate are held, so a series younger than the grid takes less.
type StepRates struct {
	off int       // the grid index of v[0]
	v   []float64 // v[i]: the rate at step off+i
	has []uint64  // bit i: step off+i has a rate (its window holds two samples or more)
}

// Each calls f for every step with a rate, steps ascending, as RateSteps calls it.
func (r StepRates) Each(f func(i int, v float64)) {
	for w, word := range r.has {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			f(r.off+i, r.v[i])
			word &= word - 1
		}
	}
}

// Bytes is what the rates hold.
func (r StepRates) Bytes() int64 { return int64(8*cap(r.v) + 8*cap(r.has)) }

// RateArena hands out the StepRates of a selection from a few large allocations.
type RateArena struct {
	v   []float64
	has []uint64
}

// rateArenaChunk is how many values an arena allocates at least at once.
const rateArenaChunk = 4096

// Rates computes one series' StepRates from its points (RateSteps over steps and window).
func (a *RateArena) Rates(points []Point, steps []int64, window int64) StepRates {
	if len(points) < 2 {
		return StepRates{}
	}
	// A step has a rate only if its window (end-window, end] holds two points: end at or after the second point
	// and end-window before the newest.
	lo := sort.Search(len(steps), func(i int) bool { return steps[i] >= points[1].T })
	hi := sort.Search(len(steps), func(i int) bool { return steps[i]-window >= points[len(points)-1].T })
	if lo >= hi {
		return StepRates{}
	}
	n, words := hi-lo, (hi-lo+63)/64
	if len(a.v) < n {
		a.v = make([]float64, max(n, rateArenaChunk))
	}
	if len(a.has) < words {
		a.has = make([]uint64, max(words, rateArenaChunk/64))
	}
	r := StepRates{off: lo, v: a.v[:n:n], has: a.has[:words:words]}
	a.v, a.has = a.v[n:], a.has[words:]
	RateSteps(points, steps[lo:hi], window, func(i int, v float64) {
		r.v[i] = v
		r.has[i/64] |= 1 << (i % 64)
	})
	return r
}

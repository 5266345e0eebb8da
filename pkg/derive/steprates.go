package derive

import (
	"math/bits"
	"slices"
	"sort"
	"sync"
)

// StepRates is a counter series' rate at each step of a grid (RateSteps), which a rate read keeps in place of the
// series' points: what rate, quantile and attainment evaluations read is only these, and a cold hour's points at a
// 5 s scrape take six times the memory of 240 steps' rates. So a heavy evaluation holds each endpoint's decoded
// points only while it computes their rates, and the queries of a refresh can share rates instead of points. Only
// the steps the series' points can give a rate are held, so a series younger than the grid takes less.
type StepRates struct {
	off    int       // the grid index of v[0]
	v      []float64 // v[i]: the rate at step off+i
	has    []uint64  // bit i: step off+i has a rate (its window holds two samples or more)
	points int
}

// Points is how many points the rates came from: what a query counts against its budget, as it would the points.
func (r *StepRates) Points() int { return r.points }

// Each calls f for every step with a rate, steps ascending, as RateSteps calls it.
func (r *StepRates) Each(f func(i int, v float64)) {
	for w, word := range r.has {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			f(r.off+i, r.v[i])
			word &= word - 1
		}
	}
}

// Parts is what Each reads: v[k] is the rate at step off+k where bit k of has is set, for a loop that adds rates
// without a call per step. The arrays are the rates' own, to read only.
func (r *StepRates) Parts() (off int, v []float64, has []uint64) { return r.off, r.v, r.has }

// Bytes is what the rates hold.
func (r *StepRates) Bytes() int64 { return int64(8*cap(r.v) + 8*cap(r.has)) }

// StepRatesBuf holds the arrays of many StepRates in two, so rating a selection's series allocates twice, not twice
// per series.
type StepRatesBuf struct {
	v   []float64
	has []uint64
}

// NewStepRatesBuf returns a StepRatesBuf with room for series StepRates of up to steps steps each.
func NewStepRatesBuf(series, steps int) *StepRatesBuf {
	return &StepRatesBuf{v: make([]float64, 0, series*steps), has: make([]uint64, 0, series*((steps+63)/64))}
}

// Of returns the StepRates of rates given step by step, as rate cursors give them: v[i] is the rate at step i
// where has[i]; points is how many points they came from. Its arrays are carved from b, or made apart once b is
// full or when b is nil; each is full, so an append to one copies rather than writing into the next.
func (b *StepRatesBuf) Of(v []float64, has []bool, points int) StepRates {
	lo, hi := 0, len(v)
	for lo < hi && !has[lo] {
		lo++
	}
	for hi > lo && !has[hi-1] {
		hi--
	}
	r := StepRates{off: lo, points: points}
	if lo == hi {
		return r
	}
	r.v, r.has = b.take(hi-lo, (hi-lo+63)/64)
	copy(r.v, v[lo:hi])
	for i := lo; i < hi; i++ {
		if has[i] {
			r.has[(i-lo)/64] |= 1 << ((i - lo) % 64)
		}
	}
	return r
}

// take returns a zeroed n-element float slice and m-word bit set from b, or made apart when b lacks room.
func (b *StepRatesBuf) take(n, m int) ([]float64, []uint64) {
	if b == nil || len(b.v)+n > cap(b.v) || len(b.has)+m > cap(b.has) {
		return make([]float64, n), make([]uint64, m)
	}
	v, has := b.v[len(b.v):len(b.v)+n:len(b.v)+n], b.has[len(b.has):len(b.has)+m:len(b.has)+m]
	b.v, b.has = b.v[:len(b.v)+n], b.has[:len(b.has)+m]
	return v, has
}

// RatesOf computes the StepRates of each series' points at steps over window (RateSteps), all of them in two
// allocations of exactly what they hold.
func RatesOf(series [][]Point, steps []int64, window int64) []StepRates {
	out := make([]StepRates, len(series))
	ends := make([]int, len(series)) // each series' rate span is [out[i].off, ends[i])
	n, words := 0, 0
	for i, pts := range series {
		lo, hi := rateSpan(pts, steps, window)
		out[i].off, out[i].points, ends[i] = lo, len(pts), hi
		n, words = n+hi-lo, words+(hi-lo+63)/64
	}
	v, has := make([]float64, n), make([]uint64, words)
	// A cold hour rates thousands of selections: their edges come from a pool, cleared, rather than allocated each.
	kept := edgesPool.Get().(*[]stepEdges)
	edges := slices.Grow((*kept)[:0], len(steps))[:len(steps)]
	clear(edges)
	defer func() { *kept = edges; edgesPool.Put(kept) }()
	for i, pts := range series {
		r := &out[i]
		n, words := ends[i]-r.off, (ends[i]-r.off+63)/64
		if n == 0 {
			continue
		}
		r.v, r.has = v[:n:n], has[:words:words]
		v, has = v[n:], has[words:]
		rateSteps(pts, steps[r.off:ends[i]], window, edges[r.off:ends[i]], func(i int, x float64) {
			r.v[i] = x
			r.has[i/64] |= 1 << (i % 64)
		})
	}
	return out
}

// edgesPool holds RatesOf's per-step window edges between calls.
var edgesPool = sync.Pool{New: func() any { return new([]stepEdges) }}

// rateSpan is the steps [lo, hi) at which points can give a rate: a step's window (end-window, end] must hold two
// of them, so its end is at or after the second point and end-window before the newest.
func rateSpan(points []Point, steps []int64, window int64) (lo, hi int) {
	if len(points) < 2 {
		return 0, 0
	}
	lo = sort.Search(len(steps), func(i int) bool { return steps[i] >= points[1].T })
	hi = sort.Search(len(steps), func(i int) bool { return steps[i]-window >= points[len(points)-1].T })
	return lo, max(lo, hi)
}

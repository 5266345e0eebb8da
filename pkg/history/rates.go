package history

import (
	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// RateSeries is one selected counter series' rates at a grid of steps, in place of its points (derive.StepRates).
type RateSeries struct {
	Name   string
	Labels exposition.Labels
	Rates  derive.StepRates
	// Read is how many points in the range the rates came from: what the query counts against its budget, as it
	// would count the points.
	Read int
}

// rateKey names one selection's rates: the range read, the steps (evenly spaced: first, last and how many) and
// the rate window.
type rateKey struct {
	memoKey
	first, last int64
	n           int
	window      int64
}

// rateEntry is one series' memoized rates and the points they came from.
type rateEntry struct {
	rates derive.StepRates
	read  int
}

// SelectRates is SelectBounded of [from, to] returning, instead of each series' points, its rates at steps over
// window (derive.RateSteps). The queries of a refresh read the same histograms' rates at the same steps (the fleet
// overview's TTFT up to seven times): the rates are memoized like decoded points (memo.go), and, at a sixth of their
// points' size for an hour's 240 steps, far more of them fit the memo's bound. Series without points in the
// range are left out.
func (s *Store) SelectRates(endpoint, name string, from, to int64, steps []int64, window int64, match func(exposition.Labels) bool, maxPoints int) ([]RateSeries, bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, true
	}
	defer ep.mu.RUnlock()
	return ep.selectRates(name, from, to, steps, window, match, maxPoints)
}

// selectRates implements SelectRates under the read lock.
func (ep *endpoint) selectRates(name string, from, to int64, steps []int64, window int64, match func(exposition.Labels) bool, maxPoints int) ([]RateSeries, bool) {
	p, fits := ep.pick(name, from, to, match, maxPoints)
	if !fits || len(p.ids) == 0 || len(steps) == 0 {
		return nil, fits
	}
	key := rateKey{memoKey: memoKey{name: name, lo: p.lo, hi: p.hi}, first: steps[0], last: steps[len(steps)-1], n: len(steps), window: window}
	got := make([]rateEntry, len(p.ids))
	found := make([]bool, len(p.ids))
	if ep.memo.lookupRates(key, p.ids, got, found) < len(p.ids) {
		var missing selection
		missing.name, missing.lo, missing.hi, missing.blocks, missing.withHead = p.name, p.lo, p.hi, p.blocks, p.withHead
		var at []int
		for i, id := range p.ids {
			if !found[i] {
				missing.ids, missing.counts = append(missing.ids, id), append(missing.counts, p.counts[i])
				at = append(at, i)
			}
		}
		// The points are not kept, only their rates: a sixth of their size for an hour's steps, so that the memo's
		// bound holds the rates of the histograms a cold refresh reads again (keeping the points of reads of a few
		// steps too measured slower cold, and no faster warm).
		pts := ep.points(missing, missing.lo, false)
		rates := derive.RatesOf(pts, steps, window)
		entries := make([]rateEntry, len(pts))
		for j, i := range at {
			entries[j] = rateEntry{rates: rates[j], read: len(pts[j])}
			got[i] = entries[j]
		}
		ep.memo.keepRates(ep.st, key, missing.ids, entries)
	}
	out := make([]RateSeries, 0, len(p.ids))
	labels := make(exposition.Labels, 0, p.nLabels)
	for i, id := range p.ids {
		if got[i].read == 0 {
			continue
		}
		rs := RateSeries{Name: ep.series[id].id.name, Rates: got[i].rates, Read: got[i].read}
		labels, rs.Labels = ep.appendLabels(labels, id)
		out = append(out, rs)
	}
	return out, true
}

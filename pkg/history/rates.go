package history

import (
	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// rateKey names one selection's rates: the range read, the steps (evenly spaced: first, last and how many) and
// the rate window.
type rateKey struct {
	memoKey
	first, last int64
	n           int
	window      int64
}

// SelectRates is SelectBounded of [from, to] returning, instead of each series' points, its rates at steps over
// window (derive.RateSteps). The queries of a refresh read the same histograms' rates at the same steps (the fleet
// overview's TTFT up to seven times): the rates are memoized like decoded points (memo.go), and, at a sixth of their
// points' size for an hour's 240 steps, far more of them fit the memo's bound. The Series hold Rates, not Points;
// those without points in the range are left out.
func (s *Store) SelectRates(endpoint, name string, from, to int64, steps []int64, window int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, true
	}
	defer ep.mu.RUnlock()
	return ep.selectRates(name, from, to, steps, window, match, maxPoints)
}

// SelectRatesShared is SelectRates for a filter named by filter: reads with one name select the same series with
// match, so a refresh's other queries get the first's answer from the memo, read-only, without match run again,
// until the endpoint's next write. Only reads of a refresh's few new steps (at most CursorSteps) are shared, and
// an empty filter shares nothing. matched is how many series match selected, those without a rate at the steps
// included, which a caller counting the series it reads counts as match would have.
func (s *Store) SelectRatesShared(endpoint, name string, from, to int64, steps []int64, window int64, filter string, match func(exposition.Labels) bool, maxPoints int) (out []Series, matched int, fits bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, 0, true
	}
	defer ep.mu.RUnlock()
	read := func() ([]Series, selection, bool) {
		return ep.rateSelection(name, from, to, steps, window, match, maxPoints)
	}
	if filter == "" || len(steps) == 0 || len(steps) > CursorSteps {
		// A cold range's rates fill the memo's bound already: sharing them too would count them twice.
		out, p, fits := read()
		return out, len(p.ids), fits
	}
	key := sharedKey{rateKey: rateKeyOf(name, ep.rangeLo(from), to, steps, window), filter: filter}
	return ep.shareSelection(key, maxPoints, read, func([]Series) bool { return true })
}

// rateKeyOf names the rates of name's series over [lo, hi] at steps, over window.
func rateKeyOf(name string, lo, hi int64, steps []int64, window int64) rateKey {
	return rateKey{memoKey: memoKey{name: name, lo: lo, hi: hi}, first: steps[0], last: steps[len(steps)-1], n: len(steps), window: window}
}

// shareSelection answers a read named by key from the memo, or by read, keeping read's answer for the next when
// keep allows it; a memoized answer whose point total passes maxPoints is refused as read would refuse it.
func (ep *endpoint) shareSelection(key sharedKey, maxPoints int, read func() ([]Series, selection, bool), keep func([]Series) bool) (out []Series, matched int, fits bool) {
	if sel, ok := ep.memo.sharedSelection(key); ok {
		if maxPoints > 0 && sel.total > maxPoints {
			return nil, 0, false
		}
		return sel.series, sel.matched, true
	}
	out, p, fits := read()
	if fits && keep(out) {
		ep.memo.keepShared(ep.st, key, sharedSelection{series: out, matched: len(p.ids), total: p.total})
	}
	return out, len(p.ids), fits
}

// selectRates implements SelectRates under the read lock.
func (ep *endpoint) selectRates(name string, from, to int64, steps []int64, window int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	out, _, fits := ep.rateSelection(name, from, to, steps, window, match, maxPoints)
	return out, fits
}

// rateSelection is selectRates with the selection it read.
func (ep *endpoint) rateSelection(name string, from, to int64, steps []int64, window int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, selection, bool) {
	p, fits := ep.pick(name, from, to, match, maxPoints)
	if !fits || len(p.ids) == 0 || len(steps) == 0 {
		return nil, p, fits
	}
	key := rateKeyOf(name, p.lo, p.hi, steps, window)
	got := make([]*derive.StepRates, len(p.ids))
	found := ep.memo.lookupRates(key, p.ids, got)
	if found < len(p.ids) && len(steps) <= CursorSteps {
		found += ep.rateByCursors(p, steps, window, key, got)
	}
	if found < len(p.ids) {
		ep.rateMissing(p, steps, window, key, got)
	}
	out := make([]Series, 0, len(p.ids))
	for i, id := range p.ids {
		if got[i].Points() == 0 {
			continue
		}
		out = append(out, Series{Name: ep.series[id].id.name, Labels: ep.labels(id), Rates: got[i]})
	}
	return out, p, true
}

// rateMissing fills got[i], where nil, with p.ids[i]'s rates at steps from its points, and memoizes them under key.
// A series whose streams equal those of the series rated before it has the same points, so it shares that series'
// rates rather than being decoded and rated again: a histogram's buckets above its largest observation all hold its
// count, those below its smallest hold zero, and at fleet scale half the bucket series of an hour are such copies.
func (ep *endpoint) rateMissing(p selection, steps []int64, window int64, key rateKey, got []*derive.StepRates) {
	distinct := selection{name: p.name, lo: p.lo, hi: p.hi, blocks: p.blocks, withHead: p.withHead}
	var ids []int32
	var at, of []int // got[at[j]] is ids[j]'s, rated as distinct.ids[of[j]]
	for i, id := range p.ids {
		if got[i] != nil {
			continue
		}
		if len(ids) == 0 || !ep.sameStreams(p, ids[len(ids)-1], id) {
			distinct.ids, distinct.counts = append(distinct.ids, id), append(distinct.counts, p.counts[i])
		}
		ids, at, of = append(ids, id), append(at, i), append(of, len(distinct.ids)-1)
	}
	// The points are not kept, only their rates: the query's other reads at these steps take the rates, and
	// an hour's points are six times their size. So they are not even copied out of the decoding's buffer.
	var rates []derive.StepRates
	ep.withPoints(distinct, distinct.lo, func(pts [][]derive.Point) { rates = derive.RatesOf(pts, steps, window) })
	ep.memo.keepRates(ep.st, key, ids, shareRates(got, at, of, rates))
}

// shareRates sets got[at[j]] to &rates[of[j]] and returns those pointers in at's order, as keepRates takes them:
// series sharing rates share one pointer.
func shareRates(got []*derive.StepRates, at, of []int, rates []derive.StepRates) []*derive.StepRates {
	kept := make([]*derive.StepRates, len(at))
	for j, i := range at {
		got[i] = &rates[of[j]]
		kept[j] = got[i]
	}
	return kept
}

// sameStreams reports whether series x and y have the same points in p's blocks and, if p reads it, the head.
func (ep *endpoint) sameStreams(p selection, x, y int32) bool {
	for _, b := range p.blocks {
		if !b.sameStream(x, y) {
			return false
		}
	}
	return !p.withHead || ep.head.sameStream(x, y)
}

// rateByCursors fills got[i], where nil, with p.ids[i]'s rates at steps from its rate cursor (cursor.go), and
// memoizes them under key for the refresh's other queries; it returns how many it filled. The others are left nil,
// to be rated from their points. A series whose streams in p's blocks equal those of the series rated before it
// has its rates (see rateMissing), and its cursor stays where it is: a new step reads the head and perhaps the last
// block, so the comparison is short.
func (ep *endpoint) rateByCursors(p selection, steps []int64, window int64, key rateKey, got []*derive.StepRates) int {
	v, has := make([]float64, len(steps)), make([]bool, len(steps))
	ids, at, of := make([]int32, 0, len(p.ids)), make([]int, 0, len(p.ids)), make([]int, 0, len(p.ids))
	rates, buf := make([]derive.StepRates, 0, len(p.ids)), derive.NewStepRatesBuf(len(p.ids), len(steps))
	ep.cursors.mu.Lock()
	slots := ep.slots(window)
	for i, id := range p.ids {
		if got[i] != nil || int(id) >= len(slots) {
			continue
		}
		if len(ids) > 0 && ep.sameStreams(p, ids[len(ids)-1], id) {
			ids, at, of = append(ids, id), append(at, i), append(of, of[len(of)-1])
			continue
		}
		points, st := ep.cursorRates(&slots[id], id, p.lo, p.hi, steps, window, v, has)
		if st != cursorRated {
			continue
		}
		ids, at, of = append(ids, id), append(at, i), append(of, len(rates))
		rates = append(rates, buf.Of(v, has, points))
	}
	ep.cursors.mu.Unlock()
	ep.memo.keepRates(ep.st, key, ids, shareRates(got, at, of, rates))
	return len(ids)
}

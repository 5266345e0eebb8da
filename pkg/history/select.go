package history

import (
	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// Select returns copies of the points with from <= T <= to of every series
// named name (the full sample name, e.g. "vllm:x_bucket") on endpoint whose
// labels satisfy match (nil matches all), in the order the series were
// first seen.
// Points older than the retention cutoff are never returned. Staleness
// markers are included: callers skip points whose bits equal
// derive.StaleNaN. match runs under the endpoint's read lock and must neither
// keep nor modify the labels it is given.
func (s *Store) Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool) []Series {
	out, _ := s.SelectBounded(endpoint, name, from, to, match, 0)
	return out
}

// SelectBounded is Select that returns nothing and false, before decoding anything, when the selection holds
// more than maxPoints points (0: no bound), so a query's budget holds however large one selection is.
func (s *Store) SelectBounded(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, true
	}
	defer ep.mu.RUnlock()
	return ep.selectSeries(name, from, to, match, maxPoints)
}

// selectSeries implements SelectBounded under the read lock.
func (ep *endpoint) selectSeries(name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	lo, hi := max(from, ep.floor()), to
	ids := ep.byName[name]
	if lo > hi || len(ids) == 0 || !ep.hasRows {
		return nil, true
	}
	// Blocks overlapping [lo, hi], the head last.
	var blocks []*block
	for _, b := range ep.blocks {
		if b.minT <= hi && b.maxT >= lo {
			blocks = append(blocks, b)
		}
	}
	withHead := len(ep.head.ts) > 0 && ep.head.minT <= hi && ep.head.maxT >= lo

	// First pass: pick series and bound their point counts from the stream
	// headers, so one array holds all points and one all labels.
	picked := make([]int32, 0, len(ids))
	total, nLabels := 0, 0
	for _, id := range ids {
		x := ep.series[id].id
		n := 0
		for _, b := range blocks {
			if st, ok := b.stream(id); ok {
				n += st.n
			}
		}
		if withHead {
			if st, ok := ep.head.stream(id); ok {
				n += st.n
			}
		}
		// match only sees series with points in the blocks read, so a caller counting matches counts those.
		if n == 0 || match != nil && !match(x.labels) {
			continue
		}
		picked = append(picked, id)
		total += n
		nLabels += len(x.labels)
	}
	if maxPoints > 0 && total > maxPoints {
		return nil, false
	}
	if len(picked) == 0 {
		return nil, true
	}
	out := make([]Series, 0, len(picked))
	pts := make([]derive.Point, 0, total)
	labels := make(exposition.Labels, 0, nLabels)
	for _, id := range picked {
		x := ep.series[id].id
		start := len(pts)
		for _, b := range blocks {
			if st, ok := b.stream(id); ok {
				pts = st.decode(pts, lo, hi)
			}
		}
		if withHead {
			if st, ok := ep.head.stream(id); ok {
				pts = st.decode(pts, lo, hi)
			}
		}
		if len(pts) == start {
			continue
		}
		sr := Series{Name: x.name, Points: pts[start:len(pts):len(pts)]}
		if len(x.labels) > 0 {
			l0 := len(labels)
			labels = append(labels, x.labels...)
			sr.Labels = labels[l0:len(labels):len(labels)]
		}
		out = append(out, sr)
	}
	return out, true
}

package history

import (
	"sync"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// Select returns the points with from <= T <= to of every series
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
	return s.SelectLatest(endpoint, name, from, from, to, match, maxPoints)
}

// SelectLatest is SelectBounded that keeps, of each series' points before carry, only the newest: all that an
// instant value at carry or later reads (the newest point at or before it), so a gauge's lookback is decoded but
// not copied. The point bound counts what the blocks hold, as SelectBounded's does.
func (s *Store) SelectLatest(endpoint, name string, from, carry, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, true
	}
	defer ep.mu.RUnlock()
	return ep.selectSeries(name, from, carry, to, match, maxPoints)
}

// SelectLatestShared is SelectLatest for a filter named by filter, sharing whole selections between reads with one
// name as SelectRatesShared does: those of a refresh's new steps (sharedLatestPoints).
func (s *Store) SelectLatestShared(endpoint, name string, from, carry, to int64, filter string, match func(exposition.Labels) bool, maxPoints int) (out []Series, matched int, fits bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil, 0, true
	}
	defer ep.mu.RUnlock()
	read := func() ([]Series, selection, bool) { return ep.latestSelection(name, from, carry, to, match, maxPoints) }
	if filter == "" {
		out, p, fits := read()
		return out, len(p.ids), fits
	}
	// The rate key's steps stay zero: an instant read has none, and carry is part of the memoKey.
	key := sharedKey{rateKey: rateKey{memoKey: memoKey{name: name, lo: ep.rangeLo(from), hi: to, carry: carry}}, filter: filter}
	return ep.shareSelection(key, maxPoints, read, func(out []Series) bool { return points(out) <= sharedLatestPoints*len(out) })
}

// sharedLatestPoints is how many points per series an instant read shared with the refresh's other reads holds at
// most on average: a new step's few. A cold range's points fill the memo's bound already; sharing them too would
// count them twice.
const sharedLatestPoints = 4

// points is how many points series hold.
func points(series []Series) int {
	n := 0
	for i := range series {
		n += len(series[i].Points)
	}
	return n
}

// selectSeries implements SelectLatest under the read lock.
func (ep *endpoint) selectSeries(name string, from, carry, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	out, _, fits := ep.latestSelection(name, from, carry, to, match, maxPoints)
	return out, fits
}

// latestSelection is selectSeries with the selection it read.
func (ep *endpoint) latestSelection(name string, from, carry, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, selection, bool) {
	p, fits := ep.pick(name, from, to, match, maxPoints)
	if !fits || len(p.ids) == 0 {
		return nil, p, fits
	}
	carry = max(carry, p.lo)
	got := ep.points(p, carry, true)
	out := make([]Series, 0, len(p.ids))
	for i, id := range p.ids {
		if len(got[i]) == 0 {
			continue
		}
		out = append(out, Series{Name: ep.series[id].id.name, Labels: ep.labels(id), Points: got[i]})
	}
	return out, p, true
}

// labels is series id's labels, shared: the interned identity's, which never change, with no room to append to.
func (ep *endpoint) labels(id int32) exposition.Labels {
	ls := ep.series[id].id.labels
	return ls[:len(ls):len(ls)]
}

// selection is a selection's first pass: the range read, the blocks overlapping it, and the series picked with how
// many points each has in those blocks.
type selection struct {
	name     string
	lo, hi   int64
	blocks   []*block
	withHead bool
	ids      []int32
	counts   []int
	total    int
}

// rangeLo is where a read from from starts: not before the retention cutoff. A shared selection's name uses it as
// pick does.
func (ep *endpoint) rangeLo(from int64) int64 { return max(from, ep.floor()) }

// pick is a selection's first pass: it picks series and bounds their point counts from the stream headers (counted
// once per refresh, see memo), so the point budget holds before anything is decoded. fits is false, with nothing
// picked, when the series picked hold more than maxPoints points (0: no bound).
func (ep *endpoint) pick(name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) (p selection, fits bool) {
	p = selection{name: name, lo: ep.rangeLo(from), hi: to}
	ids := ep.byName[name]
	if p.lo > p.hi || len(ids) == 0 || !ep.hasRows {
		return p, true
	}
	p.blocks, p.withHead = ep.overlapping(p.lo, p.hi)
	key := memoKey{name: name, lo: p.lo, hi: p.hi}
	cands, counts := ep.memo.counted(key)
	if cands == nil {
		cands, counts = ep.count(ids, p.blocks, p.withHead)
		ep.memo.keepCounts(ep.st, key, cands, counts)
	}
	p.ids = make([]int32, 0, len(cands))
	for i, id := range cands {
		x := ep.series[id].id
		// match only sees series with points in the blocks read, so a caller counting matches counts those.
		if match != nil && !match(x.labels) {
			continue
		}
		p.ids, p.counts = append(p.ids, id), append(p.counts, int(counts[i]))
		p.total += int(counts[i])
	}
	if maxPoints > 0 && p.total > maxPoints {
		return selection{}, false
	}
	return p, true
}

// overlapping lists the blocks overlapping [lo, hi], oldest first, and whether the head does.
func (ep *endpoint) overlapping(lo, hi int64) (blocks []*block, withHead bool) {
	for _, b := range ep.blocks {
		if b.minT <= hi && b.maxT >= lo {
			blocks = append(blocks, b)
		}
	}
	return blocks, len(ep.head.ts) > 0 && ep.head.minT <= hi && ep.head.maxT >= lo
}

// SelectLabels calls each with the labels of every series named name on endpoint that Select's match would see for
// [from, to]: those with points in the blocks overlapping it. It neither counts nor decodes points, and looks for a
// series' points from the newest block back, so a read of labels alone (a histogram's bucket bounds over an hour)
// costs about one look per series, not one per series and block.
func (s *Store) SelectLabels(endpoint, name string, from, to int64, each func(exposition.Labels)) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return
	}
	defer ep.mu.RUnlock()
	lo := ep.rangeLo(from)
	ids := ep.byName[name]
	if lo > to || len(ids) == 0 || !ep.hasRows {
		return
	}
	blocks, withHead := ep.overlapping(lo, to)
	for _, id := range ids {
		found := withHead && ep.head.points(id) > 0
		for i := len(blocks) - 1; i >= 0 && !found; i-- {
			found = blocks[i].points(id) > 0
		}
		if found {
			each(ep.labels(id))
		}
	}
}

// points is the second pass of a selection: it takes what another query of this refresh decoded and decodes the
// rest into one array, keeping it for the next query if keep; the points are shared, so Series are read-only.
func (ep *endpoint) points(p selection, carry int64, keep bool) [][]derive.Point {
	got, missing, at, bound := ep.memoized(p, carry)
	if len(missing) == 0 {
		return got
	}
	decoded := ep.decode(missing, p.blocks, p.withHead, p.lo, carry, p.hi, bound)
	for j, i := range at {
		got[i] = decoded[j]
	}
	if keep {
		ep.memo.keep(ep.st, memoKeyOf(p, carry), missing, decoded)
	}
	return got
}

// withPoints calls f with what points would return, without keeping what it decodes: the series another query of
// this refresh decoded come from the memo, the rest from a scratch buffer that is reused once f returns (f keeps
// nothing of them). A read that keeps only what it computes from the points (SelectRates) saves copying them.
func (ep *endpoint) withPoints(p selection, carry int64, f func([][]derive.Point)) {
	got, missing, at, bound := ep.memoized(p, carry)
	if len(missing) == 0 {
		f(got)
		return
	}
	scratch, pts, ends := ep.decodeScratch(missing, p.blocks, p.withHead, p.lo, carry, p.hi, bound)
	start := 0
	for j, i := range at {
		got[i] = pts[start:ends[j]:ends[j]]
		start = ends[j]
	}
	f(got)
	releaseScratch(scratch, pts)
}

// memoKeyOf names p's decoded points in the memo.
func memoKeyOf(p selection, carry int64) memoKey {
	return memoKey{name: p.name, lo: p.lo, hi: p.hi, carry: carry}
}

// memoized returns p's series' points that the memo holds (nil for the others), the ids of the others, where they
// go in got, and how many points the blocks read hold for them.
func (ep *endpoint) memoized(p selection, carry int64) (got [][]derive.Point, missing []int32, at []int, bound int) {
	got = make([][]derive.Point, len(p.ids))
	if ep.memo.lookup(memoKeyOf(p, carry), p.ids, got) == len(p.ids) {
		return got, nil, nil, 0
	}
	missing = make([]int32, 0, len(p.ids))
	for i, id := range p.ids {
		if got[i] == nil {
			missing, at = append(missing, id), append(at, i)
			bound += p.counts[i]
		}
	}
	return got, missing, at, bound
}

// count returns the ids with points in blocks (and the head if withHead), with how many each has there.
func (ep *endpoint) count(ids []int32, blocks []*block, withHead bool) (cands, counts []int32) {
	cands, counts = make([]int32, 0, len(ids)), make([]int32, 0, len(ids))
	for _, id := range ids {
		n := 0
		for _, b := range blocks {
			n += b.points(id)
		}
		if withHead {
			n += ep.head.points(id)
		}
		if n > 0 {
			cands, counts = append(cands, id), append(counts, int32(n)) // #nosec G115 -- at most blockRows points per block, blocks of one retention
		}
	}
	return cands, counts
}

// decode returns the points in [lo, hi] of each of ids from blocks (and the head if withHead), of those before
// carry only the newest, in one array of the exact size (a range usually takes a part of the blocks it overlaps);
// each series' slice is full, so appending to it copies. bound is how many points the blocks hold for ids, so the
// scratch it decodes into never grows.
func (ep *endpoint) decode(ids []int32, blocks []*block, withHead bool, lo, carry, hi int64, bound int) [][]derive.Point {
	scratch, pts, ends := ep.decodeScratch(ids, blocks, withHead, lo, carry, hi, bound)
	exact := make([]derive.Point, len(pts))
	copy(exact, pts)
	releaseScratch(scratch, pts)
	out := make([][]derive.Point, len(ids))
	start := 0
	for i, end := range ends {
		out[i] = exact[start:end:end]
		start = end
	}
	return out
}

// decodeScratch decodes as decode does into a buffer from scratchPool: ids[i]'s points are pts[ends[i-1]:ends[i]].
// The caller gives the buffer back with releaseScratch once it no longer reads pts.
func (ep *endpoint) decodeScratch(ids []int32, blocks []*block, withHead bool, lo, carry, hi int64, bound int) (scratch *[]derive.Point, pts []derive.Point, ends []int) {
	scratch = scratchPool.Get().(*[]derive.Point)
	if cap(*scratch) < bound {
		*scratch = make([]derive.Point, 0, bound)
	}
	pts = (*scratch)[:0]
	ends = make([]int, len(ids))
	start := 0 // of the series being decoded
	for i, id := range ids {
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
		pts = latestBefore(pts, start, carry)
		start = len(pts)
		ends[i] = len(pts)
	}
	return scratch, pts, ends
}

// releaseScratch gives decodeScratch's buffer back, holding pts, unless it is too large to keep.
func releaseScratch(scratch *[]derive.Point, pts []derive.Point) {
	if cap(pts) <= maxScratchPoints {
		*scratch = pts[:0]
		scratchPool.Put(scratch)
	}
}

// latestBefore drops from pts[start:] (one series' points, ascending) every point before carry but the newest.
func latestBefore(pts []derive.Point, start int, carry int64) []derive.Point {
	j := start
	for j < len(pts) && pts[j].T < carry {
		j++
	}
	if j-start < 2 {
		return pts
	}
	pts[start] = pts[j-1]
	return append(pts[:start+1], pts[j:]...)
}

// scratchPool holds the buffers selections decode into before they know their size.
var scratchPool = sync.Pool{New: func() any { return new([]derive.Point) }}

// maxScratchPoints bounds a buffer kept in scratchPool (16 MiB), so one large selection does not pin its buffer.
const maxScratchPoints = 1 << 20

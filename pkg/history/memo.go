package history

import (
	"sync"
	"sync/atomic"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// The queries of one dashboard refresh read the same sample names over the same ranges: the fleet overview reads
// the TTFT buckets of every endpoint up to seven times. A memo keeps what one of them decoded for the others until
// the endpoint's next write, so each series is decoded once per refresh rather than once per query.

// memoKey names one decoded range of one sample name; carry is where a latest-only selection starts keeping every
// point (see SelectLatest), lo for a plain one and 0 for a first pass, which does not depend on it.
type memoKey struct {
	name          string
	lo, hi, carry int64
}

// memo holds an endpoint's decoded selections since its last write. Readers share it under the endpoint's read
// lock, so it has a lock of its own; a writer drops it under the write lock.
type memo struct {
	mu   sync.Mutex
	sels map[memoKey]map[int32][]derive.Point
	// counts holds, per key, the series with points in the range's blocks and how many each has there.
	counts map[memoKey]memoCounts
	// rates holds selections' rates at steps (SelectRates).
	rates map[rateKey]map[int32]*derive.StepRates
	// shared holds whole selections of a refresh's new steps by filter (SelectRatesShared, SelectLatestShared).
	shared map[sharedKey]sharedSelection
	// bytes and rateBytes are what the memo holds, counted in Store.memoBytes and Store.ratesBytes.
	bytes, rateBytes int64
}

// memoCounts is the first pass of a selection: candidate series and their point counts.
type memoCounts struct{ ids, counts []int32 }

// memoPointSize and memoSeriesSize estimate what a memoized point and series entry hold.
const (
	memoPointSize  = 16
	memoSeriesSize = 48
)

// DefaultMemoBytes bounds the decoded points all endpoints' memos hold together when Options.MemoBytes is 0.
const DefaultMemoBytes = 64 << 20

// lookup returns the memoized points of ids for key (nil where none), and how many it found.
func (m *memo) lookup(key memoKey, ids []int32, dst [][]derive.Point) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoized(m.sels[key], ids, dst)
}

// keep memoizes the decoded points of ids for key while the store's memo budget allows.
func (m *memo) keep(s *Store, key memoKey, ids []int32, pts [][]derive.Point) {
	var cost int64
	for i := range ids {
		cost += memoSeriesSize + memoPointSize*int64(len(pts[i]))
	}
	if !s.reserveMemo(cost) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	put(&m.sels, key, ids, func(i int) []derive.Point { return pts[i] })
	m.bytes += cost
}

// sharedKey names a selection with the filter that picked its series: a rate read's (rates set) or an instant
// read's.
type sharedKey struct {
	rateKey
	filter string
}

// sharedSelection is a selection's answer: its series, how many series matched (with or without points or rates
// in the range) and how many points the blocks read hold for them, the bound a later read checks against its own.
type sharedSelection struct {
	series         []Series
	matched, total int
}

// sharedSelectionSize estimates a shared selection's map entry and slice header, besides what its series hold.
const sharedSelectionSize = 128

// sharedSelection returns the memoized selection for key.
func (m *memo) sharedSelection(key sharedKey) (sharedSelection, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sel, ok := m.shared[key]
	return sel, ok
}

// keepShared memoizes sel for key while the store's bound for rates allows. It counts the points and rates its
// series hold too: the memo may hold them already, or may not have had room for them.
func (m *memo) keepShared(s *Store, key sharedKey, sel sharedSelection) {
	cost := sharedSelectionSize + int64(len(key.name)+len(key.filter))
	for i := range sel.series {
		cost += 80 + memoPointSize*int64(len(sel.series[i].Points))
		if r := sel.series[i].Rates; r != nil && (i == 0 || r != sel.series[i-1].Rates) {
			cost += r.Bytes()
		}
	}
	if !reserve(&s.ratesBytes, cost, s.memoMax) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.shared[key]; ok {
		s.ratesBytes.Add(-cost) // another query kept it meanwhile
		return
	}
	if m.shared == nil {
		m.shared = make(map[sharedKey]sharedSelection)
	}
	m.shared[key] = sel
	m.rateBytes += cost
}

// lookupRates fills got with the memoized rates of ids for key (nil where none), and returns how many it found.
func (m *memo) lookupRates(key rateKey, ids []int32, got []*derive.StepRates) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoized(m.rates[key], ids, got)
}

// keepRates memoizes rates[i] as the rates of ids[i] for key while the store's memo budget allows. Rates shared
// by consecutive series (rateMissing) are counted once.
func (m *memo) keepRates(s *Store, key rateKey, ids []int32, rates []*derive.StepRates) {
	var cost int64
	for i, r := range rates {
		cost += memoSeriesSize
		if i == 0 || r != rates[i-1] {
			cost += r.Bytes()
		}
	}
	if !reserve(&s.ratesBytes, cost, s.memoMax) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	put(&m.rates, key, ids, func(i int) *derive.StepRates { return rates[i] })
	m.rateBytes += cost
}

// memoized sets dst[i] to sel's entry for ids[i] where it has one, and returns how many it had.
func memoized[V any](sel map[int32]V, ids []int32, dst []V) int {
	found := 0
	for i, id := range ids {
		if v, ok := sel[id]; ok {
			dst[i] = v
			found++
		}
	}
	return found
}

// put stores val(i) as the entry of ids[i] under key in *sels, making the maps it lacks.
func put[K comparable, V any](sels *map[K]map[int32]V, key K, ids []int32, val func(int) V) {
	if *sels == nil {
		*sels = make(map[K]map[int32]V)
	}
	sel := (*sels)[key]
	if sel == nil {
		sel = make(map[int32]V, len(ids))
		(*sels)[key] = sel
	}
	for i, id := range ids {
		sel[id] = val(i)
	}
}

// counted returns the memoized first pass for key, nil ids if there is none.
func (m *memo) counted(key memoKey) (ids, counts []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counts[key]
	return c.ids, c.counts
}

// keepCounts memoizes the first pass for key while the store's memo budget allows.
func (m *memo) keepCounts(s *Store, key memoKey, ids, counts []int32) {
	cost := int64(64 + 4*cap(ids) + 4*cap(counts))
	if !s.reserveMemo(cost) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = make(map[memoKey]memoCounts)
	}
	if _, ok := m.counts[key]; ok {
		s.memoBytes.Add(-cost) // another query counted it meanwhile
		return
	}
	m.counts[key] = memoCounts{ids: ids, counts: counts}
	m.bytes += cost
}

// reserveMemo counts cost against the memo bound for points, reporting false (and counting nothing) when it does
// not fit.
func (s *Store) reserveMemo(cost int64) bool { return reserve(&s.memoBytes, cost, s.memoMax) }

// reserve adds cost to held unless that passes bound, and reports whether it did. Points and rates are bounded
// apart: a cold refresh's gauges and diagnosis fill the points' bound, and would otherwise crowd out the rates of
// the histograms its other queries read again.
func reserve(held *atomic.Int64, cost, bound int64) bool {
	if held.Add(cost) > bound {
		held.Add(-cost)
		return false
	}
	return true
}

// drop forgets everything memoized: the caller holds the endpoint's write lock, so no reader uses the memo.
func (m *memo) drop(s *Store) {
	if m.bytes == 0 && m.rateBytes == 0 {
		return
	}
	s.memoBytes.Add(-m.bytes)
	s.ratesBytes.Add(-m.rateBytes)
	m.sels, m.counts, m.rates, m.shared, m.bytes, m.rateBytes = nil, nil, nil, nil, 0, 0
}

// lock write-locks the endpoint and drops its memo, which any write may make wrong.
func (ep *endpoint) lock() {
	ep.mu.Lock()
	ep.memo.drop(ep.st)
}

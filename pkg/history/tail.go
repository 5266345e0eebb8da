package history

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// A warm dashboard refresh evaluates only its new steps, and each reads the last rate window of every selected
// series: the newest minutes, which sit in the head and the block before it. Decoding those from their streams'
// starts on every refresh was most of a warm refresh's cost. A tail keeps a series' newest points decoded once a
// query has read them, and the writer extends it with each point it appends (the writer knows the value, so the
// head's encoding — integer deltas re-encoded as XOR, a head sealed into a block — never matters). A selection
// whose range starts inside a tail is answered from it without decoding.

// Tail bounds and defaults.
const (
	// tailSpan is how far back from the newest scrape a selection may start to become a tail: a 5-minute rate
	// window at the newest steps of a refresh every few minutes, with room for a scrape interval's lookback.
	tailSpan = int64(12 * time.Minute / time.Millisecond)
	// tailSlack is how much further back than its first selection reached a tail keeps points, for the steps a
	// refresh adds (and the window moving with them) and a scrape arriving late.
	tailSlack = int64(time.Minute / time.Millisecond)
	// tailIdle is how long a tail no selection has read lives on, so a closed dashboard's tails go.
	tailIdle = int64(15 * time.Minute / time.Millisecond)
	// tailEntrySize estimates a tail's own allocation and slot beyond its points.
	tailEntrySize = 96
	// DefaultTailBytes bounds the points all endpoints' tails hold together when Options.TailBytes is 0: a
	// 256-endpoint fleet overview's tails need about 100 MiB.
	DefaultTailBytes = 128 << 20
)

// tail holds every point of one series at or after from, in increasing time.
type tail struct {
	from int64
	// keep is how far back from its newest point the tail keeps points when it compacts.
	keep int64
	// pts is appended to by the writer only; readers take capacity-capped subslices, so an append never writes
	// where a reader looks, and a compaction allocates a new array.
	pts []derive.Point
	// read is the endpoint's newest time when a selection last read the tail.
	read atomic.Int64
}

// tails are an endpoint's decoded series tails. Readers (under the endpoint's read lock) look up and add entries
// under mu; the writer holds the endpoint's write lock, so no reader is present.
type tails struct {
	mu sync.Mutex
	// m is indexed by series id (nil: no tail), so the writer's check for every point it appends is an index.
	m []*tail
	// n is how many entries of m hold a tail.
	n int
	// bytes is what these tails hold, counted in Store.tailBytes.
	bytes int64
}

// cost is what a tail of capacity c holds.
func tailCost(c int) int64 { return tailEntrySize + memoPointSize*int64(c) }

// serve sets got[i] to the points in [lo, hi] of every picked series whose tail covers lo, marking those tails read
// at now, and returns how many it set.
func (ts *tails) serve(picked []int32, got [][]derive.Point, lo, hi, now int64) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.m) == 0 {
		return 0
	}
	n := 0
	for i, id := range picked {
		tl := ts.get(id)
		if tl == nil || tl.from > lo {
			continue
		}
		got[i] = within(tl.pts, lo, hi)
		if got[i] == nil {
			got[i] = noPoints // served, with no points in range
		}
		tl.read.Store(now)
		n++
	}
	return n
}

// noPoints is a served selection's empty answer: not nil, so it is not decoded again.
var noPoints = []derive.Point{}

// within is the capacity-capped part of pts (in increasing time) with lo <= T <= hi.
func within(pts []derive.Point, lo, hi int64) []derive.Point {
	a := sort.Search(len(pts), func(j int) bool { return pts[j].T >= lo })
	b := a + sort.Search(len(pts)-a, func(j int) bool { return pts[a+j].T > hi })
	return pts[a:b:b]
}

// start keeps the decoded points of ids (all their points from lo on) as their tails, within the store's budget.
func (ts *tails) start(s *Store, ids []int32, pts [][]derive.Point, lo, now int64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for i, id := range ids {
		old := ts.get(id)
		if old != nil && old.from <= lo {
			continue // another query started it meanwhile
		}
		c := len(pts[i]) + len(pts[i])/2 + 8
		cost := tailCost(c)
		if !s.reserveTail(cost) {
			return
		}
		tl := &tail{from: lo, keep: min(now-lo, tailSpan) + tailSlack, pts: make([]derive.Point, len(pts[i]), c)}
		copy(tl.pts, pts[i])
		tl.read.Store(now)
		if int(id) >= len(ts.m) && !ts.grow(s, id) {
			s.tailBytes.Add(-cost)
			return
		}
		if old != nil { // a query reading further back: the longer tail replaces it
			cost -= tailCost(cap(old.pts))
			s.tailBytes.Add(-tailCost(cap(old.pts)))
		}
		if old == nil {
			ts.n++
		}
		ts.m[id] = tl
		ts.bytes += cost
	}
}

// grow extends the index to hold id, within the budget.
func (ts *tails) grow(s *Store, id int32) bool {
	if int(id) < cap(ts.m) {
		ts.m = ts.m[:id+1] // never shortened but to nil: the slots past len are nil
		return true
	}
	m := append(ts.m[:cap(ts.m)], make([]*tail, int(id)+1-cap(ts.m))...)
	slots := 8 * int64(cap(m)-cap(ts.m))
	if !s.reserveTail(slots) {
		return false
	}
	ts.m, ts.bytes = m, ts.bytes+slots
	return true
}

// get returns series id's tail or nil.
func (ts *tails) get(id int32) *tail {
	if int(id) < len(ts.m) {
		return ts.m[id]
	}
	return nil
}

// push appends series id's new point to its tail, if it has one: the tail drops its points older than its keep
// span when it fills up, and the whole tail goes when nobody has read it for tailIdle or it no longer fits the budget.
// The caller holds the endpoint's write lock.
func (ts *tails) push(s *Store, id int32, p derive.Point, now int64) {
	tl := ts.get(id)
	if tl == nil {
		return
	}
	if now-tl.read.Load() > tailIdle {
		ts.drop(s, id)
		return
	}
	if len(tl.pts) == cap(tl.pts) {
		cut := p.T - tl.keep
		k := sort.Search(len(tl.pts), func(j int) bool { return tl.pts[j].T >= cut })
		keep := len(tl.pts) - k
		c := keep + keep/2 + 8
		grow := tailCost(c) - tailCost(cap(tl.pts))
		if grow > 0 && !s.reserveTail(grow) {
			ts.drop(s, id)
			return
		}
		if grow < 0 {
			s.tailBytes.Add(grow)
		}
		ts.bytes += grow
		fresh := make([]derive.Point, keep, c)
		copy(fresh, tl.pts[k:])
		tl.pts = fresh
		if k > 0 {
			tl.from = max(tl.from, cut)
		}
	}
	tl.pts = append(tl.pts, p)
}

// drop forgets series id's tail. The caller holds the endpoint's write lock.
func (ts *tails) drop(s *Store, id int32) {
	tl := ts.get(id)
	if tl == nil {
		return
	}
	cost := tailCost(cap(tl.pts))
	ts.m[id], ts.n = nil, ts.n-1
	if ts.n == 0 {
		cost += 8 * int64(cap(ts.m)) // the last one: the index goes too
		ts.m = nil
	}
	s.tailBytes.Add(-cost)
	ts.bytes -= cost
}

// dropBefore forgets the tails that claim points before t, which trimming has taken from the blocks. The caller
// holds the endpoint's write lock.
func (ts *tails) dropBefore(s *Store, t int64) {
	for id, tl := range ts.m {
		if tl != nil && tl.from < t {
			ts.drop(s, int32(id)) // #nosec G115 -- indexed by series id, an int32
		}
	}
}

// clear forgets every tail. The caller holds the endpoint's write lock.
func (ts *tails) clear(s *Store) {
	s.tailBytes.Add(-ts.bytes)
	ts.m, ts.n, ts.bytes = nil, 0, 0
}

// reserveTail counts cost against the tails' bound, reporting false (and counting nothing) when it does not fit.
func (s *Store) reserveTail(cost int64) bool {
	if s.tailBytes.Add(cost) > s.tailMax {
		s.tailBytes.Add(-cost)
		return false
	}
	return true
}

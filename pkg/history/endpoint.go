package history

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// endpoint is the history of one scrape target. All fields but name and st
// are guarded by mu.
type endpoint struct {
	mu      sync.RWMutex
	name    string
	st      *Store
	removed bool
	// span is what Span reads, published at the end of every write (settle): every query reads it for every
	// endpoint it selects, without taking mu. nil once removed.
	span atomic.Pointer[spanState]

	// series is indexed by series id; freed ids (id == nil) are in free.
	series []series
	free   []int32
	// lookup maps seriesHash to the id; hash collisions go to coll.
	lookup map[uint64]int32
	coll   map[uint64][]int32
	byName map[string][]int32

	// prev lists the series of the last successful scrape (in sample order)
	// that have no staleness marker since; cur is the scratch for the next.
	prev, cur []int32

	// memo keeps decoded selections between the queries of a refresh, until the next write.
	memo memo
	// cursors keep rate windows from one refresh to the next (cursor.go).
	cursors cursors

	blocks  []*block // sealed, oldest first
	head    headBlock
	nextSeq uint64
	rowSeq  uint64 // number of rows ever appended
	lastT   int64  // time of the newest row
	hasRows bool
	// rev is the store-wide revision stamp of the last change that can alter answers about past rows: a sample
	// name gained or lost, a point written at or before an earlier row (its own timestamp) or the store's
	// watermark (Store.AdvanceWatermark), the endpoint created.
	rev uint64
	// ownTimes is set once a point came with its own timestamp: such points may be stamped before the watermark
	// at every scrape, so the watermark no longer extends the endpoint's bounds (its newest is its newest scrape).
	ownTimes bool

	// Bytes accounting: blockBytes sums blocks[i].bytes, headBytes tracks
	// head.bytes incrementally; reported is what Store.bytes holds for us.
	blockBytes, headBytes, reported int64
}

// series is one entry of an endpoint's series table.
type series struct {
	id *ident
	// lastT is the time of the last point, to keep points in order.
	lastT int64
	// seen is the (truncated) rowSeq of the last scrape holding the series,
	// to skip duplicates within a scrape and find the ones that disappeared.
	seen uint32
	// lastSeq is the (truncated) seq of the newest block with a point of
	// the series, to forget series whose points were all trimmed. 32 bits
	// last 80 000 years of 10-minute blocks.
	lastSeq uint32
	// pos is the index in prev (or cur while a scrape is appended).
	pos  int32
	live bool // in prev
}

// seriesCost estimates a series table entry with its map slots.
const seriesCost = int64(unsafe.Sizeof(series{})) + 2*24

// newEndpoint returns an empty endpoint.
func newEndpoint(s *Store, name string) *endpoint {
	ep := &endpoint{name: name, st: s}
	ep.clear()
	ep.removed = false
	ep.publishSpan()
	return ep
}

// spanState is an endpoint's revision and the part of its bounds that only its writes change (bounds adds the
// store's watermark at reading).
type spanState struct {
	rev               uint64
	oldest, lastT     int64
	hasRows, ownTimes bool
}

// publishSpan publishes the endpoint's spanState; mu is write-held (or the endpoint not yet shared).
func (ep *endpoint) publishSpan() {
	st := &spanState{rev: ep.rev, lastT: ep.lastT, hasRows: ep.hasRows, ownTimes: ep.ownTimes}
	if ep.hasRows {
		st.oldest, _, _ = ep.bounds()
	}
	ep.span.Store(st)
}

// clear drops all data (for Remove) without touching mu.
func (ep *endpoint) clear() {
	ep.dropCursors() // seqs start again at 1: a cursor's block would be another's
	ep.series, ep.free, ep.prev, ep.cur, ep.blocks, ep.coll = nil, nil, nil, nil, nil, nil
	ep.lookup = make(map[uint64]int32)
	ep.byName = make(map[string][]int32)
	ep.nextSeq = 1
	ep.head = headBlock{seq: ep.nextSeq}
	ep.nextSeq++
	ep.rowSeq, ep.lastT, ep.hasRows, ep.ownTimes = 0, 0, false, false
	ep.rev = ep.st.revs.Add(1)
	ep.blockBytes, ep.headBytes, ep.reported = 0, 0, 0
}

// settle returns the change in the endpoint's bytes since the last call,
// for the store-wide counter.
func (ep *endpoint) settle() int64 {
	ep.publishSpan()
	now := ep.blockBytes + ep.headBytes + seriesCost*int64(len(ep.series)) +
		4*int64(cap(ep.prev)+cap(ep.cur)+cap(ep.free))
	d := now - ep.reported
	ep.reported = now
	return d
}

// newRow starts a row at t, sealing the head first if it is full.
func (ep *endpoint) newRow(t int64) uint8 {
	if len(ep.head.ts) == blockRows {
		ep.sealHead()
	}
	h := &ep.head
	if len(h.ts) == 0 {
		if h.ts == nil {
			h.ts = make([]int64, 0, blockRows)
			ep.headBytes += 8 * blockRows
		}
		h.minT, h.maxT = t, t
	}
	h.ts = append(h.ts, t)
	h.maxT = max(h.maxT, t)
	ep.rowSeq++
	ep.lastT, ep.hasRows = t, true
	return uint8(len(h.ts) - 1) // #nosec G115 -- a head holds at most blockRows (120) rows
}

// sealHead moves the head into a sealed block and starts a new head.
func (ep *endpoint) sealHead() {
	if len(ep.head.ts) == 0 {
		return
	}
	b := ep.head.seal()
	ep.blocks = append(ep.blocks, b)
	ep.blockBytes += b.bytes
	ep.head.reset(ep.nextSeq)
	ep.nextSeq++
	ep.headBytes = ep.head.bytes()
	ep.pruneCursors()
}

// append adds one scrape and reports whether its series were the previous scrape's (see Store.Append).
func (ep *endpoint) append(t int64, sc *exposition.Scrape) (same bool) {
	if ep.hasRows && t <= ep.lastT {
		return false
	}
	ep.trimRetention(t - ep.st.retention)
	prevT, hadRows := ep.lastT, ep.hasRows
	watermark := ep.st.watermark.Load()
	if t <= watermark {
		ep.rev = ep.st.revs.Add(1) // a row where the writer said none would come: readers may have taken that time as complete
	}
	row := ep.newRow(t)
	rs := uint32(ep.rowSeq) // #nosec G115 -- sequence numbers are kept in 32 bits; 2^32 scrapes are 136 years at 1 s
	cur := ep.cur[:0]
	hint := 0
	if sc != nil {
		for fi := range sc.Families {
			smps := sc.Families[fi].Samples
			for si := range smps {
				smp := &smps[si]
				id := ep.resolve(smp, &hint, rs)
				sr := &ep.series[id]
				if sr.seen == rs {
					continue // duplicate within the scrape: the first wins
				}
				sr.seen = rs
				sr.pos = int32(len(cur)) // #nosec G115 -- a scrape holds at most maxSamples (10 000 000) series
				cur = append(cur, id)
				pt, explicit := t, false
				if smp.HasTimestamp && smp.TimestampMs != t {
					pt, explicit = smp.TimestampMs, true
				}
				if pt <= sr.lastT {
					continue // out of order: dropped as Prometheus does
				}
				if explicit && (hadRows && pt <= prevT || !ep.ownTimes && pt <= watermark) {
					ep.rev = ep.st.revs.Add(1) // a point among earlier rows, or at or before the watermark, changes what they answered
				}
				ep.ownTimes = ep.ownTimes || explicit
				ep.headBytes += ep.head.appendPoint(id, row, pt, explicit, smp.Value)
				sr.lastT, sr.lastSeq = pt, uint32(ep.head.seq) // #nosec G115 -- sequence numbers are kept in 32 bits; 2^32 scrapes are 136 years at 1 s
			}
		}
	}
	for _, id := range ep.prev {
		if sr := &ep.series[id]; sr.seen != rs {
			ep.markStale(id, row, t)
		}
	}
	for _, id := range cur {
		ep.series[id].live = true
	}
	// The previous scrape's series are live, and a live series is never forgotten (dropBlocks): their ids still
	// stand for the same names and labels, so equal ids are equal series.
	same = len(cur) > 0 && slices.Equal(cur, ep.prev)
	ep.prev, ep.cur = cur, ep.prev[:0]
	return same
}

// markDown adds a row at t with a staleness marker for every live series.
func (ep *endpoint) markDown(t int64) {
	if !ep.hasRows || t <= ep.lastT || len(ep.prev) == 0 {
		return
	}
	ep.trimRetention(t - ep.st.retention)
	if t <= ep.st.watermark.Load() {
		ep.rev = ep.st.revs.Add(1) // as in append
	}
	row := ep.newRow(t)
	for _, id := range ep.prev {
		ep.markStale(id, row, t)
	}
	ep.prev = ep.prev[:0]
}

// markStale appends a staleness marker to series id at row (time t) and
// marks it not live. A series whose explicit timestamps run ahead of t gets
// none, since it would be out of order.
func (ep *endpoint) markStale(id int32, row uint8, t int64) {
	sr := &ep.series[id]
	sr.live = false
	if t <= sr.lastT {
		return
	}
	ownTS := false
	if x := ep.head.series[id].x; x != nil && x.ownTS {
		ownTS = true
	}
	ep.headBytes += ep.head.appendPoint(id, row, t, ownTS, derive.StaleNaN)
	sr.lastT, sr.lastSeq = t, uint32(ep.head.seq) // #nosec G115 -- sequence numbers are kept in 32 bits; 2^32 scrapes are 136 years at 1 s
}

// resolve returns the series id of smp, adding the series if it is new.
// Scrapes almost always list series in the same order, so the series after
// the previous match (prev[*hint]) is tried before hashing.
func (ep *endpoint) resolve(smp *exposition.Sample, hint *int, rs uint32) int32 {
	if *hint < len(ep.prev) {
		id := ep.prev[*hint]
		if x := ep.series[id].id; x.name == smp.Name && sameOrdered(x.labels, smp.Labels) {
			*hint++
			return id
		}
	}
	h := hashSeries(smp.Name, smp.Labels)
	id, ok := ep.find(h, smp)
	if !ok {
		return ep.add(h, smp)
	}
	if sr := &ep.series[id]; sr.live && sr.seen != rs {
		*hint = int(sr.pos) + 1 // resynchronise with the previous order
	}
	return id
}

// find looks a series up by hash and identity.
func (ep *endpoint) find(h uint64, smp *exposition.Sample) (int32, bool) {
	id, ok := ep.lookup[h]
	if !ok {
		return 0, false
	}
	if x := ep.series[id].id; x.name == smp.Name && sameLabelSet(x.labels, smp.Labels) {
		return id, true
	}
	for _, id := range ep.coll[h] {
		if x := ep.series[id].id; x.name == smp.Name && sameLabelSet(x.labels, smp.Labels) {
			return id, true
		}
	}
	return 0, false
}

// add creates a series for smp, copying its identity through the interner.
func (ep *endpoint) add(h uint64, smp *exposition.Sample) int32 {
	x := ep.st.syms.acquire(h, smp.Name, smp.Labels)
	var id int32
	if n := len(ep.free); n > 0 {
		id = ep.free[n-1]
		ep.free = ep.free[:n-1]
	} else {
		id = int32(len(ep.series)) // #nosec G115 -- series per endpoint are bounded by maxSamples (at most 10 000 000) per scrape times blockRows, below 2^31
		ep.series = append(ep.series, series{})
		oldCap := cap(ep.head.series)
		ep.head.series = append(ep.head.series, headSeries{})
		ep.headBytes += headSeriesSize * int64(cap(ep.head.series)-oldCap)
	}
	ep.series[id] = series{id: x, lastT: minTime}
	ep.head.series[id] = headSeries{}
	ep.head.series[id].leading = noWindow
	if _, taken := ep.lookup[h]; taken {
		if ep.coll == nil {
			ep.coll = make(map[uint64][]int32)
		}
		ep.coll[h] = append(ep.coll[h], id)
	} else {
		ep.lookup[h] = id
	}
	if len(ep.byName[x.name]) == 0 {
		ep.rev = ep.st.revs.Add(1)
	}
	ep.byName[x.name] = append(ep.byName[x.name], id)
	return id
}

// forget removes series id from the table; its points must all be gone.
func (ep *endpoint) forget(id int32) {
	sr := &ep.series[id]
	x := sr.id
	h := x.hash
	if ep.lookup[h] == id {
		if c := ep.coll[h]; len(c) > 0 {
			ep.lookup[h] = c[len(c)-1]
			ep.dropColl(h, c[len(c)-1])
		} else {
			delete(ep.lookup, h)
		}
	} else {
		ep.dropColl(h, id)
	}
	ids := ep.byName[x.name]
	for i, v := range ids {
		if v == id {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(ep.byName, x.name)
		ep.rev = ep.st.revs.Add(1)
	} else {
		ep.byName[x.name] = ids
	}
	ep.headBytes -= ep.head.series[id].cost()
	ep.head.series[id] = headSeries{}
	*sr = series{}
	ep.free = append(ep.free, id)
	ep.st.syms.release(x)
}

// dropColl removes id from the collision list of h.
func (ep *endpoint) dropColl(h uint64, id int32) {
	c := ep.coll[h]
	for i, v := range c {
		if v == id {
			c = append(c[:i], c[i+1:]...)
			break
		}
	}
	if len(c) == 0 {
		delete(ep.coll, h)
	} else {
		ep.coll[h] = c
	}
}

package history

import (
	"math"
	"sort"
	"sync"
	"unsafe"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// A refresh that adds a step rates, for every counter and histogram bucket its panels read, the points of one rate
// window: 60 scrapes for 5 minutes at 5 s, decoded from the start of each block they lie in. The next refresh's
// window is the same but for one step at either end. A rate cursor, kept per series and window from one refresh to
// the next, moves both ends of the window over the points that entered and left it and keeps all the rate needs:
// the window's first and last point, how many points it holds, and the value before each counter reset in it. A
// new step then decodes the points it adds and drops (three each at a 5 s scrape and a 15 s step).
//
// Cursors walk integer-coded streams only (counters and buckets without staleness markers, whose sums are exact);
// anything else is rated from its points as before. Before each use a cursor is checked against what may have moved
// under it since: its block trimmed, its series id given to another series, the head re-coded in XOR.

// CursorSteps bounds the steps a selection rates with cursors: a refresh's new steps are a few, while a cold hour's
// 240 steps decode every point anyway and would leave a cursor for every series it read.
const CursorSteps = 32

// cursorPos is a place in one series' points: after the first idx points of block seq's stream (none: before its
// first), which used bit bits of it; row, t and v are the last point read's.
type cursorPos struct {
	seq uint64
	idx int32
	bit uint32
	row int32
	t   int64
	v   int64
}

// rateCursor is one series' rate window as a refresh last left it.
type rateCursor struct {
	ident *ident // the series it belongs to: a freed id may be given to another series
	// first and last are the window's first and newest point while n > 0; last is where the walk goes on.
	first, last cursorPos
	n           int
	// dropSum adds the values before the window's counter resets (a point below the one before it), which the
	// increase includes (derive.counterIncrease).
	dropSum int64
	// start, lo and end are the window (start, end], cut at lo, it was last moved to: it only moves forward.
	start, lo, end int64
	// prevT is the time of the newest point the window let go of (math.MinInt64: none).
	prevT int64
	// used is the head's seq when it was last used, to forget the cursors no refresh uses.
	used uint64
}

// cursorMax bounds what the endpoints' cursors hold together: half the memo's bound, which at the default
// maxMemoryMB holds a 256-endpoint fleet overview's cursors (13 MiB) twice over.
func (s *Store) cursorMax() int64 { return s.memoMax / 2 }

// cursorSize is what a cursor holds, counted against the memo bound with its window's slots (8 bytes per series).
const cursorSize = int64(unsafe.Sizeof(rateCursor{}))

// maxExactSum bounds the values whose increase a cursor sums: below it, the int64 sum converts to the float64 that
// counterIncrease's float sum gives, every partial sum being an integer a float64 holds exactly.
const maxExactSum = 1 << 51

// cursors holds an endpoint's rate cursors. Readers move them under the endpoint's read lock, so it has a lock of
// its own; writers prune them under the write lock.
type cursors struct {
	mu sync.Mutex
	// byWindow holds each rate window's cursors indexed by series id (nil: none).
	byWindow map[int64][]*rateCursor
	bytes    int64
}

// slots returns window's cursors indexed by series id, with room for every id of ep unless growing them does not
// fit the bound (the series past them are then rated from their points). Within the room they were made with, they
// lengthen in place: the slots past their length were never written, so they hold no cursor.
func (ep *endpoint) slots(window int64) []*rateCursor {
	cs := &ep.cursors
	s := cs.byWindow[window]
	if len(s) >= len(ep.series) {
		return s
	}
	if cap(s) >= len(ep.series) {
		s = s[:len(ep.series)]
		cs.byWindow[window] = s
		return s
	}
	grown := make([]*rateCursor, len(ep.series), len(ep.series)+len(ep.series)/4)
	cost := 8 * int64(cap(grown)-cap(s))
	if !reserve(&ep.st.cursorBytes, cost, ep.st.cursorMax()) {
		return s
	}
	copy(grown, s)
	if cs.byWindow == nil {
		cs.byWindow = make(map[int64][]*rateCursor)
	}
	cs.byWindow[window] = grown
	cs.bytes += cost
	return grown
}

// cursorStatus is what a cursor gave for a selection.
type cursorStatus int

const (
	cursorRated  cursorStatus = iota // the rates at every step
	cursorPoints                     // nothing: a window's sum is too large to be exact, rate it from the points
	cursorNone                       // nothing: the series cannot be walked, or the steps lie behind the cursor
)

// cursorRates rates series id at steps (ascending) over window, of its points in [lo, hi], with its cursor in
// slot, made if it has none. v and has receive the rates; points is how many points [lo, hi] holds, as a selection
// counts them. The caller holds ep.cursors.mu.
func (ep *endpoint) cursorRates(slot **rateCursor, id int32, lo, hi int64, steps []int64, window int64, v []float64, has []bool) (points int, st cursorStatus) {
	if lo < steps[0]-window || hi < steps[len(steps)-1] {
		return 0, cursorNone // points outside every window, which a cursor does not count
	}
	c := *slot
	if c != nil && c.ident != ep.series[id].id {
		// A freed id given to another series: the blocks its cursor walked are gone by then, but one that never
		// read a point has nothing to fail on.
		ep.dropCursor(slot)
		c = nil
	}
	if c != nil && (steps[0]-window < c.start || lo < c.lo || steps[0] < c.end) {
		return 0, cursorNone // another query's older steps: its own reading, the cursor stays for the newer
	}
	if c == nil {
		if !reserve(&ep.st.cursorBytes, cursorSize, ep.st.cursorMax()) {
			return 0, cursorNone
		}
		c = &rateCursor{ident: ep.series[id].id, last: cursorPos{seq: ep.seqFrom(lo - 1)}, prevT: math.MinInt64}
		*slot = c
		ep.cursors.bytes += cursorSize
	}
	c.used = ep.head.seq
	st = cursorRated
	for i, t := range steps {
		added, ok := ep.moveCursor(c, id, t-window, lo, t)
		if !ok {
			ep.dropCursor(slot)
			return 0, cursorNone
		}
		if i == 0 {
			points = c.n
			if c.prevT == lo {
				points++ // at the first window's start: in [lo, hi], not in the window
			}
		} else {
			points += added
		}
		has[i] = false
		switch {
		case c.n < 2:
		case abs(c.first.v) >= maxExactSum || abs(c.last.v) >= maxExactSum || c.dropSum >= maxExactSum:
			st = cursorPoints
		default:
			increase := float64(c.last.v - c.first.v + c.dropSum)
			v[i], has[i] = derive.WindowRate(derive.Point{T: c.first.t, V: float64(c.first.v)}, derive.Point{T: c.last.t, V: float64(c.last.v)},
				c.n, increase, t-window, t)
		}
	}
	w := walker{ep: ep, id: id, pos: c.last}
	for { // the points after the last step
		if found, ok := w.next(); !ok || !found || w.pos.t > hi {
			break
		}
		points++
	}
	return points, st
}

// moveCursor moves c's window forward to (start, end] cut at lo: it takes in the points up to end, then lets go of
// those at or before start or before lo, and returns how many it took in. ok is false when the series' points
// cannot be walked from where c is.
func (ep *endpoint) moveCursor(c *rateCursor, id int32, start, lo, end int64) (added int, ok bool) {
	// The walker reads one point past end before it stops; only the points taken in are kept, in c, so it needs no
	// going back.
	w := walker{ep: ep, id: id, pos: c.last}
	for {
		found, ok := w.next()
		if !ok {
			return added, false
		}
		if !found || w.pos.t > end {
			break
		}
		if c.n == 0 {
			c.first = w.pos
		} else if w.pos.v < c.last.v {
			c.dropSum += c.last.v
		}
		c.last = w.pos
		c.n++
		added++
	}
	f := walker{ep: ep, id: id, pos: c.first}
	for c.n > 0 && (c.first.t <= start || c.first.t < lo) {
		c.prevT = c.first.t
		if c.n == 1 {
			c.n, c.dropSum = 0, 0
			break
		}
		if found, ok := f.next(); !ok || !found {
			return added, false // n > 1 points lie after first
		}
		if f.pos.v < c.first.v {
			c.dropSum -= c.first.v
		}
		c.first = f.pos
		c.n--
	}
	c.start, c.lo, c.end = start, lo, end
	return added, true
}

// seqFrom is the seq of the oldest block (the head if none) holding a point after t, where a new cursor starts.
func (ep *endpoint) seqFrom(t int64) uint64 {
	for _, b := range ep.blocks {
		if b.maxT > t {
			return b.seq
		}
	}
	return ep.head.seq
}

// dropCursor forgets the cursor in slot; the caller holds ep.cursors.mu or the write lock.
func (ep *endpoint) dropCursor(slot **rateCursor) {
	if *slot != nil {
		*slot = nil
		ep.cursors.bytes -= cursorSize
		ep.st.cursorBytes.Add(-cursorSize)
	}
}

// pruneCursors forgets the cursors no selection used since the head before the current one was opened; the caller
// holds the write lock.
func (ep *endpoint) pruneCursors() {
	for _, s := range ep.cursors.byWindow {
		for i, c := range s {
			if c != nil && c.used+1 < ep.head.seq {
				ep.dropCursor(&s[i])
			}
		}
	}
}

// dropCursors forgets every cursor; the caller holds the write lock.
func (ep *endpoint) dropCursors() {
	ep.st.cursorBytes.Add(-ep.cursors.bytes)
	ep.cursors.byWindow, ep.cursors.bytes = nil, 0
}

// abs is |x|.
func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// walker reads one series' points forward from a cursorPos, block after block.
type walker struct {
	ep    *endpoint
	id    int32
	pos   cursorPos
	st    stream      // pos.seq's stream, once ready
	r     valueReader // positioned at pos in st, once ready
	ready bool
}

// next reads the point after w.pos into it. found is false when the series has no newer point; ok is false when
// the walk cannot go on: its block is gone, or a stream on the way is not integer-coded.
func (w *walker) next() (found, ok bool) {
	if !w.ready {
		st, held := w.ep.streamAt(w.pos.seq, w.id)
		if !held || (st.n == 0 && w.pos.idx > 0) || int(w.pos.idx) > st.n {
			return false, false
		}
		if w.st = st; !w.prepare() {
			return false, false
		}
	}
	for int(w.pos.idx) >= w.st.n {
		seq, st, more := w.ep.streamAfter(w.pos.seq, w.id)
		if !more {
			return false, true
		}
		w.pos, w.st = cursorPos{seq: seq}, st
		if !w.prepare() {
			return false, false
		}
	}
	w.r.next()
	if w.st.own != nil {
		w.pos.t = w.st.own[w.pos.idx]
	} else {
		row := w.st.rows.advance()
		w.pos.row, w.pos.t = int32(row), w.st.rowTS[row] // #nosec G115 -- a row is below blockRows
	}
	w.pos.idx++
	w.pos.bit = w.r.br.consumed()
	w.pos.v = int64(w.r.prev) // #nosec G115 -- reinterprets the stored bit pattern of an int64
	return true, true
}

// prepare positions w's reader at w.pos in w.st, which must be integer-coded.
func (w *walker) prepare() bool {
	w.ready = true
	if w.st.n == 0 {
		return true // the series has no point in this block: the walk goes on to the next
	}
	if len(w.st.bits) == 0 || w.st.bits[0]>>7 != modeInt {
		return false
	}
	w.r = valueReader{br: bitReader{b: w.st.bits}}
	if w.pos.idx > 0 {
		w.r.br.seek(w.pos.bit)
		w.r.prev, w.r.mode, w.r.started = uint64(w.pos.v), modeInt, true // #nosec G115 -- stores the bit pattern of an int64
		if w.st.own == nil {
			w.st.rows.next = int(w.pos.row) + 1
		}
	}
	return true
}

// streamAt is series id's stream in block seq (the head's if seq is its), empty if the block lacks it; held is
// false if no such block is held.
func (ep *endpoint) streamAt(seq uint64, id int32) (st stream, held bool) {
	if seq == ep.head.seq {
		st, _ = ep.head.stream(id)
		return st, true
	}
	i := sort.Search(len(ep.blocks), func(i int) bool { return ep.blocks[i].seq >= seq })
	if i == len(ep.blocks) || ep.blocks[i].seq != seq {
		return stream{}, false
	}
	st, _ = ep.blocks[i].stream(id)
	return st, true
}

// streamAfter is series id's stream in the oldest block after seq that has one, the head last; more is false if
// none has.
func (ep *endpoint) streamAfter(seq uint64, id int32) (next uint64, st stream, more bool) {
	i := sort.Search(len(ep.blocks), func(i int) bool { return ep.blocks[i].seq > seq })
	for ; i < len(ep.blocks); i++ {
		if st, ok := ep.blocks[i].stream(id); ok {
			return ep.blocks[i].seq, st, true
		}
	}
	if ep.head.seq > seq {
		if st, ok := ep.head.stream(id); ok {
			return ep.head.seq, st, true
		}
	}
	return 0, stream{}, false
}

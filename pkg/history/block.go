package history

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// blockRows is the number of scrapes per block: 120 as in Prometheus, which
// is 10 minutes at 5 s. It must stay below 128 (rows are 7-bit in headers).
const blockRows = 120

// Stream header flags of a sealed block (see block.data).
const (
	flagGappy  = 0x80 // in byte 0: a 16-byte row bitmap follows the header
	flagOwnTS  = 0x80 // in byte 1: timestamps are in block.own, not rows
	headerMask = 0x7f
)

// block is a sealed, immutable block of up to blockRows scrapes.
type block struct {
	seq uint64
	// ts are the row timestamps, strictly increasing.
	ts []int64
	// minT and maxT bound all points of the block, explicit timestamps included.
	minT, maxT int64
	// off indexes data by series id: series id's stream is
	// data[off[id]:off[id+1]], empty if absent or id >= len(off)-1. A stream
	// is: byte 0 first row | flagGappy, byte 1 point count | flagOwnTS,
	// optionally a little-endian [2]uint64 row bitmap, then XOR value bits.
	off  []uint32
	data []byte
	// own holds the explicit timestamps of streams with flagOwnTS.
	own map[int32][]int64
	// bytes is the block's share of Store.Bytes.
	bytes int64
}

// headBlock is the open block scrapes are appended to.
type headBlock struct {
	seq        uint64
	ts         []int64
	minT, maxT int64
	// series is indexed by series id.
	series []headSeries
}

// headSeries is one series' part of the head block.
type headSeries struct {
	valueAppender
	// n is the number of points (0: absent from the head); first and last
	// are the rows of the first and last point in row mode.
	n, first, last uint8
	// x holds the rarely needed state: row gaps and explicit timestamps.
	x *headExtra
}

// headExtra is per-series head state that only series with gaps (after a
// staleness marker) or explicit sample timestamps need.
type headExtra struct {
	gaps  [2]uint64 // row bitmap, valid if gappy
	gappy bool
	// ownTS means the points' timestamps are in own rather than the rows.
	ownTS bool
	own   []int64
}

// Size estimates used for Store.Bytes.
const (
	headSeriesSize = int64(unsafe.Sizeof(headSeries{}))
	headExtraSize  = int64(unsafe.Sizeof(headExtra{}))
	blockSize      = int64(unsafe.Sizeof(block{})) + 64 // struct, slice headers' allocations
	ownMapEntry    = 48                                 // map slot and slice header per explicit-ts stream
)

// appendPoint adds a point of series id at row (whose time is the row's) or,
// if explicit, at time t. It returns the change in bytes held.
func (h *headBlock) appendPoint(id int32, row uint8, t int64, explicit bool, v float64) int64 {
	hs := &h.series[id]
	before := hs.cost()
	if explicit && (hs.x == nil || !hs.x.ownTS) {
		hs.toOwnTS(h.ts)
	}
	if hs.x != nil && hs.x.ownTS {
		hs.x.own = append(hs.x.own, t)
	} else {
		switch {
		case hs.n == 0:
			hs.first = row
		case hs.x != nil && hs.x.gappy:
		case row != hs.last+1:
			hs.markGappy()
		}
		if hs.x != nil && hs.x.gappy {
			hs.x.gaps[row>>6] |= 1 << (row & 63)
		}
		hs.last = row
	}
	if hs.n == 0 {
		hs.reset()
	}
	hs.append(v, int(hs.n))
	hs.n++
	if h.minT > t {
		h.minT = t
	}
	if h.maxT < t {
		h.maxT = t
	}
	return hs.cost() - before
}

// cost is the series' head memory beyond its headSeries struct.
func (hs *headSeries) cost() int64 {
	c := int64(cap(hs.buf))
	if hs.x != nil {
		c += headExtraSize + 8*int64(cap(hs.x.own))
	}
	return c
}

// markGappy switches row tracking from a contiguous run to a bitmap.
func (hs *headSeries) markGappy() {
	if hs.x == nil {
		hs.x = &headExtra{}
	}
	for r := hs.first; r <= hs.last; r++ {
		hs.x.gaps[r>>6] |= 1 << (r & 63)
	}
	hs.x.gappy = true
}

// toOwnTS switches the series to explicit timestamps, converting the rows of
// its points so far; the value stream is unaffected.
func (hs *headSeries) toOwnTS(rowTS []int64) {
	if hs.x == nil {
		hs.x = &headExtra{}
	}
	own := make([]int64, 0, max(int(hs.n)+1, 4))
	it := rowIter{next: int(hs.first), gappy: hs.x.gappy, gaps: hs.x.gaps}
	for range hs.n {
		own = append(own, rowTS[it.advance()])
	}
	hs.x.own, hs.x.ownTS, hs.x.gappy = own, true, false
}

// stream returns series id's points in the head.
func (h *headBlock) stream(id int32) (stream, bool) {
	if int(id) >= len(h.series) || h.series[id].n == 0 {
		return stream{}, false
	}
	hs := &h.series[id]
	st := stream{bits: hs.buf, n: int(hs.n), rowTS: h.ts, rows: rowIter{next: int(hs.first)}}
	if hs.x != nil {
		if hs.x.ownTS {
			st.own = hs.x.own
		} else if hs.x.gappy {
			st.rows.gappy, st.rows.gaps = true, hs.x.gaps
		}
	}
	return st, true
}

// sameStream reports whether series x and y have the same points in the head: the same rows and the same value
// bits. Series with explicit timestamps or row gaps are never the same (rare, and not worth comparing).
func (h *headBlock) sameStream(x, y int32) bool {
	nx, ny := h.points(x), h.points(y)
	if nx == 0 || ny == 0 {
		return nx == ny
	}
	sx, sy := &h.series[x], &h.series[y]
	return nx == ny && sx.first == sy.first && sx.x == nil && sy.x == nil && bytes.Equal(sx.buf, sy.buf)
}

// seal copies the head into an immutable block. The head is left untouched.
func (h *headBlock) seal() *block {
	last := -1
	total := 0
	for id := range h.series {
		hs := &h.series[id]
		if hs.n == 0 {
			continue
		}
		last = id
		total += 2 + len(hs.buf)
		if hs.x != nil && hs.x.gappy && !hs.x.ownTS {
			total += 16
		}
	}
	b := &block{seq: h.seq, minT: h.minT, maxT: h.maxT}
	b.ts = make([]int64, len(h.ts))
	copy(b.ts, h.ts)
	b.off = make([]uint32, last+2)
	b.data = make([]byte, 0, total)
	for id := 0; id <= last; id++ {
		hs := &h.series[id]
		b.off[id] = uint32(len(b.data)) // #nosec G115 -- a block holds at most blockRows points of at most maxSamples (10 000 000) series, about two bytes each: under 4 GiB
		if hs.n == 0 {
			continue
		}
		switch {
		case hs.x != nil && hs.x.ownTS:
			b.data = append(b.data, 0, hs.n|flagOwnTS)
			if b.own == nil {
				b.own = make(map[int32][]int64)
			}
			b.own[int32(id)] = append([]int64(nil), hs.x.own...)
			b.bytes += ownMapEntry + 8*int64(hs.n)
		case hs.x != nil && hs.x.gappy:
			b.data = append(b.data, hs.first|flagGappy, hs.n)
			b.data = binary.LittleEndian.AppendUint64(b.data, hs.x.gaps[0])
			b.data = binary.LittleEndian.AppendUint64(b.data, hs.x.gaps[1])
		default:
			b.data = append(b.data, hs.first, hs.n)
		}
		b.data = append(b.data, hs.buf...)
	}
	b.off[last+1] = uint32(len(b.data)) // #nosec G115 -- a block holds at most blockRows points of at most maxSamples (10 000 000) series, about two bytes each: under 4 GiB
	b.bytes += blockSize + int64(cap(b.data)) + 4*int64(cap(b.off)) + 8*int64(cap(b.ts))
	return b
}

// reset empties the head for the block seq. Buffers of series present in the
// sealed block are kept for reuse; the others are freed.
func (h *headBlock) reset(seq uint64) {
	h.seq = seq
	h.ts = make([]int64, 0, blockRows)
	for id := range h.series {
		hs := &h.series[id]
		if hs.n == 0 {
			hs.buf = nil
		}
		hs.n, hs.x = 0, nil
		hs.reset()
	}
}

// bytes is the head's share of Store.Bytes.
func (h *headBlock) bytes() int64 {
	n := 8*int64(cap(h.ts)) + headSeriesSize*int64(cap(h.series))
	for id := range h.series {
		n += h.series[id].cost()
	}
	return n
}

// points is how many points series id has in the block: stream's count without preparing the stream, for the
// first pass of every selection.
func (b *block) points(id int32) int {
	if id < 0 || int(id)+1 >= len(b.off) || b.off[id] == b.off[id+1] {
		return 0
	}
	return int(b.data[b.off[id]+1] & headerMask)
}

// points is how many points series id has in the head (its stream's count).
func (h *headBlock) points(id int32) int {
	if id < 0 || int(id) >= len(h.series) {
		return 0
	}
	return int(h.series[id].n)
}

// sameStream reports whether series x and y have the same points in the block: equal streams (header, rows and
// value bits) decode to equal points. Streams with explicit timestamps are never the same.
func (b *block) sameStream(x, y int32) bool {
	dx, dy := b.streamBytes(x), b.streamBytes(y)
	if len(dx) == 0 || len(dy) == 0 {
		return len(dx) == len(dy)
	}
	return dx[1]&flagOwnTS == 0 && bytes.Equal(dx, dy)
}

// streamBytes is series id's stream in the block as stored, empty if it has none.
func (b *block) streamBytes(id int32) []byte {
	if id < 0 || int(id)+1 >= len(b.off) {
		return nil
	}
	return b.data[b.off[id]:b.off[id+1]]
}

// stream returns series id's points in the block.
func (b *block) stream(id int32) (stream, bool) {
	d := b.streamBytes(id)
	if len(d) == 0 {
		return stream{}, false
	}
	st := stream{n: int(d[1] & headerMask), rowTS: b.ts, rows: rowIter{next: int(d[0] & headerMask)}}
	if d[1]&flagOwnTS != 0 {
		st.own = b.own[id]
	}
	d = d[2:]
	if st.own == nil && b.data[b.off[id]]&flagGappy != 0 {
		st.rows.gappy = true
		st.rows.gaps = [2]uint64{binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(d[8:])}
		d = d[16:]
	}
	st.bits = d
	return st, true
}

// rowIter yields the rows of a series' points in a block.
type rowIter struct {
	next  int
	gappy bool
	gaps  [2]uint64
}

// advance returns the next row.
func (it *rowIter) advance() int {
	r := it.next
	if it.gappy {
		for r < 128 {
			w := it.gaps[r>>6] >> (r & 63)
			if w != 0 {
				r += bits.TrailingZeros64(w)
				break
			}
			r = (r | 63) + 1
		}
	}
	it.next = r + 1
	return r
}

// stream is one series' points in one block, ready to decode.
type stream struct {
	bits  []byte
	n     int
	rowTS []int64
	rows  rowIter
	// own, if non-nil, holds the points' timestamps instead of rows.
	own []int64
}

// decode appends the points with lo <= T <= hi to dst. Points of a series
// are strictly increasing in time, so decoding stops after hi.
func (st *stream) decode(dst []derive.Point, lo, hi int64) []derive.Point {
	var r valueReader
	r.init(st.bits)
	for i := 0; i < st.n; i++ {
		var v float64
		if r.mode == modeInt && r.started {
			// A counter's or a bucket's steps up to ±2^19 are read here, without next's call (it does not inline):
			// token counters and busy buckets step by more than ±63.
			if r.br.n < maxShortCode {
				r.br.refill()
			}
			if zz, used, ok := shortCode(r.br.buf); ok && used <= r.br.n {
				r.br.buf <<= used
				r.br.n -= used
				r.prev += uint64(unzigzag(zz)) // #nosec G115 -- stores the bit pattern of an int64 delta
				v = float64(int64(r.prev))     // #nosec G115 -- reinterprets the stored bit pattern of an int64
			} else {
				v = r.next()
			}
		} else {
			v = r.next()
		}
		var t int64
		if st.own != nil {
			t = st.own[i]
		} else {
			t = st.rowTS[st.rows.advance()]
		}
		if t > hi {
			break
		}
		if t >= lo {
			dst = append(dst, derive.Point{T: t, V: v})
		}
	}
	return dst
}

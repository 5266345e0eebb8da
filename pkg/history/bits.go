package history

import (
	"encoding/binary"
	"math/bits"
)

// writeBit appends one bit, MSB first.
func (w *valueAppender) writeBit(bit uint64) {
	if w.free == 0 {
		w.buf = append(w.buf, 0)
		w.free = 8
	}
	w.free--
	w.buf[len(w.buf)-1] |= byte(bit << w.free) // #nosec G115 -- bit is 0 or 1 and free < 8
}

// writeBits appends the low n bits of v (n <= 64), MSB first.
func (w *valueAppender) writeBits(v uint64, n uint8) {
	for n > 0 {
		if w.free == 0 {
			w.buf = append(w.buf, 0)
			w.free = 8
		}
		k := min(n, w.free)
		chunk := byte(v>>(n-k)) & byte(1<<k-1) // #nosec G115 -- the value is masked to k < 8 bits
		w.free -= k
		w.buf[len(w.buf)-1] |= chunk << w.free
		n -= k
	}
}

// bitReader reads a valueAppender's bit stream. buf holds n valid bits,
// left-aligned; reading past the end yields zeros (callers know the count).
type bitReader struct {
	b   []byte
	i   int
	buf uint64
	n   uint8
}

// refill tops buf up to at least 57 valid bits while input remains.
func (r *bitReader) refill() {
	if len(r.b)-r.i >= 8 {
		take := (64 - r.n) >> 3 // whole bytes that fit
		v := binary.BigEndian.Uint64(r.b[r.i:])
		drop := 64 - 8*take
		v = v >> drop << drop
		r.buf |= v >> r.n
		r.n += 8 * take
		r.i += int(take)
		return
	}
	for r.n <= 56 && r.i < len(r.b) {
		r.buf |= uint64(r.b[r.i]) << (56 - r.n)
		r.n += 8
		r.i++
	}
}

// consumed is how many bits of b have been read.
func (r *bitReader) consumed() uint32 {
	return uint32(8*r.i - int(r.n)) // #nosec G115 -- a stream holds at most blockRows values of at most 77 bits
}

// seek positions r after the first bit bits of b, as if they had been read.
func (r *bitReader) seek(bit uint32) {
	r.i, r.buf, r.n = int(bit>>3), 0, 0
	r.refill()
	k := uint8(bit & 7) // #nosec G115 -- below 8
	r.buf <<= k
	r.n -= k
}

// readBit returns the next bit.
func (r *bitReader) readBit() uint64 {
	if r.n == 0 {
		r.refill()
		if r.n == 0 {
			return 0
		}
	}
	v := r.buf >> 63
	r.buf <<= 1
	r.n--
	return v
}

// readBits returns the next n bits (n <= 64).
func (r *bitReader) readBits(n uint8) uint64 {
	if n > 56 {
		hi := r.readBits(n - 32)
		return hi<<32 | r.readBits(32)
	}
	if r.n < n {
		r.refill()
		if r.n < n { // truncated stream: pad with zeros
			r.n = n
		}
	}
	v := r.buf >> (64 - n) // n == 0 gives 0: Go shifts >= 64 yield 0
	r.buf <<= n
	r.n -= n
	return v
}

// leadingOnes consumes a run of 1 bits of at most limit (limit < 8) and the 0 that ends a shorter run, and returns
// the run's length: what up to limit+1 readBit calls return until the first 0. Past the end of the stream bits
// read as 0, as readBit's do.
func (r *bitReader) leadingOnes(limit int) int {
	if r.n <= uint8(limit) { // #nosec G115 -- limit is a small constant
		r.refill()
	}
	ones := min(bits.LeadingZeros64(^r.buf), limit)
	used := uint8(ones + 1) // #nosec G115 -- at most limit+1
	if ones == limit {
		used = uint8(limit) // #nosec G115 -- a full run has no ending 0
	}
	if used > r.n { // the run reached the end of the stream, whose missing bits read as zeros and end it
		r.buf, r.n = 0, 0
		return ones
	}
	r.buf <<= used
	r.n -= used
	return ones
}

package history

import "encoding/binary"

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

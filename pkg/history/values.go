package history

import (
	"math"
	"math/bits"
)

// A value stream starts with one mode bit. Counters and histogram buckets
// hold integers that mostly stay put or grow by a little, which a delta
// code stores in 1 bit (unchanged) or 5 bits (+-4) where Gorilla's XOR needs
// about 10 bits per change; other values use XOR. A stream starts in integer
// mode if its first value is an integer and switches to XOR (re-encoding what
// it holds) at the first value that is not, e.g. a staleness marker.
const (
	modeXOR = 0
	modeInt = 1
)

// noWindow marks an XOR stream that has not written a '11' control yet, so
// the '10' (reuse window) encoding is not available.
const noWindow = 0xff

// maxExactInt bounds the integers a float64 holds exactly.
const maxExactInt = 1 << 53

// valueAppender encodes one series' values in one block.
type valueAppender struct {
	// buf holds the bits, MSB first; free counts the unused low bits of its
	// last byte.
	buf []byte
	// prev is the last value: its bits in XOR mode, the int64 in int mode.
	prev uint64
	free uint8
	mode uint8
	// leading and trailing are the zero counts of the current XOR window;
	// leading is noWindow before the first '11' control.
	leading, trailing uint8
}

// reset empties the stream but keeps its capacity: a series' next block is
// usually about as big as its last, so this avoids regrowing the buffer.
func (a *valueAppender) reset() {
	a.buf = a.buf[:0]
	a.free, a.prev, a.mode = 0, 0, modeXOR
	a.leading, a.trailing = noWindow, 0
}

// asInt returns v as an integer if that round-trips bit for bit (so not -0,
// NaN, infinities or fractions).
func asInt(v float64) (int64, bool) {
	if !(v >= -maxExactInt && v <= maxExactInt) {
		return 0, false
	}
	i := int64(v)
	return i, float64(i) == v && (i != 0 || !math.Signbit(v))
}

// append adds v as the stream's value number n (0 for the first).
func (a *valueAppender) append(v float64, n int) {
	iv, isInt := asInt(v)
	switch {
	case n == 0 && isInt:
		a.mode = modeInt
		a.writeBit(modeInt)
		a.putDelta(iv)
		a.prev = uint64(iv) // #nosec G115 -- stores the bit pattern of an int64
	case n == 0:
		a.mode = modeXOR
		a.writeBit(modeXOR)
		a.writeBits(math.Float64bits(v), 64)
		a.prev = math.Float64bits(v)
		a.leading = noWindow
	case a.mode == modeInt && isInt:
		a.putDelta(iv - int64(a.prev)) // #nosec G115 -- reinterprets the stored bit pattern of an int64
		a.prev = uint64(iv)            // #nosec G115 -- stores the bit pattern of an int64
	case a.mode == modeInt:
		a.toXOR(n)
		a.putXOR(v)
	default:
		a.putXOR(v)
	}
}

// toXOR re-encodes the n integer values held as an XOR stream.
func (a *valueAppender) toXOR(n int) {
	var r valueReader
	r.init(a.buf)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = r.next()
	}
	a.reset() // reuses buf: vals are already decoded
	for i, v := range vals {
		if i == 0 {
			a.writeBit(modeXOR)
			a.writeBits(math.Float64bits(v), 64)
			a.prev = math.Float64bits(v)
			continue
		}
		a.putXOR(v)
	}
}

// putDelta writes an integer delta with a prefix code sized for counters:
// '0' unchanged, '10'+3 bits for +-4, then 7, 13, 20 and 64 bit zigzags.
func (a *valueAppender) putDelta(d int64) {
	zz := uint64(d<<1) ^ uint64(d>>63) // #nosec G115 -- zigzag encoding of the bit pattern
	switch {
	case zz == 0:
		a.writeBit(0)
	case zz <= 8:
		a.writeBits(0b10<<3|(zz-1), 5)
	case zz < 1<<7:
		a.writeBits(0b110<<7|zz, 10)
	case zz < 1<<13:
		a.writeBits(0b1110<<13|zz, 17)
	case zz < 1<<20:
		a.writeBits(0b11110<<20|zz, 25)
	default:
		a.writeBits(0b11111, 5)
		a.writeBits(zz, 64)
	}
}

// putXOR writes v with Gorilla's XOR encoding (Prometheus chunkenc.XORChunk
// without timestamps: those come from the block's shared column).
func (a *valueAppender) putXOR(v float64) {
	b := math.Float64bits(v)
	x := b ^ a.prev
	a.prev = b
	if x == 0 {
		a.writeBit(0)
		return
	}
	lead := uint8(bits.LeadingZeros64(x))   // #nosec G115 -- a count of bits of a uint64 is at most 64
	trail := uint8(bits.TrailingZeros64(x)) // #nosec G115 -- a count of bits of a uint64 is at most 64
	if lead >= 32 {                         // the leading count has 5 bits
		lead = 31
	}
	if a.leading != noWindow && lead >= a.leading && trail >= a.trailing {
		// '10': the meaningful bits fit the previous window.
		a.writeBits(0b10, 2)
		a.writeBits(x>>a.trailing, 64-a.leading-a.trailing)
		return
	}
	a.leading, a.trailing = lead, trail
	sig := 64 - lead - trail
	// '11', 5 bits leading, 6 bits length (64 is written as 0), the bits.
	a.writeBits(0b11<<11|uint64(lead)<<6|uint64(sig&63), 13)
	a.writeBits(x>>trail, sig)
}

// valueReader decodes a valueAppender stream.
type valueReader struct {
	br                bitReader
	prev              uint64
	mode              uint8
	leading, trailing uint8
	started           bool
}

// init positions the reader at the start of stream b.
func (r *valueReader) init(b []byte) {
	*r = valueReader{br: bitReader{b: b}}
}

// next decodes the next value; the caller knows how many there are.
func (r *valueReader) next() float64 {
	if !r.started {
		r.started = true
		r.mode = uint8(r.br.readBit()) // #nosec G115 -- a bit is 0 or 1
		if r.mode == modeInt {
			r.prev = uint64(r.getDelta()) // #nosec G115 -- stores the bit pattern of an int64
			return float64(int64(r.prev)) // #nosec G115 -- reinterprets the stored bit pattern of an int64
		}
		r.prev = r.br.readBits(64)
		return math.Float64frombits(r.prev)
	}
	if r.mode == modeInt {
		r.prev += uint64(r.getDelta()) // #nosec G115 -- stores the bit pattern of an int64 delta
		return float64(int64(r.prev))  // #nosec G115 -- reinterprets the stored bit pattern of an int64
	}
	if r.br.readBit() == 0 {
		return math.Float64frombits(r.prev)
	}
	if r.br.readBit() == 1 {
		hdr := r.br.readBits(11)
		lead, sig := uint8(hdr>>6), uint8(hdr&63) // #nosec G115 -- hdr>>6 is at most 3 and hdr&63 at most 63
		if sig == 0 {
			sig = 64
		}
		r.leading, r.trailing = lead, 64-lead-sig
	}
	sig := 64 - r.leading - r.trailing
	r.prev ^= r.br.readBits(sig) << r.trailing
	return math.Float64frombits(r.prev)
}

// getDelta reads a putDelta code. Its prefix (0, 10, 110, 1110, 11110, 11111) is read at once by counting the
// leading ones: a counter's value costs one prefix lookup instead of up to five single-bit reads.
func (r *valueReader) getDelta() int64 {
	// All but the longest code are read from the buffer at once, refilled first; the prefix count serves that one
	// and a stream cut short.
	if r.br.n < maxShortCode {
		r.br.refill()
	}
	if zz, used, ok := shortCode(r.br.buf); ok && used <= r.br.n {
		r.br.buf <<= used
		r.br.n -= used
		return unzigzag(zz)
	}
	ones := r.br.leadingOnes(5)
	var zz uint64
	switch ones {
	case 0:
		return 0
	case 1:
		zz = r.br.readBits(3) + 1
	case 2:
		zz = r.br.readBits(7)
	case 3:
		zz = r.br.readBits(13)
	case 4:
		zz = r.br.readBits(20)
	default:
		zz = r.br.readBits(64)
	}
	return unzigzag(zz)
}

// shortCode decodes the putDelta code at the top of b (a reader's buffer) when it is one of all but the longest:
// '0' unchanged, '10' ±1–4, '110' up to ±63, '1110' up to ±4095, '11110' up to ±2^19. It returns the zigzag and how
// many bits the code used (at most maxShortCode), or ok false; the caller checks that the buffer holds that many.
// It inlines where valueReader.next does not, so a stream's decode loop reads those values without a call.
func shortCode(b uint64) (zz uint64, used uint8, ok bool) {
	switch {
	case b>>63 == 0:
		return 0, 1, true
	case b>>62 == 0b10:
		return (b>>59)&7 + 1, 5, true
	case b>>61 == 0b110:
		return (b >> 54) & 0x7f, 10, true
	case b>>60 == 0b1110:
		return (b >> 47) & 0x1fff, 17, true
	case b>>59 == 0b11110:
		return (b >> 39) & 0xfffff, maxShortCode, true
	}
	return 0, 0, false
}

// maxShortCode is the longest code shortCode reads, in bits.
const maxShortCode = 25

// unzigzag is the integer a putDelta zigzag stands for.
func unzigzag(zz uint64) int64 {
	return int64(zz>>1) ^ -int64(zz&1) // #nosec G115 -- zigzag decoding of the stored bit pattern
}

package derive

import "math"

// relTol is the tolerance of every float comparison in this package's tests: relative 1e-9, which
// is far above float64 rounding (~1e-16 per operation) and far below any meaningful difference.
const relTol = 1e-9

// near reports whether a and b agree: both NaN, equal infinities, or relative difference <= relTol.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || a == b {
		return a == b
	}
	return math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}

const sec = int64(1000)

// pts builds a series from (seconds, value) pairs.
func pts(tv ...float64) []Point {
	out := make([]Point, 0, len(tv)/2)
	for i := 0; i+1 < len(tv); i += 2 {
		out = append(out, Point{T: int64(tv[i] * 1000), V: tv[i+1]})
	}
	return out
}

// regular builds a series with values vs at t0, t0+step, … (all seconds).
func regular(t0, step float64, vs ...float64) []Point {
	out := make([]Point, len(vs))
	for i, v := range vs {
		out[i] = Point{T: int64((t0 + float64(i)*step) * 1000), V: v}
	}
	return out
}

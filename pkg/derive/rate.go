package derive

import (
	"math"
	"time"
)

// Point is one sample of a float series: T in Unix milliseconds, V the sample value.
type Point struct {
	T int64
	V float64
}

// StaleNaN is the NaN with the exact bits Prometheus writes as a staleness marker; points carrying it are skipped.
var StaleNaN = math.Float64frombits(staleNaNBits)

// staleNaNBits is value.StaleNaN from Prometheus's model/value package; it is an ordinary NaN to
// arithmetic, so only the exact bits distinguish it from a real NaN sample (which PromQL keeps).
const staleNaNBits = 0x7ff0000000000002

func isStale(v float64) bool { return math.Float64bits(v) == staleNaNBits }

// IsStale reports whether v is a staleness marker rather than a sampled value.
func IsStale(v float64) bool { return isStale(v) }

func withoutStale(w []Point) []Point {
	out := make([]Point, 0, len(w))
	for _, p := range w {
		if !isStale(p.V) {
			out = append(out, p)
		}
	}
	return out
}

// rangeSeconds converts a range in ms to seconds the way PromQL does (time.Duration.Seconds of the
// selector's range), so rate's division rounds identically.
func rangeSeconds(ms int64) float64 {
	return (time.Duration(ms) * time.Millisecond).Seconds()
}

// counterIncrease is last − first of a window, plus, for a counter, the value before each drop: a decrease means
// the process restarted and the counter began again at zero, so the value before the drop was growth that the
// end-minus-start difference lost.
func counterIncrease(s []Point, isCounter bool) float64 {
	result := s[len(s)-1].V - s[0].V
	if isCounter {
		prev := s[0].V
		for _, p := range s[1:] {
			if p.V < prev {
				result += prev
			}
			prev = p.V
		}
	}
	return result
}

// extrapolate is the rest of Prometheus's extrapolatedRate: the window's increase (result) extrapolated to the
// range's edges, per second for a rate. s holds at least two samples.
func extrapolate(s []Point, start, end int64, result float64, isCounter, isRate bool) (float64, bool) {
	return extrapolateEnds(s[0], s[len(s)-1], len(s), start, end, result, isCounter, isRate)
}

// WindowRate is RateSteps' rate over the window (start, end] of a counter from what the window holds, not its
// points: its first and last point, how many it has (at least two) and its increase (counterIncrease's, resets
// included). Given the same, it is bit-identical to RateSteps'.
func WindowRate(first, last Point, n int, increase float64, start, end int64) (float64, bool) {
	return extrapolateEnds(first, last, n, start, end, increase, true, true)
}

// extrapolateEnds is extrapolate of a window given by its ends and its number of samples.
func extrapolateEnds(first, last Point, n int, start, end int64, result float64, isCounter, isRate bool) (float64, bool) {
	e, ok := edgesOf(first.T, last.T, n, start, end)
	if !ok {
		return 0, false
	}
	durationToStart := e.toStart
	// A counter cannot have been below zero, so do not extrapolate back further than the point where
	// the observed slope reaches zero. Prometheus 3 (PR #13725) applies this clamp AFTER the threshold
	// test; 2.42 clamped first, which extrapolates further when the zero point lies between avg/2 and
	// 1.1×avg before the first sample.
	if isCounter && result > 0 && first.V >= 0 {
		durationToZero := e.sampled * (first.V / result)
		if durationToZero < durationToStart {
			durationToStart = durationToZero
		}
	}
	factor := (e.sampled + durationToStart + e.toEnd) / e.sampled
	if isRate {
		factor /= rangeSeconds(end - start)
	}
	return result * factor, true
}

// windowEdges is what extrapolation takes from a window's ends and length alone: the seconds it extrapolates to the
// range's start (before a counter's zero clamp) and end, and the seconds its samples span.
type windowEdges struct {
	toStart, toEnd, sampled float64
}

// edgesOf is the windowEdges of a window of n samples from firstT to lastT in the range (start, end]; ok is false
// when the samples span no time.
func edgesOf(firstT, lastT int64, n int, start, end int64) (e windowEdges, ok bool) {
	e.toStart = float64(firstT-start) / 1000
	e.toEnd = float64(end-lastT) / 1000
	e.sampled = float64(lastT-firstT) / 1000
	if e.sampled == 0 {
		// Unreachable with distinct timestamps (a TSDB cannot hold duplicates); refuse rather
		// than return Inf/NaN.
		return e, false
	}
	averageDurationBetweenSamples := e.sampled / float64(n-1)
	extrapolationThreshold := averageDurationBetweenSamples * 1.1
	// Extrapolate to an edge only when a sample could plausibly have existed there (gap under
	// 1.1× the average spacing); otherwise assume the series started or ended half a step away.
	if e.toStart >= extrapolationThreshold {
		e.toStart = averageDurationBetweenSamples / 2
	}
	if e.toEnd >= extrapolationThreshold {
		e.toEnd = averageDurationBetweenSamples / 2
	}
	return e, true
}

// stepEdges keeps, for one step of a grid, the rate's edges and factor of the last window rated there: the series of
// one endpoint are scraped together, so at a step most of them share their window's first and last timestamps and
// length, and with those everything of the rate but the increase and a counter's zero clamp. Reusing them takes
// the seven divisions of an extrapolation out of a cold hour's rates for all but the first series of an endpoint.
type stepEdges struct {
	firstT, lastT int64
	n             int // 0: nothing kept yet
	ok            bool
	edges         windowEdges
	factor        float64 // the rate's factor where the zero clamp does not apply
}

// clampMargin is far wider than the rounding of the clamp's test (a few ulps): a window whose zero clamp cannot be
// told from the test's rounding takes extrapolateEnds' own arithmetic.
const clampMargin = 1 + 1.0/(1<<40)

// rate is WindowRate, bit for bit, reusing the edges kept at this step (start, end] when the window's ends and
// length are the same.
func (se *stepEdges) rate(first, last Point, n int, increase float64, start, end int64) (float64, bool) {
	if se.n != n || se.firstT != first.T || se.lastT != last.T {
		se.firstT, se.lastT, se.n = first.T, last.T, n
		se.edges, se.ok = edgesOf(first.T, last.T, n, start, end)
		if se.ok {
			se.factor = (se.edges.sampled + se.edges.toStart + se.edges.toEnd) / se.edges.sampled
			se.factor /= rangeSeconds(end - start)
		}
	}
	if !se.ok {
		return 0, false
	}
	if increase > 0 && first.V >= 0 {
		// The clamp applies where sampled × first/increase < toStart. Clear of that by the margin, with both
		// products finite and far from the subnormals (where rounding is no longer a few ulps), it does not, and the
		// kept factor is the one extrapolateEnds computes; anything else takes extrapolateEnds' own arithmetic.
		p, q := first.V*se.edges.sampled, se.edges.toStart*increase
		if !(p > q*clampMargin && q >= 0x1p-1000 && p <= math.MaxFloat64) {
			return extrapolateEnds(first, last, n, start, end, increase, true, true)
		}
	}
	return increase * se.factor, true
}

// RateSteps calls f(i, Rate(points, steps[i]-window, steps[i])) for every step i whose window holds two samples or
// more, steps ascending: one pass with two cursors instead of two binary searches and a reset scan per step, the
// answers bit-identical to Rate's (a window without a counter reset takes last − first, as Rate's loop then adds
// nothing; one with a reset runs Rate's own loop).
func RateSteps(points []Point, steps []int64, window int64, f func(i int, v float64)) {
	rateSteps(points, steps, window, nil, f)
}

// rateSteps is RateSteps keeping each step's window edges in edges[i] (len(steps) of them) for the next series
// rated at the same steps, or computing them for each window where edges is nil.
func rateSteps(points []Point, steps []int64, window int64, edges []stepEdges, f func(i int, v float64)) {
	pts := points
	for _, p := range points {
		if isStale(p.V) {
			pts = withoutStale(points)
			break
		}
	}
	// resets[j] counts the drops among pts[1..j], so a window pts[lo:hi] holds resets[hi-1]-resets[lo] of them.
	var resets []int32
	var n int32
	for j := 1; j < len(pts); j++ {
		if pts[j].V < pts[j-1].V {
			if resets == nil {
				resets = make([]int32, len(pts))
			}
			n++
		}
		if resets != nil {
			resets[j] = n
		}
	}
	lo, hi := 0, 0
	for i, end := range steps {
		start := end - window
		for lo < len(pts) && pts[lo].T <= start {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(pts) && pts[hi].T <= end {
			hi++
		}
		if hi-lo < 2 {
			continue
		}
		w := pts[lo:hi]
		var result float64
		if resets == nil || resets[hi-1] == resets[lo] {
			result = w[len(w)-1].V - w[0].V
		} else {
			result = counterIncrease(w, true)
		}
		var v float64
		var ok bool
		if edges != nil {
			v, ok = edges[i].rate(w[0], w[len(w)-1], len(w), result, start, end)
		} else {
			v, ok = extrapolate(w, start, end, result, true, true)
		}
		if ok {
			f(i, v)
		}
	}
}

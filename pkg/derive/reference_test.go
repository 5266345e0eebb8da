package derive

import "sort"

// The point-wise PromQL functions the tests compare with Prometheus and with the engine's step-wise forms: they
// assemble the production pieces (counterIncrease, extrapolate, withoutStale) the way Prometheus evaluates one
// range selector at one instant.

// window returns the samples of points with start < T <= end: a range selector evaluated at end selects
// (end−range, end], as Prometheus 3's matrixIterSlice does (it drops samples with T <= mint). Prometheus 2.x
// kept a sample exactly at start (t >= mint); that is the one difference a sample on a window boundary makes.
// The result aliases points unless staleness markers have to be filtered out.
func window(points []Point, start, end int64) []Point {
	lo := sort.Search(len(points), func(i int) bool { return points[i].T > start })
	hi := lo + sort.Search(len(points)-lo, func(i int) bool { return points[lo+i].T > end })
	w := points[lo:hi]
	for i := range w {
		if isStale(w[i].V) {
			return withoutStale(w)
		}
	}
	return w
}

// Rate returns PromQL rate(points[end-start]) evaluated at end: Increase divided by the range
// length in seconds (end-start, not the sampled interval). ok is false for fewer than two samples.
func Rate(points []Point, start, end int64) (float64, bool) {
	return extrapolatedRate(points, start, end, true, true)
}

// extrapolatedRate follows Prometheus 3 promql/functions.go extrapolatedRate for float samples without start
// timestamps (v3.16), including its order of floating-point operations so results agree to the last bit.
func extrapolatedRate(points []Point, start, end int64, isCounter, isRate bool) (float64, bool) {
	s := window(points, start, end)
	if len(s) < 2 {
		return 0, false
	}
	return extrapolate(s, start, end, counterIncrease(s, isCounter), isCounter, isRate)
}

// BucketRates returns rate(x_bucket[end-start]) for every `le` series of one histogram, so
// HistogramQuantile(q, BucketRates(s, t-w, t)) equals histogram_quantile(q, rate(x_bucket[w])) at t.
// Series with fewer than two samples in [start, end] are left out, as in PromQL.
func BucketRates(series []BucketSeries, start, end int64) []Bucket {
	return bucketsOf(series, start, end, Rate)
}

func bucketsOf(series []BucketSeries, start, end int64, f func([]Point, int64, int64) (float64, bool)) []Bucket {
	out := make([]Bucket, 0, len(series))
	for _, s := range series {
		if v, ok := f(s.Points, start, end); ok {
			out = append(out, Bucket{UpperBound: s.UpperBound, Count: v})
		}
	}
	return out
}

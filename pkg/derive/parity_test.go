package derive

import "slices"

// The PromQL functions below are not called by the plugin: direct mode reads counters only through Rate. They are
// kept here, in a test file so they do not ship, because the tests that compare this package with a real
// Prometheus (prometheus_test.go, engines_test.go) check the shared extrapolation, reset and bucket handling
// through increase(), delta() and irate(), and quantiles of summed or increased buckets, too.

// Increase returns PromQL increase(points[end-start]) evaluated at end: the counter growth over
// (start, end], corrected for counter resets and extrapolated towards the window edges.
// ok is false when the window holds fewer than two samples, where PromQL returns no series.
func Increase(points []Point, start, end int64) (float64, bool) {
	return extrapolatedRate(points, start, end, true, false)
}

// Delta returns PromQL delta(points[end-start]) evaluated at end, for gauges: no reset handling
// and no clamp at zero. ok is false for fewer than two samples.
func Delta(points []Point, start, end int64) (float64, bool) {
	return extrapolatedRate(points, start, end, false, false)
}

// IRate returns PromQL irate(points[end-start]) evaluated at end: the per-second increase between
// the last two samples in (start, end]; after a reset the last value itself is the increase.
// ok is false for fewer than two samples.
func IRate(points []Point, start, end int64) (float64, bool) {
	s := window(points, start, end)
	if len(s) < 2 {
		return 0, false
	}
	last, prev := s[len(s)-1], s[len(s)-2]
	v := last.V - prev.V
	if last.V < prev.V {
		v = last.V
	}
	dt := last.T - prev.T
	if dt == 0 {
		return 0, false
	}
	return v / (float64(dt) / 1000), true
}

// BucketIncreases returns increase(x_bucket[end-start]) for every `le` series of one histogram,
// ready for HistogramQuantile. Series with fewer than two samples in [start, end] are left out,
// as PromQL drops them from the increase() result before histogram_quantile sees it.
func BucketIncreases(series []BucketSeries, start, end int64) []Bucket {
	return bucketsOf(series, start, end, Increase)
}

// RateQuantile returns histogram_quantile(q, rate(x_bucket[end-start])) evaluated at end for one
// histogram; ok is false when no bucket series has two samples in the window, where PromQL
// returns no series. A present but degenerate histogram (no +Inf bucket, no observations) yields
// ok=true with NaN, as in PromQL.
func RateQuantile(q float64, series []BucketSeries, start, end int64) (float64, bool) {
	b := BucketRates(series, start, end)
	if len(b) == 0 {
		return 0, false
	}
	return HistogramQuantile(q, b), true
}

// SumBuckets adds bucket sets bound by bound, like `sum by (le) (...)` across engines or pods
// before histogram_quantile. The result is sorted by UpperBound; sums are taken in argument order.
func SumBuckets(sets ...[]Bucket) []Bucket {
	idx := map[float64]int{}
	var out []Bucket
	for _, set := range sets {
		for _, b := range set {
			if i, ok := idx[b.UpperBound]; ok {
				out[i].Count += b.Count
				continue
			}
			idx[b.UpperBound] = len(out)
			out = append(out, b)
		}
	}
	slices.SortFunc(out, byBound)
	return out
}

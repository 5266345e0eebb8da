package derive

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// Bucket is one cumulative bucket of a classic histogram: the count of observations <= UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// BucketSeries is the sample history of one cumulative `_bucket` counter series (one `le` value).
type BucketSeries struct {
	UpperBound float64
	Points     []Point
}

// ParseUpperBound parses an `le` label value as PromQL does (strconv.ParseFloat, so "1", "1.0" and
// "+Inf" all work); ok is false for malformed values and for NaN. Prometheus 2.42 would keep a NaN
// bound and sort it unpredictably; 3.x drops it, and so do we.
func ParseUpperBound(le string) (float64, bool) {
	v, err := strconv.ParseFloat(le, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// HistogramQuantile returns PromQL histogram_quantile(q, buckets) for one classic histogram,
// following Prometheus 2.42 promql/quantile.go bucketQuantile step by step:
//
//   - q NaN → NaN; q < 0 → -Inf; q > 1 → +Inf.
//   - Buckets are sorted by UpperBound; if the highest is not +Inf the result is NaN.
//   - Buckets with equal UpperBound are merged by summing their counts.
//   - Counts are made monotonic by raising each to the running maximum.
//   - Fewer than two buckets, or a +Inf count of 0, → NaN.
//   - rank = q × (+Inf count); the first finite bucket whose count >= rank holds the quantile.
//     None does (rank in the +Inf bucket) → the highest finite UpperBound. The first bucket with
//     UpperBound <= 0 → that UpperBound. Otherwise linear interpolation inside the bucket, whose
//     lower edge is the previous UpperBound, or 0 for the first bucket.
//
// As in Prometheus 3, counts within 1e-12 (relative) of the previous one are taken as equal (see
// ensureMonotonic); Prometheus 2.42 had no such tolerance. buckets is not modified.
func HistogramQuantile(q float64, buckets []Bucket) float64 {
	var out [1]float64
	HistogramQuantiles([]float64{q}, buckets, out[:], nil)
	return out[0]
}

// HistogramQuantiles sets out[i] to HistogramQuantile(qs[i], buckets), sorting and cleaning the buckets once for all
// quantiles in scratch's array (made when too small), which it returns for the next call: a query's quantiles at
// every step and group need no array each.
func HistogramQuantiles(qs []float64, buckets []Bucket, out []float64, scratch []Bucket) []Bucket {
	b := append(scratch[:0], buckets...)
	prepared := prepareBuckets(b)
	for i, q := range qs {
		out[i] = bucketQuantile(q, prepared)
	}
	return b
}

// prepareBuckets sorts b by bound, merges equal bounds and makes the counts monotonic, in place; nil when
// HistogramQuantile is NaN for every quantile in [0, 1] (no buckets, no +Inf bucket, fewer than two buckets).
func prepareBuckets(b []Bucket) []Bucket {
	if len(b) == 0 {
		// PromQL never calls bucketQuantile with no buckets (a group exists only for a sample).
		return nil
	}
	// Stable so the summing order of duplicate bounds is deterministic; Prometheus's order follows
	// its series order, so with duplicates the results may differ in the last bit only. One histogram's buckets
	// usually arrive in order already, and a stable sort leaves sorted input as it is.
	if !slices.IsSortedFunc(b, byBound) {
		slices.SortStableFunc(b, byBound)
	}
	if !math.IsInf(b[len(b)-1].UpperBound, +1) {
		return nil
	}
	b = coalesceBuckets(b)
	ensureMonotonic(b)
	if len(b) < 2 {
		return nil
	}
	return b
}

// bucketQuantile is HistogramQuantile over buckets prepareBuckets returned.
func bucketQuantile(q float64, b []Bucket) float64 {
	if math.IsNaN(q) {
		return math.NaN()
	}
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(+1)
	}
	if b == nil {
		return math.NaN()
	}
	observations := b[len(b)-1].Count
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound
	}
	var (
		bucketStart float64
		bucketEnd   = b[i].UpperBound
		count       = b[i].Count
	)
	if i > 0 {
		bucketStart = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return bucketStart + (bucketEnd-bucketStart)*(rank/count)
}

// coalesceBuckets merges adjacent buckets of a sorted slice that share an upper bound, which
// happens when the same `le` is spelled differently ("1" and "1.0") across series.
func coalesceBuckets(b []Bucket) []Bucket {
	last := b[0]
	i := 0
	for _, x := range b[1:] {
		if x.UpperBound == last.UpperBound {
			last.Count += x.Count
		} else {
			b[i] = last
			last = x
			i++
		}
	}
	b[i] = last
	return b[:i+1]
}

// ensureMonotonic makes counts non-decreasing as Prometheus 3's ensureMonotonicAndIgnoreSmallDeltas does:
// per-bucket rates are extrapolated independently and scrapes are not atomic across bucket series, so
// cumulative counts can dip, and the binary search in HistogramQuantile needs them non-decreasing. A count
// within smallDeltaTolerance (relative) of the last kept one is set to it, in either direction; a lower
// count is raised to it; only a higher count becomes the new reference. A NaN first count is replaced as
// reference by the next count (NaN compares unequal and not lower), so later dips are still raised; 2.42
// seeded a running maximum with it and left them in place.
func ensureMonotonic(b []Bucket) {
	prev := b[0].Count
	for i := 1; i < len(b); i++ {
		curr := b[i].Count
		switch {
		case curr == prev:
		case almostEqual(prev, curr, smallDeltaTolerance), curr < prev:
			b[i].Count = prev
		default:
			prev = curr
		}
	}
}

// smallDeltaTolerance is Prometheus 3's promql smallDeltaTolerance: bucket counts closer than this
// (relative) are floating-point noise.
const smallDeltaTolerance = 1e-12

// minNormal is the smallest positive normal float64.
var minNormal = math.Float64frombits(0x0010000000000000)

// almostEqual is Prometheus 3's util/almost.Equal: a and b differ by less than epsilon times their sum
// (or, near zero, epsilon times minNormal); two NaNs are equal, a staleness marker only to another.
func almostEqual(a, b, epsilon float64) bool {
	if isStale(a) || isStale(b) {
		return isStale(a) && isStale(b)
	}
	if math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if a == b {
		return true
	}
	absSum := math.Abs(a) + math.Abs(b)
	diff := math.Abs(a - b)
	if a == 0 || b == 0 || absSum < minNormal {
		return diff < epsilon*minNormal
	}
	return diff/math.Min(absSum, math.MaxFloat64) < epsilon
}

// HistogramMean returns increase(x_sum[w]) / increase(x_count[w]) (or the same with rates), the
// mean observation over the window; ok is false and the value NaN when no observation was made.
func HistogramMean(sumIncrease, countIncrease float64) (float64, bool) {
	return Ratio(sumIncrease, countIncrease)
}

// byBound orders buckets by upper bound.
func byBound(x, y Bucket) int {
	switch {
	case x.UpperBound < y.UpperBound:
		return -1
	case x.UpperBound > y.UpperBound:
		return +1
	}
	return 0
}

package derive

import "math"

// SLOBounds are the bucket bounds an SLO threshold falls between: lo is the highest bound at or below it (0 when
// none is, the lower edge histogram_quantile gives the first bucket), hi the lowest bound above it (+Inf when none
// is). Exact is true when the threshold is itself a bound, so nothing is interpolated.
type SLOBounds struct {
	Lo, Hi float64
	Exact  bool
}

// BoundsAround finds the bounds around threshold among a histogram's upper bounds (any order, repeats allowed).
func BoundsAround(bounds []float64, threshold float64) SLOBounds {
	b := SLOBounds{Lo: 0, Hi: math.Inf(1)}
	for _, x := range bounds {
		switch {
		case x <= threshold && x > b.Lo:
			b.Lo = x
		case x > threshold && x < b.Hi:
			b.Hi = x
		}
		if x == threshold {
			b.Exact = true
		}
	}
	return b
}

// SLOAttainment is the share of observations at or below threshold from one window's bucket rates (equal bounds
// summed, as sum by (le) does): the cumulative count at threshold over the +Inf count, the count at threshold
// interpolated linearly between the counts at b.Lo and b.Hi — the assumption histogram_quantile makes inside a
// bucket. A threshold at or past the highest finite bound reads the count at that bound (a lower bound of the
// share: the +Inf bucket holds no spread). ok is false when the +Inf count is not above 0 or a bound it needs is
// missing (b.Lo is read only when above 0).
//
// In PromQL, for a group G and bucket counts c(x) = sum by (G) (rate(h_bucket{le="x"}[w])):
//
//	(c(lo) + (c(hi) - c(lo)) * (threshold - lo) / (hi - lo)) / c(+Inf)
//
// with c(0) = 0 and, for hi = +Inf, c(lo) / c(+Inf).
func SLOAttainment(buckets []Bucket, b SLOBounds, threshold float64) (float64, bool) {
	within, total, ok := CountWithin(buckets, b, threshold)
	if !ok || !(total > 0) {
		return 0, false
	}
	return within / total, true
}

// CountWithin is the interpolated count at or below threshold that SLOAttainment divides by the +Inf count, and
// that count; from bucket rates, within is the goodput of one SLO (requests per second meeting it). ok is false
// when a bound it needs, or the +Inf bucket, is missing.
func CountWithin(buckets []Bucket, b SLOBounds, threshold float64) (within, total float64, ok bool) {
	count := func(le float64) (float64, bool) {
		sum, found := 0.0, false
		for _, x := range buckets {
			if x.UpperBound == le {
				sum += x.Count
				found = true
			}
		}
		return sum, found
	}
	if total, ok = count(math.Inf(1)); !ok || b.Lo == 0 && math.IsInf(b.Hi, 1) {
		return 0, 0, false // no finite bound at all: nothing to read the threshold against
	}
	lo := 0.0
	if b.Lo > 0 {
		if lo, ok = count(b.Lo); !ok {
			return 0, 0, false
		}
	}
	if math.IsInf(b.Hi, 1) {
		return lo, total, true
	}
	hi, ok := count(b.Hi)
	if !ok {
		return 0, 0, false
	}
	return lo + (hi-lo)*(threshold-b.Lo)/(b.Hi-b.Lo), total, true
}

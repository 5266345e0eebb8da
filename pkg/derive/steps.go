package derive

// Steps returns the evaluation timestamps of a Prometheus range query from..to with the given
// step (all ms): from, from+step, … while <= to, as the 2.42 engine loops. It returns nil when
// step <= 0 or to < from. Grafana aligns from and to to multiples of step before asking; that
// alignment is the caller's, so both sides evaluate at the same instants.
func Steps(from, to, step int64) []int64 {
	if step <= 0 || to < from {
		return nil
	}
	// Counting steps rather than testing t <= to keeps a range that ends near the largest int64 from wrapping
	// around into an endless loop; callers bound the count (query.MaxPointsPerSeries).
	n := (to-from)/step + 1
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)*step
	}
	return out
}

// EvalRange evaluates f at every step of a range query from..to and returns one Point per step
// where f has a result, like query_range does for one series. f receives the window
// [t−window, t] of the step t, e.g.
//
//	EvalRange(from, to, step, w, func(s, e int64) (float64, bool) { return Rate(points, s, e) })
//
// matches query_range of rate(x[w]), and with
// HistogramQuantile(q, BucketRates(series, s, e)) it matches histogram_quantile(q, rate(x_bucket[w])).
func EvalRange(from, to, step, window int64, f func(start, end int64) (float64, bool)) []Point {
	ts := Steps(from, to, step)
	out := make([]Point, 0, len(ts))
	for _, t := range ts {
		if v, ok := f(t-window, t); ok {
			out = append(out, Point{T: t, V: v})
		}
	}
	return out
}

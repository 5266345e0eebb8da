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

// Package derive computes the numbers InferScope shows from raw scraped samples — rates, histogram quantiles,
// vLLM ratios, DP balance and KV capacity — exactly as Prometheus 3 computes them on the same samples (tested
// against 3.16, and against 2.42 where the two agree), so a dashboard reads the same value whether it queries us in
// direct mode or a Prometheus scraping the same fleet.
//
// Conventions shared by every function:
//   - Timestamps are int64 Unix milliseconds, as in the Prometheus TSDB.
//   - A series is a []Point sorted by strictly increasing T (no duplicate timestamps); functions
//     never modify their inputs.
//   - A range (start, end] selects samples with start < T <= end, as Prometheus 3's left-open range
//     selectors do; 2.x also took a sample exactly at start, so results differ from 2.x only then.
//   - Points whose value is the Prometheus staleness marker (StaleNaN) are ignored, as the
//     PromQL engine skips them when it builds a range vector.
//   - Where PromQL would drop a series from its result the functions return ok=false.
package derive

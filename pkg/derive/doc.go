// Package derive computes the numbers InferScope shows from raw scraped samples — rate, increase,
// irate, histogram quantiles, vLLM ratios, DP balance and KV capacity — exactly as the Prometheus
// server used for comparison (Debian's 2.42.0) computes them on the same samples, so a dashboard
// reads the same value whether it queries us in direct mode or a Prometheus scraping the same fleet.
//
// Conventions shared by every function:
//   - Timestamps are int64 Unix milliseconds, as in the Prometheus TSDB.
//   - A series is a []Point sorted by strictly increasing T (no duplicate timestamps); functions
//     never modify their inputs.
//   - A range [start, end] selects samples with start <= T <= end. Prometheus 2.x range selectors
//     are closed on both sides; Prometheus 3.0 made them left-open, (start, end], so results differ
//     from 3.x only when a sample sits exactly on the left edge of a window.
//   - Points whose value is the Prometheus staleness marker (StaleNaN) are ignored, as the
//     PromQL engine skips them when it builds a range vector.
//   - Where PromQL would drop a series from its result the functions return ok=false.
package derive

package query

import (
	"fmt"
	"time"
)

// Limits on what one query may ask for. Viewers can send any query, so each of these bounds memory or time; a
// query over a limit is refused with an error naming it, except MaxPointsPerSeries, which raises the step.
const (
	// MaxPointsPerSeries is Prometheus's own limit on points per series of a range query.
	MaxPointsPerSeries = 11_000
	// MaxQuantiles bounds a latency or raw-histogram query's quantile list (each quantile is a series per group).
	MaxQuantiles = 32
	// MaxPeak bounds an accelerator peak (TFLOP/s or TB/s) a query or a data source may name.
	MaxPeak = 1e6
	// MinPeak is the smallest accelerator peak (TFLOP/s or TB/s) a query or a data source may name: 1 GFLOP/s or
	// 1 GB/s is below any accelerator, and a subnormal peak such as 5e-324 would make every MFU point +Inf.
	MinPeak = 1e-3
	// MaxMatcherBytes bounds each regular expression (endpoint, model, engine, label matchers); a multi-value
	// variable over a thousand endpoints still fits.
	MaxMatcherBytes = 64 << 10
	// MaxLabelMatchers bounds a raw query's label matchers.
	MaxLabelMatchers = 64
	// MaxTextBytes bounds the free-text fields: metric, legendFormat, window, score, histogram.
	MaxTextBytes = 4 << 10
	// MaxExprBytes bounds a promql query's expression.
	MaxExprBytes = 64 << 10
	// MaxExecutedQueryBytes bounds the executed-query string a response carries for the query inspector.
	MaxExecutedQueryBytes = 4 << 10
	// MaxSeriesPerQuery bounds the series (frames) one query returns, in both modes; beyond it the answer is cut
	// and a notice says how to narrow the query. A fleet of 256 endpoints × 8 engines × 4 quantiles fits.
	MaxSeriesPerQuery = 10_000
	// MaxPointsPerQuery bounds the points of one query's answer (16 bytes each while decoded), in both modes.
	MaxPointsPerQuery = 5_000_000
	// MaxFetchedPoints bounds the stored points one direct-mode query reads (decompressed to 16 bytes each, about
	// 400 MB): a query over more is refused, since history is compressed some 20-fold and a query over all of it
	// would need many times the memory cap.
	MaxFetchedPoints = 25_000_000
	// MaxFetchedSeries bounds the stored series one direct-mode query reads; 256 endpoints × 8 engines × 28
	// latency buckets fit four times over.
	MaxFetchedSeries = 250_000
	// MaxLimit bounds a query's limit (the series kept per output by rank); more is no longer a top list.
	MaxLimit = 1_000
	// MaxBuckets bounds a distribution's bucket bounds: a heatmap's rows.
	MaxBuckets = 50
	// SplitInterval is how long a range Prometheus mode sends as one request: a longer range query is split, as a
	// Thanos or Cortex query frontend splits it, at multiples of this interval since the epoch (UTC midnights),
	// bounding each request's work on the server; the answers are joined into the same numbers.
	SplitInterval = 24 * time.Hour
	// MaxSplits bounds the requests one range query is split into: a longer range gets a multiple of SplitInterval.
	MaxSplits = 32
	// SplitConcurrency bounds how many requests of one split range query are in flight at once.
	SplitConcurrency = 4
)

// TruncatedNotice is the notice of an answer cut at MaxSeriesPerQuery or MaxPointsPerQuery.
func TruncatedNotice(kept int) string {
	return fmt.Sprintf("only the first %d series are shown (at most %d series and %d points per query): narrow the query with endpoint, model or engine filters, or a shorter range",
		kept, MaxSeriesPerQuery, MaxPointsPerQuery)
}

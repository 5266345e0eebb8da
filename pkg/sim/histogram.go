package sim

import (
	"sort"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// histogram is a classic Prometheus histogram with fixed upper bounds (+Inf implied).
type histogram struct {
	bounds []float64 // ascending, without +Inf
	counts []float64 // per bucket, not cumulative; len(bounds)+1, the last is +Inf
	sum    float64
	count  float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]float64, len(bounds)+1)}
}

// observe records v n times; n > 1 lets an engine step record one latency for a whole batch cheaply.
func (h *histogram) observe(v float64, n int) {
	if n <= 0 {
		return
	}
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v, i.e. the le bucket
	h.counts[i] += float64(n)
	h.sum += v * float64(n)
	h.count += float64(n)
}

// add adds another histogram of the same bounds into h.
func (h *histogram) add(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.sum += o.sum
	h.count += o.count
}

// cumulative returns the bucket counts as exposed (each includes all lower buckets), +Inf last.
func (h *histogram) cumulative() []float64 {
	out := make([]float64, len(h.counts))
	acc := 0.0
	for i, c := range h.counts {
		acc += c
		out[i] = acc
	}
	return out
}

// Bucket layouts: vLLM's are pkg/vllm's (the provenance table's), msServiceProfiler's (definitions.py,
// metric_hook.py) and Dynamo's (fe.log capture) are here.
var (
	bucketsTTFTv1            = vllm.BucketsTTFT
	bucketsITLv1             = vllm.BucketsITL
	bucketsRequestLatencyV1  = vllm.BucketsRequestLatency
	bucketsIterationTokensV1 = vllm.BucketsIterationTokens

	bucketsTTFTv0           = vllm.BucketsTTFTV0
	bucketsTPOTv0           = vllm.BucketsTPOTV0
	bucketsRequestLatencyV0 = vllm.BucketsRequestLatencyV0
	// The flavor vllm-v0 runs with --enforce-eager; a -vllm-version 0.6 server with CUDA graphs (the table's).
	bucketsIterationTokensV0 = vllm.BucketsIterationTokensV0Eager

	bucketsAscendBatch = []float64{0, 1, 10, 20, 30, 40, 50, 75, 100, 125, 150, 175, 200, 300, 400, 500,
		600, 700, 800, 900, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 7000, 8000, 10000, 262144}
	bucketsAscendTimer = []float64{0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
		0.06, 0.07, 0.08, 0.09, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
		1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5,
		8.0, 8.5, 9.0, 9.5, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 90.0, 120.0, 180.0, 300.0}

	bucketsDynamoTTFT     = []float64{0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1, 2.2, 4.7, 10, 22, 48, 100, 220, 480}
	bucketsDynamoITL      = []float64{0, 0.0019, 0.0035, 0.0067, 0.013, 0.024, 0.045, 0.084, 0.16, 0.3, 0.56, 1.1, 2}
	bucketsDynamoDuration = []float64{0, 1.9, 3.4, 6.3, 12, 22, 40, 75, 140, 260}
	// bucketsHitRate are tenths of a 0–1 ratio.
	bucketsHitRate   = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	bucketsDynamoISL = []float64{0, 100, 210, 430, 870, 1800, 3600, 7400, 15000, 31000, 63000, 130000}
	bucketsDynamoOSL = []float64{0, 100, 210, 430, 880, 1800, 3700, 7600, 16000, 32000}
	// LMCache's retrieval time (lmcache/observability.py).
	bucketsLMCacheRetrieve = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	// prometheus-fastapi-instrumentator's default latency_lowr_buckets of http_request_duration_seconds.
	bucketsHTTPDuration = []float64{0.1, 0.5, 1}
	// The Rust prometheus crate's default buckets, used by the work handler's duration histogram.
	bucketsRustDefault = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

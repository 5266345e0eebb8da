package sim

import (
	"math"
	"sort"
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

// Bucket layouts, as declared by vLLM (vllm/v1/metrics/loggers.py, vllm/engine/metrics.py),
// msServiceProfiler (definitions.py, metric_hook.py) and Dynamo (fe.log capture).
var (
	bucketsTTFTv1 = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	bucketsITLv1 = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	bucketsRequestLatencyV1 = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
		30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	bucketsIterationTokensV1 = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	bucketsParamsN           = []float64{1, 2, 5, 10, 20}

	bucketsTTFTv0 = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0}
	bucketsTPOTv0           = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
	bucketsRequestLatencyV0 = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
		30.0, 40.0, 50.0, 60.0}
	// 8096 (not 8192) is what V0 really declares.
	bucketsIterationTokensV0 = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8096}

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
	// The NIXL connector's (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py): transfer time without
	// the 1 ms bucket post time has, bytes from 2 KiB to 8 GiB in steps of 4×, descriptors per transfer.
	bucketsNixlPost        = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	bucketsNixlXfer        = bucketsNixlPost[1:]
	bucketsNixlBytes       = nixlByteBuckets()
	bucketsNixlDescriptors = []float64{10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000}
	// The offloading connector's (vllm/.../kv_connector/v1/offloading/metrics.py): transfer sizes in bytes, and the
	// time of one lookup call.
	bucketsOffloadSize   = []float64{1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6}
	bucketsOffloadLookup = []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}
	// LMCache's retrieval time (lmcache/observability.py).
	bucketsLMCacheRetrieve = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	// KV block residency (--kv-cache-metrics): the simulator's own bounds, from a tenth of a second to an hour.
	bucketsKVResidency = []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	// The Rust prometheus crate's default buckets, used by the work handler's duration histogram.
	bucketsRustDefault = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// nixlByteBuckets are 2^(10+i) for i = 1, 3, …, 23, as the NIXL connector declares them.
func nixlByteBuckets() []float64 {
	var out []float64
	for i := 1; i < 25; i += 2 {
		out = append(out, math.Pow(2, float64(10+i)))
	}
	return out
}

// buckets125 mirrors vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max.
func buckets125(max int) []float64 {
	var out []float64
	for exp := 0; ; exp++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, float64(exp))
			if v > float64(max) {
				return out
			}
			out = append(out, v)
		}
	}
}

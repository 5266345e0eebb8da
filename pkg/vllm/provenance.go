package vllm

import (
	"math"
	"slices"
)

// Upstream projects whose metric names InferScope reads.
const (
	ProjectVLLM = "vllm-project/vllm"
)

// Engine is the vLLM engine generation whose metrics code declares a family.
type Engine uint8

// Engines.
const (
	// EngineV1 is vllm/v1 (the default from 0.8, the only engine from 0.11); also every non-vLLM project's row.
	EngineV1 Engine = iota
	// EngineV0 is vllm/engine/metrics.py, the V0 engine's.
	EngineV0
)

// Condition is what a server must be configured with for vLLM to register a family; Always registers it on every
// server of the releases that have it.
type Condition string

// Conditions.
const (
	Always             Condition = ""
	WithSpecDecode     Condition = "a speculative_config"
	WithLoRA           Condition = "--enable-lora"
	WithNIXL           Condition = "the NixlConnector (--kv-transfer-config)"
	WithOffload        Condition = "the OffloadingConnector (--kv-offloading-size)"
	WithStoreThreshold Condition = "the CPU offloading spec's store_threshold >= 2"
	WithKVCacheMetrics Condition = "--kv-cache-metrics"
	WithNaNCheck       Condition = "VLLM_COMPUTE_NANS_IN_LOGITS=1"
)

// Family is one metric family as upstream declares it, and the releases that emit it: the one definition the
// simulator renders, the catalog is checked against and the README's version notes are generated from.
type Family struct {
	// Name is as prometheus_client names the family: counters without _total (the exposition adds it), histograms
	// by their base name.
	Name   string
	Type   Kind
	Engine Engine
	// Labels are the label names the declaring code passes; LabelsSince replaces them from a later release on.
	Labels      []string
	LabelsSince []LabelVariant
	// Buckets are the histogram's upper bounds without +Inf; TokenBuckets means build_1_2_5_buckets(max_model_len).
	Buckets      []float64
	TokenBuckets bool
	// Project and File say where upstream declares the family (the newest file where it moved).
	Project, File string
	// First and Last are the first and last release whose source declares it; Last is empty while main still does.
	// First is Main for a name no tag has.
	First, Last string
	// Deprecated is the first release whose help text (or, for the offload names, source) marks it deprecated; Hidden
	// the first that registers it only with --show-hidden-metrics-for-version.
	Deprecated, Hidden string
	When               Condition
	// Unreleased says where a name no release has was found.
	Unreleased string
}

// LabelVariant is a family's label names from release Since on.
type LabelVariant struct {
	Since  string
	Labels []string
}

// In reports whether release emits the family (deprecated or hidden ones included).
func (f Family) In(release string) bool {
	return CompareReleases(release, f.First) >= 0 && (f.Last == "" || CompareReleases(release, f.Last) <= 0)
}

// HiddenIn reports whether release registers the family only with --show-hidden-metrics-for-version.
func (f Family) HiddenIn(release string) bool {
	return f.Hidden != "" && CompareReleases(release, f.Hidden) >= 0
}

// LabelsAt returns the family's label names in release.
func (f Family) LabelsAt(release string) []string {
	out := f.Labels
	for _, v := range f.LabelsSince {
		if CompareReleases(release, v.Since) >= 0 {
			out = v.Labels
		}
	}
	return out
}

// BucketsAt returns the histogram's upper bounds for a server with the given --max-model-len.
func (f Family) BucketsAt(maxModelLen int) []float64 {
	if f.TokenBuckets {
		return Buckets125(maxModelLen)
	}
	return f.Buckets
}

// FamiliesAt returns the families a release's server registers: those of its engine generation, whose condition on
// reports true, the hidden ones only when showHidden.
func FamiliesAt(release string, on func(Condition) bool, showHidden bool) []Family {
	engine := EngineV1
	if V0Release(release) {
		engine = EngineV0
	}
	var out []Family
	for _, f := range VLLMFamilies {
		if f.Engine != engine || !f.In(release) || f.HiddenIn(release) && !showHidden {
			continue
		}
		if f.When != Always && !on(f.When) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, … up to max.
func Buckets125(max int) []float64 {
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

// Bucket layouts as vLLM declares them (the file of each family's row).
var (
	BucketsTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	BucketsITL = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	BucketsRequestLatency = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
		30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	BucketsIterationTokens = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	BucketsParamsN         = []float64{1, 2, 5, 10, 20}
	BucketsKVResidency     = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30,
		60, 120, 300, 600, 1200, 1800}
	// The NIXL connector's: post time, transfer time (the same without the 1 ms bucket), bytes from 2 KiB to 8 GiB in
	// steps of 4×, descriptors per transfer.
	BucketsNixlPost        = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	BucketsNixlXfer        = BucketsNixlPost[1:]
	BucketsNixlBytes       = nixlByteBuckets()
	BucketsNixlDescriptors = []float64{10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000}
	// The offloading connector's transfer sizes in bytes (TRANSFER_SIZE_BUCKETS), lookup delays in seconds and the
	// CPU spec's blocks per prepare_store call.
	BucketsOffloadSize        = []float64{1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6}
	BucketsOffloadLookupSync  = []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}
	BucketsOffloadLookupAsync = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	BucketsOffloadAllocation  = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144}

	// V0's (vllm/engine/metrics.py, as of 0.6.6).
	BucketsTTFTV0 = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0}
	BucketsTPOTV0           = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
	BucketsRequestLatencyV0 = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
		30.0, 40.0, 50.0, 60.0}
	// BucketsIterationTokensV0 are the CUDA-graph capture sizes at the default max_num_seqs of 256, which V0 uses
	// unless --enforce-eager (then BucketsIterationTokensV0Eager, where 8096, not 8192, is what V0 declares).
	BucketsIterationTokensV0      = captureSizes(256)
	BucketsIterationTokensV0Eager = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8096}
	BucketsModelTimeMsV0          = []float64{1, 2, 3, 5, 8, 10, 20, 30, 50, 80, 100, 200, 300, 500, 800, 1000, 2000, 3000}
)

// nixlByteBuckets are 2^(10+i) for i = 1, 3, …, 23, as the NIXL connector declares them.
func nixlByteBuckets() []float64 {
	var out []float64
	for i := 1; i < 25; i += 2 {
		out = append(out, math.Pow(2, float64(10+i)))
	}
	return out
}

// captureSizes are V0's default CUDA-graph batch sizes up to max: 1, 2, 4, then every multiple of 8.
func captureSizes(max int) []float64 {
	out := []float64{1, 2, 4}
	for v := 8; v <= max; v += 8 {
		out = append(out, float64(v))
	}
	return out
}

// Label sets.
var (
	labelsV1 = []string{"model_name", "engine"}
	labelsV0 = []string{"model_name"}
)

func v1Labels(extra ...string) []string { return append(slices.Clone(labelsV1), extra...) }

// Files that declare vLLM's families.
const (
	fileV0         = "vllm/engine/metrics.py"
	fileLoggers    = "vllm/v1/metrics/loggers.py"
	fileSpec       = "vllm/v1/spec_decode/metrics.py"
	filePerf       = "vllm/v1/metrics/perf.py"
	fileNixl       = "vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py (nixl_connector.py before 0.20)"
	fileOffload    = "vllm/distributed/kv_transfer/kv_connector/v1/offloading/metrics.py (offloading_connector.py before 0.19)"
	fileCPUOffload = "vllm/v1/kv_offload/cpu/spec.py (names in cpu/common.py)"
)

// cacheConfigLabels are vllm:cache_config_info's labels: every attribute of CacheConfig (metrics_info() is its
// __dict__, vllm/config/cache.py) and, on V1, engine.
var (
	cacheConfigV0 = []string{"block_size", "gpu_memory_utilization", "swap_space_bytes", "num_gpu_blocks_override",
		"cache_dtype", "is_attention_free", "sliding_window", "enable_prefix_caching", "cpu_offload_gb",
		"num_gpu_blocks", "num_cpu_blocks"}
	cacheConfig010 = []string{"block_size", "gpu_memory_utilization", "swap_space", "cache_dtype", "is_attention_free",
		"num_gpu_blocks_override", "sliding_window", "enable_prefix_caching", "prefix_caching_hash_algo",
		"cpu_offload_gb", "calculate_kv_scales", "cpu_kvcache_space_bytes", "mamba_page_size_padded",
		"mamba_cache_dtype", "mamba_ssm_cache_dtype", "kv_sharing_fast_prefill", "kv_cache_memory_bytes",
		"swap_space_bytes", "num_gpu_blocks", "num_cpu_blocks", "engine"}
	cacheConfig013 = []string{"block_size", "gpu_memory_utilization", "swap_space", "cache_dtype", "is_attention_free",
		"num_gpu_blocks_override", "sliding_window", "enable_prefix_caching", "prefix_caching_hash_algo",
		"cpu_offload_gb", "calculate_kv_scales", "cpu_kvcache_space_bytes", "mamba_page_size_padded",
		"mamba_block_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "num_gpu_blocks", "num_cpu_blocks",
		"kv_sharing_fast_prefill", "kv_cache_memory_bytes", "kv_offloading_size", "kv_offloading_backend", "engine"}
	cacheConfig016 = []string{"block_size", "gpu_memory_utilization", "swap_space", "cache_dtype", "is_attention_free",
		"num_gpu_blocks_override", "sliding_window", "enable_prefix_caching", "prefix_caching_hash_algo",
		"cpu_offload_gb", "calculate_kv_scales", "cpu_kvcache_space_bytes", "mamba_page_size_padded",
		"mamba_block_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "mamba_cache_mode", "num_gpu_blocks",
		"num_cpu_blocks", "kv_sharing_fast_prefill", "kv_cache_memory_bytes", "kv_offloading_size",
		"kv_offloading_backend", "engine"}
	cacheConfig020 = []string{"block_size", "hash_block_size", "gpu_memory_utilization", "cache_dtype",
		"is_attention_free", "num_gpu_blocks_override", "sliding_window", "enable_prefix_caching",
		"prefix_caching_hash_algo", "calculate_kv_scales", "kv_cache_dtype_skip_layers", "mamba_page_size_padded",
		"mamba_block_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "mamba_cache_mode", "kv_sharing_fast_prefill",
		"kv_cache_memory_bytes", "kv_offloading_size", "kv_offloading_backend", "_block_size_resolved",
		"user_specified_block_size", "user_specified_mamba_block_size", "num_gpu_blocks", "num_cpu_blocks", "engine"}
	// From 0.24.0 the engine sets the KV capacity in tokens and the concurrency at max_model_len after init; from
	// 0.25.0 the skip layers' page size is a field.
	cacheConfig024 = append(slices.Clone(cacheConfig020[:len(cacheConfig020)-1]), "kv_cache_size_tokens",
		"kv_cache_max_concurrency", "engine")
	cacheConfig025 = slices.Insert(slices.Clone(cacheConfig024), slices.Index(cacheConfig024, "mamba_page_size_padded")+1,
		"skip_page_size_padded")
	cacheConfigMain = []string{"block_size", "user_specified_block_size", "user_specified_mamba_block_size",
		"prefix_match_unit", "gpu_memory_utilization", "cache_dtype", "is_attention_free", "num_gpu_blocks_override",
		"sliding_window", "enable_prefix_caching", "prefix_caching_hash_algo", "kv_cache_dtype_skip_layers",
		"mamba_page_size_padded", "skip_page_size_padded", "mamba_block_size", "mamba_cache_dtype",
		"mamba_ssm_cache_dtype", "mamba_cache_mode", "replayssm_buffer_len", "use_replayssm", "num_gpu_blocks",
		"num_cpu_blocks", "kv_cache_size_tokens", "kv_cache_max_concurrency", "kv_sharing_fast_prefill",
		"kv_cache_memory_bytes", "kv_offloading_size", "kv_offloading_backend", "_block_size_resolved", "engine"}
)

// v0 and v1 build rows of vLLM's own families.
func v0(name string, typ Kind, first, last string, labels []string, buckets []float64) Family {
	return Family{Name: name, Type: typ, Engine: EngineV0, Labels: labels, Buckets: buckets, Project: ProjectVLLM,
		File: fileV0, First: first, Last: last}
}

func v1(name string, typ Kind, file, first, last string, labels []string, buckets []float64) Family {
	return Family{Name: name, Type: typ, Engine: EngineV1, Labels: labels, Buckets: buckets, Project: ProjectVLLM,
		File: file, First: first, Last: last}
}

func (f Family) when(c Condition) Family       { f.When = c; return f }
func (f Family) tokens() Family                { f.TokenBuckets = true; return f }
func (f Family) deprecated(d, h string) Family { f.Deprecated, f.Hidden = d, h; return f }
func (f Family) labelsSince(v ...LabelVariant) Family {
	f.LabelsSince = v
	return f
}

// VLLMFamilies are vLLM's own families, read in the source of every tag from v0.6.0 to NewestRelease and of main at
// MainCommit (VLLMReleasesRead says through which forks). First "0.6.0" means 0.6.0 or earlier: older tags were not
// read; Last "" means the newest tag read and main still declare it. Label names and buckets are those of the
// releases the simulator speaks (SimReleases); the manifests test checks 0.6.6, 0.10.2, 0.11.0 and 0.20.1 against
// vLLM's own code run under several configurations. Families the product neither reads nor simulates are left out
// (the API server's websocket_*, the hf3fs and Mooncake-store connectors', 0.24.0's diffusion_* counters of
// diffusion models and tool_call_parser_invocations).
var VLLMFamilies = []Family{
	// V0 engine (vllm/engine/metrics.py).
	v0("vllm:num_requests_running", Gauge, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:num_requests_waiting", Gauge, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:num_requests_swapped", Gauge, "0.6.0", "0.9.0", labelsV0, nil),
	v0("vllm:lora_requests_info", Gauge, "0.6.4", "0.11.0", []string{"running_lora_adapters", "max_lora", "waiting_lora_adapters"}, nil),
	v0("vllm:gpu_cache_usage_perc", Gauge, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:cpu_cache_usage_perc", Gauge, "0.6.0", "0.9.0", labelsV0, nil),
	v0("vllm:cpu_prefix_cache_hit_rate", Gauge, "0.6.0", "0.9.0", labelsV0, nil),
	v0("vllm:gpu_prefix_cache_hit_rate", Gauge, "0.6.0", "0.9.0", labelsV0, nil),
	v0("vllm:avg_prompt_throughput_toks_per_s", Gauge, "0.6.0", "0.6.6", labelsV0, nil),
	v0("vllm:avg_generation_throughput_toks_per_s", Gauge, "0.6.0", "0.6.6", labelsV0, nil),
	v0("vllm:num_preemptions", Counter, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:prompt_tokens", Counter, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:generation_tokens", Counter, "0.6.0", "0.11.0", labelsV0, nil),
	v0("vllm:tokens", Counter, "0.6.4", "0.7.3", labelsV0, nil),
	v0("vllm:iteration_tokens_total", Histogram, "0.6.4", "0.11.0", labelsV0, BucketsIterationTokensV0),
	v0("vllm:time_to_first_token_seconds", Histogram, "0.6.0", "0.11.0", labelsV0, BucketsTTFTV0),
	v0("vllm:time_per_output_token_seconds", Histogram, "0.6.0", "0.11.0", labelsV0, BucketsTPOTV0),
	v0("vllm:e2e_request_latency_seconds", Histogram, "0.6.0", "0.11.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:request_queue_time_seconds", Histogram, "0.6.4", "0.11.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:request_inference_time_seconds", Histogram, "0.6.4", "0.11.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:request_prefill_time_seconds", Histogram, "0.6.4", "0.11.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:request_decode_time_seconds", Histogram, "0.6.4", "0.11.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:time_in_queue_requests", Histogram, "0.6.4", "0.9.0", labelsV0, BucketsRequestLatencyV0),
	v0("vllm:model_forward_time_milliseconds", Histogram, "0.6.4", "0.9.0", labelsV0, BucketsModelTimeMsV0),
	v0("vllm:model_execute_time_milliseconds", Histogram, "0.6.4", "0.9.0", labelsV0, BucketsModelTimeMsV0),
	v0("vllm:request_prompt_tokens", Histogram, "0.6.0", "0.11.0", labelsV0, nil).tokens(),
	v0("vllm:request_generation_tokens", Histogram, "0.6.0", "0.11.0", labelsV0, nil).tokens(),
	v0("vllm:request_max_num_generation_tokens", Histogram, "0.6.4", "0.11.0", labelsV0, nil).tokens(),
	v0("vllm:request_params_n", Histogram, "0.6.0", "0.11.0", labelsV0, BucketsParamsN),
	v0("vllm:request_params_max_tokens", Histogram, "0.6.4", "0.11.0", labelsV0, nil).tokens(),
	v0("vllm:request_success", Counter, "0.6.0", "0.11.0", []string{"model_name", "finished_reason"}, nil),
	v0("vllm:spec_decode_draft_acceptance_rate", Gauge, "0.6.0", "0.9.2", labelsV0, nil),
	v0("vllm:spec_decode_efficiency", Gauge, "0.6.0", "0.9.2", labelsV0, nil),
	v0("vllm:spec_decode_num_accepted_tokens", Counter, "0.6.0", "0.9.2", labelsV0, nil),
	v0("vllm:spec_decode_num_draft_tokens", Counter, "0.6.0", "0.9.2", labelsV0, nil),
	v0("vllm:spec_decode_num_emitted_tokens", Counter, "0.6.0", "0.9.2", labelsV0, nil),
	v0("vllm:cache_config_info", Gauge, "0.6.0", "0.11.0", cacheConfigV0, nil),

	// V1 engine: the PrometheusStatLogger (vllm/v1/metrics/loggers.py).
	v1("vllm:num_requests_running", Gauge, fileLoggers, "0.7.1", "", labelsV1, nil),
	v1("vllm:num_requests_waiting", Gauge, fileLoggers, "0.7.1", "", labelsV1, nil),
	v1("vllm:num_requests_waiting_by_reason", Gauge, fileLoggers, "0.20.0", "", v1Labels("reason"), nil),
	v1("vllm:engine_sleep_state", Gauge, fileLoggers, "0.11.1", "", v1Labels("sleep_state"), nil),
	v1("vllm:gpu_cache_usage_perc", Gauge, fileLoggers, "0.7.1", "0.11.2", labelsV1, nil).deprecated("0.10.0", "0.11.0"),
	v1("vllm:kv_cache_usage_perc", Gauge, fileLoggers, "0.9.2", "", labelsV1, nil),
	v1("vllm:corrupted_requests", Counter, fileLoggers, "0.11.1", "", labelsV1, nil).when(WithNaNCheck),
	v1("vllm:gpu_prefix_cache_queries", Counter, fileLoggers, "0.7.3", "0.11.2", labelsV1, nil).deprecated("0.10.0", "0.11.0"),
	v1("vllm:gpu_prefix_cache_hits", Counter, fileLoggers, "0.7.3", "0.11.2", labelsV1, nil).deprecated("0.10.0", "0.11.0"),
	v1("vllm:prefix_cache_queries", Counter, fileLoggers, "0.9.2", "", labelsV1, nil),
	v1("vllm:prefix_cache_hits", Counter, fileLoggers, "0.9.2", "", labelsV1, nil),
	v1("vllm:external_prefix_cache_queries", Counter, fileLoggers, "0.11.1", "", labelsV1, nil),
	v1("vllm:external_prefix_cache_hits", Counter, fileLoggers, "0.11.1", "", labelsV1, nil),
	v1("vllm:mm_cache_queries", Counter, fileLoggers, "0.11.1", "", labelsV1, nil),
	v1("vllm:mm_cache_hits", Counter, fileLoggers, "0.11.1", "", labelsV1, nil),
	v1("vllm:num_preemptions", Counter, fileLoggers, "0.8.0", "", labelsV1, nil),
	v1("vllm:prompt_tokens", Counter, fileLoggers, "0.7.1", "", labelsV1, nil),
	v1("vllm:prompt_tokens_by_source", Counter, fileLoggers, "0.16.0", "", v1Labels("source"), nil),
	v1("vllm:prompt_tokens_cached", Counter, fileLoggers, "0.16.0", "", labelsV1, nil),
	v1("vllm:prompt_tokens_recomputed", Counter, fileLoggers, "0.16.0", "0.19.1", labelsV1, nil),
	v1("vllm:generation_tokens", Counter, fileLoggers, "0.7.1", "", labelsV1, nil),
	v1("vllm:request_success", Counter, fileLoggers, "0.7.2", "", v1Labels("finished_reason"), nil),
	v1("vllm:request_prompt_tokens", Histogram, fileLoggers, "0.7.1", "", labelsV1, nil).tokens(),
	v1("vllm:request_generation_tokens", Histogram, fileLoggers, "0.7.1", "", labelsV1, nil).tokens(),
	v1("vllm:iteration_tokens_total", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsIterationTokens),
	v1("vllm:request_max_num_generation_tokens", Histogram, fileLoggers, "0.8.0", "", labelsV1, nil).tokens(),
	v1("vllm:request_params_n", Histogram, fileLoggers, "0.8.0", "", labelsV1, BucketsParamsN),
	v1("vllm:request_params_max_tokens", Histogram, fileLoggers, "0.8.0", "", labelsV1, nil).tokens(),
	v1("vllm:time_to_first_token_seconds", Histogram, fileLoggers, "0.7.1", "", labelsV1, BucketsTTFT),
	v1("vllm:time_per_output_token_seconds", Histogram, fileLoggers, "0.7.1", "0.14.1", labelsV1, BucketsITL).deprecated("0.11.0", "0.12.0"),
	v1("vllm:inter_token_latency_seconds", Histogram, fileLoggers, "0.10.2", "", labelsV1, BucketsITL),
	v1("vllm:request_time_per_output_token_seconds", Histogram, fileLoggers, "0.11.0", "", labelsV1, BucketsITL),
	v1("vllm:e2e_request_latency_seconds", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsRequestLatency),
	v1("vllm:request_queue_time_seconds", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsRequestLatency),
	v1("vllm:request_inference_time_seconds", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsRequestLatency),
	v1("vllm:request_prefill_time_seconds", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsRequestLatency),
	v1("vllm:request_decode_time_seconds", Histogram, fileLoggers, "0.7.3", "", labelsV1, BucketsRequestLatency),
	v1("vllm:request_prefill_kv_computed_tokens", Histogram, fileLoggers, "0.13.0", "", labelsV1, nil).tokens(),
	v1("vllm:kv_block_lifetime_seconds", Histogram, fileLoggers, "0.12.0", "", labelsV1, BucketsKVResidency).when(WithKVCacheMetrics),
	v1("vllm:kv_block_idle_before_evict_seconds", Histogram, fileLoggers, "0.12.0", "", labelsV1, BucketsKVResidency).when(WithKVCacheMetrics),
	v1("vllm:kv_block_reuse_gap_seconds", Histogram, fileLoggers, "0.12.0", "", labelsV1, BucketsKVResidency).when(WithKVCacheMetrics),
	v1("vllm:lora_requests_info", Gauge, fileLoggers, "0.8.0", "", []string{"max_lora", "waiting_lora_adapters", "running_lora_adapters"}, nil).when(WithLoRA),
	v1("vllm:cache_config_info", Gauge, fileLoggers, "0.8.0", "", cacheConfig010, nil).labelsSince(
		LabelVariant{"0.13.0", cacheConfig013}, LabelVariant{"0.16.0", cacheConfig016},
		LabelVariant{"0.20.1", cacheConfig020}, LabelVariant{"0.24.0", cacheConfig024},
		LabelVariant{"0.25.0", cacheConfig025}, LabelVariant{Main, cacheConfigMain}),

	// Speculative decoding (SpecDecodingProm), registered only with a speculative_config.
	v1("vllm:spec_decode_num_drafts", Counter, fileSpec, "0.8.5", "", labelsV1, nil).when(WithSpecDecode),
	v1("vllm:spec_decode_num_draft_tokens", Counter, fileSpec, "0.8.3", "", labelsV1, nil).when(WithSpecDecode),
	v1("vllm:spec_decode_num_accepted_tokens", Counter, fileSpec, "0.8.3", "", labelsV1, nil).when(WithSpecDecode),
	v1("vllm:spec_decode_num_accepted_tokens_per_pos", Counter, fileSpec, "0.8.5", "", v1Labels("position"), nil).when(WithSpecDecode),

	// MFU estimates (PerfMetricsProm): registered on every server, counting only with --enable-mfu-metrics.
	v1("vllm:estimated_flops_per_gpu", Counter, filePerf, "0.17.0", "", labelsV1, nil),
	v1("vllm:estimated_read_bytes_per_gpu", Counter, filePerf, "0.17.0", "", labelsV1, nil),
	v1("vllm:estimated_write_bytes_per_gpu", Counter, filePerf, "0.17.0", "", labelsV1, nil),

	// NIXL connector (NixlPromMetrics), on both sides of a disaggregated pair.
	v1("vllm:nixl_xfer_time_seconds", Histogram, fileNixl, "0.11.1", "", labelsV1, BucketsNixlXfer).when(WithNIXL),
	v1("vllm:nixl_post_time_seconds", Histogram, fileNixl, "0.11.1", "", labelsV1, BucketsNixlPost).when(WithNIXL),
	v1("vllm:nixl_bytes_transferred", Histogram, fileNixl, "0.11.1", "", labelsV1, BucketsNixlBytes).when(WithNIXL),
	v1("vllm:nixl_num_descriptors", Histogram, fileNixl, "0.11.1", "", labelsV1, BucketsNixlDescriptors).when(WithNIXL),
	v1("vllm:nixl_num_failed_transfers", Counter, fileNixl, "0.11.1", "", labelsV1, nil).when(WithNIXL),
	v1("vllm:nixl_num_failed_notifications", Counter, fileNixl, "0.11.1", "", labelsV1, nil).when(WithNIXL),
	v1("vllm:nixl_num_kv_expired_reqs", Counter, fileNixl, "0.15.0", "", labelsV1, nil).when(WithNIXL),

	// Offloading connector (OffloadPromMetrics): 0.16–0.23 have only the transfer_type names; from 0.24.0 the flat
	// ones beside them, which the CPU spec mirrors into the transfer_type ones, marked deprecated in the source.
	v1("vllm:kv_offload_total_bytes", Counter, fileOffload, "0.16.0", "", v1Labels("transfer_type"), nil).deprecated("0.24.0", "").when(WithOffload),
	v1("vllm:kv_offload_total_time", Counter, fileOffload, "0.16.0", "", v1Labels("transfer_type"), nil).deprecated("0.24.0", "").when(WithOffload),
	v1("vllm:kv_offload_size", Histogram, fileOffload, "0.16.0", "", v1Labels("transfer_type"), BucketsOffloadSize).deprecated("0.24.0", "").when(WithOffload),
	v1("vllm:kv_offload_load_bytes", Counter, fileOffload, "0.24.0", "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_load_time", Counter, fileOffload, "0.24.0", "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_load_size", Histogram, fileOffload, "0.24.0", "", labelsV1, BucketsOffloadSize).when(WithOffload),
	v1("vllm:kv_offload_store_bytes", Counter, fileOffload, "0.24.0", "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_store_time", Counter, fileOffload, "0.24.0", "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_store_size", Histogram, fileOffload, "0.24.0", "", labelsV1, BucketsOffloadSize).when(WithOffload),
	v1("vllm:kv_offload_lookup_sync_delay_seconds", Histogram, fileOffload, Main, "", labelsV1, BucketsOffloadLookupSync).when(WithOffload),
	v1("vllm:kv_offload_lookup_async_delay_seconds", Histogram, fileOffload, Main, "", labelsV1, BucketsOffloadLookupAsync).when(WithOffload),
	v1("vllm:kv_offload_allocation_failure", Counter, fileOffload, Main, "", labelsV1, nil).when(WithOffload),
	// Upstream's value (CPUOffloadingManager.get_stats) is the share of CPU blocks neither free nor evictable: pinned by
	// transfers in flight, not the share filled.
	v1("vllm:kv_offload_cpu_cache_usage_perc", Gauge, fileCPUOffload, "0.24.0", "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_cpu_cache_write_usage_perc", Gauge, fileCPUOffload, Main, "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_cpu_cache_read_usage_perc", Gauge, fileCPUOffload, Main, "", labelsV1, nil).when(WithOffload),
	v1("vllm:kv_offload_cpu_allocation_size", Histogram, fileCPUOffload, Main, "", labelsV1, BucketsOffloadAllocation).when(WithOffload),
	v1("vllm:kv_offload_stores_skipped", Counter, fileCPUOffload, "0.24.0", "", labelsV1, nil).when(WithStoreThreshold),
}

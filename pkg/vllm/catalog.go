// Package vllm knows every metric name vLLM (V0, V1 and the deprecated names), vLLM-Ascend's profiler and
// NVIDIA Dynamo have used, which one carries which operator signal, and how to tell the flavors apart, so the rest
// of the plugin asks for "TTFT" or "KV-cache usage" and never for a metric name that a rename will break.
package vllm

import "strings"

// Up is the series every scrape target has: 1 after a successful scrape, 0 after a failed one. Prometheus records
// it per target and direct mode per endpoint, so "endpoint down" reads the same in both modes.
const Up = "up"

// Kind is how a signal's samples must be read.
type Kind uint8

const (
	// Gauge samples are read as they are.
	Gauge Kind = iota
	// Counter samples (exposed with _total) are read as rates or increases.
	Counter
	// Histogram samples are <name>_bucket/_sum/_count and are read as quantiles or means over a window.
	Histogram
)

// Signal is one thing operators measure, under every name it has had.
type Signal struct {
	ID   string
	Kind Kind
	// Names are candidate metric names, the preferred (newest) first. Counters are listed with their exposed
	// _total suffix; histograms by their base name.
	Names []string
	// Unit is the Grafana unit of the signal's values as exposed.
	Unit string
}

// Name returns the first candidate name for which has is true: the name this endpoint actually exposes.
func (s Signal) Name(has func(name string) bool) (string, bool) {
	for _, n := range s.Names {
		probe := n
		if s.Kind == Histogram {
			probe = BucketName(n)
		}
		if has(probe) {
			return n, true
		}
	}
	return "", false
}

// histogramSamples maps each catalog histogram's names and a suffix of its samples to the samples' name, built
// once: every query probes every endpoint's names for them and selects by them.
var histogramSamples = func() map[[2]string]string {
	out := map[[2]string]string{}
	for _, s := range Signals {
		if s.Kind == Histogram {
			for _, n := range s.Names {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					out[[2]string{n, suffix}] = n + suffix
				}
			}
		}
	}
	return out
}()

// SampleName is name with a sample suffix such as "_bucket", made once for the catalog's histograms.
func SampleName(name, suffix string) string {
	if suffix == "" {
		return name
	}
	if n, ok := histogramSamples[[2]string{name, suffix}]; ok {
		return n
	}
	return name + suffix
}

// BucketName is the name of histogram name's bucket series.
func BucketName(name string) string { return SampleName(name, "_bucket") }

// RayPrefixes are the prefixes Ray Serve's metrics agent gives vLLM's names (ray-project/ray#60385): ray_vllm_ with
// the colon sanitized, and ray_vllm: before that. Ray labels each replica's series with ReplicaId.
var RayPrefixes = []string{"ray_vllm_", "ray_vllm:"}

// withRay lists a signal's names with each vllm: name's Ray Serve names after them, preferred last: an endpoint
// exposes one or the other, and vLLM's own wins where both are.
func withRay(names ...string) []string {
	out := append([]string(nil), names...)
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, VLLMPrefix); ok {
			for _, p := range RayPrefixes {
				out = append(out, p+rest)
			}
		}
	}
	return out
}

// Gauges.
var (
	// KVUsage is the KV-cache pool usage as a 0–1 fraction, renamed from gpu_cache_usage_perc (the releases of
	// each name are in the provenance table, VLLMFamilies).
	KVUsage = Signal{ID: "kv_usage", Kind: Gauge, Names: withRay("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), Unit: "percent"}
	// DynamoKVUsage is Dynamo's own KV usage gauge (0–1); the kvstats_ infix was dropped in later releases.
	DynamoKVUsage = Signal{ID: "dynamo_kv_usage", Kind: Gauge, Names: []string{"dynamo_component_gpu_cache_usage_percent", "dynamo_component_kvstats_gpu_cache_usage_percent"}, Unit: "percent"}
	// DynamoTotalBlocks is Dynamo's KV pool size in blocks.
	DynamoTotalBlocks = Signal{ID: "dynamo_total_blocks", Kind: Gauge, Names: []string{"dynamo_component_total_blocks", "dynamo_component_kvstats_total_blocks"}, Unit: "short"}
	// DynamoActiveBlocks is the number of KV blocks older Dynamo reports in use. Current Dynamo's kvstats are
	// total_blocks and gpu_cache_usage_percent only (prometheus_names.rs; ai-dynamo/dynamo#7235): its active blocks
	// are the frontend's per-worker DynamoWorkerDecodeBlocks.
	DynamoActiveBlocks = Signal{ID: "dynamo_active_blocks", Kind: Gauge, Names: []string{"dynamo_component_kvstats_active_blocks"}, Unit: "short"}
	// AscendTotalBlocks is the KV pool size of one Ascend DP domain.
	AscendTotalBlocks = Signal{ID: "ascend_total_blocks", Kind: Gauge, Names: []string{"vllm_profiling_total_kvcache_blocks"}, Unit: "short"}
	// AscendFreeBlocks is the number of idle KV blocks of one Ascend DP domain.
	AscendFreeBlocks = Signal{ID: "ascend_free_blocks", Kind: Gauge, Names: []string{"vllm_profiling_free_kvcache_blocks"}, Unit: "short"}
	// AscendAllocatedBlocks is the number of allocated KV blocks of one Ascend DP domain.
	AscendAllocatedBlocks = Signal{ID: "ascend_allocated_blocks", Kind: Gauge, Names: []string{"vllm_profiling_allocated_kvcache_blocks"}, Unit: "short"}
	// AscendNumSpecTokens is the number of draft tokens the Ascend profiler reports.
	AscendNumSpecTokens = Signal{ID: "ascend_num_spec_tokens", Kind: Gauge, Names: []string{"vllm_profiling_num_spec_tokens"}, Unit: "short"}

	// Running is the number of requests in the running batch.
	Running = Signal{ID: "running", Kind: Gauge, Names: withRay("vllm:num_requests_running"), Unit: "short"}
	// Waiting is the number of requests queued for prefill.
	Waiting = Signal{ID: "waiting", Kind: Gauge, Names: withRay("vllm:num_requests_waiting"), Unit: "short"}
	// WaitingByReason splits Waiting by its reason label (capacity, deferred); newest vLLM only.
	WaitingByReason = Signal{ID: "waiting_by_reason", Kind: Gauge, Names: withRay("vllm:num_requests_waiting_by_reason"), Unit: "short"}
	// Swapped is V0's number of requests swapped to CPU.
	Swapped = Signal{ID: "swapped", Kind: Gauge, Names: withRay("vllm:num_requests_swapped"), Unit: "short"}

	// V0AcceptanceRate is V0's spec-decode draft acceptance rate gauge, the only spec signal V0 has per window.
	V0AcceptanceRate = Signal{ID: "v0_acceptance_rate", Kind: Gauge, Names: withRay("vllm:spec_decode_draft_acceptance_rate"), Unit: "percentunit"}
	// V0Efficiency is V0's spec-decode system efficiency gauge.
	V0Efficiency = Signal{ID: "v0_efficiency", Kind: Gauge, Names: withRay("vllm:spec_decode_efficiency"), Unit: "percentunit"}
	// V0PrefixHitRate is V0's GPU prefix-cache block hit rate gauge (0–1).
	V0PrefixHitRate = Signal{ID: "v0_prefix_hit_rate", Kind: Gauge, Names: withRay("vllm:gpu_prefix_cache_hit_rate"), Unit: "percentunit"}
	// OffloadCPUUsage is the share of the offloading connector's CPU blocks neither free nor evictable (0–1): upstream's
	// CPUOffloadingManager.get_stats counts allocated blocks less free and evictable ones, the blocks transfers hold.
	OffloadCPUUsage = Signal{ID: "offload_cpu_usage", Kind: Gauge, Names: withRay("vllm:kv_offload_cpu_cache_usage_perc"), Unit: "percent"}
	// LMCacheMPL1Memory is the bytes of multi-process LMCache's L1 in use.
	LMCacheMPL1Memory = Signal{ID: "lmcache_mp_l1_memory", Kind: Gauge, Names: []string{"lmcache_mp_l1_memory_usage_bytes"}, Unit: "bytes"}
	// EngineSleepState is vLLM's sleep mode per engine: the series of the engine's sleep_state (awake,
	// weights_offloaded for level 1, discard_all for level 2) is 1, the others 0.
	EngineSleepState = Signal{ID: "engine_sleep_state", Kind: Gauge, Names: withRay("vllm:engine_sleep_state")}
	// EngineHealthy is 1 while an engine is healthy under --enable-fault-tolerance, 0 when it is unhealthy or dead;
	// the API server reports it labelled by engine only, without model_name.
	EngineHealthy = Signal{ID: "engine_healthy", Kind: Gauge, Names: withRay("vllm:engine_healthy")}
	// SleepOperationsInFlight is the sleep-mode operations (sleep, wake, release_kv_cache_memory; label operation)
	// the API server is awaiting; neither it nor SleepOperationDuration names a model or an engine. The rl_ names
	// come from the reinforcement-learning weight-sync endpoints' variant of the same metrics.
	SleepOperationsInFlight = Signal{ID: "sleep_operations_in_flight", Kind: Gauge, Names: withRay("vllm:sleep_mode_operations_in_flight", "vllm:rl_sleep_mode_operations_in_flight"), Unit: "short"}
	// DynamoComponentInflight is the requests each Dynamo component's work handler is processing (label
	// dynamo_component: a disaggregated deployment's prefill and decode workers apart); DynamoComponentRequests and
	// DynamoComponentErrors count the requests it handled and its errors by error_type (deserialization,
	// invalid_message, response_stream, generate, publish_response, publish_final); DynamoComponentDuration times them
	// (lib/runtime/src/metrics/prometheus_names.rs, work_handler).
	DynamoComponentInflight = Signal{ID: "dynamo_component_inflight", Kind: Gauge, Names: []string{"dynamo_component_inflight_requests"}, Unit: "short"}
	// DynamoWorkerLastTTFT and DynamoWorkerLastITL are the last TTFT and inter-token latency Dynamo's frontend observed
	// on each worker and DP rank (labels worker_id, dp_rank, worker_type).
	DynamoWorkerLastTTFT = Signal{ID: "dynamo_worker_last_ttft", Kind: Gauge, Names: []string{"dynamo_frontend_worker_last_time_to_first_token_seconds"}, Unit: "s"}
	DynamoWorkerLastITL  = Signal{ID: "dynamo_worker_last_itl", Kind: Gauge, Names: []string{"dynamo_frontend_worker_last_inter_token_latency_seconds"}, Unit: "s"}
	// DynamoInflight is the number of requests Dynamo's frontend has sent to engines and not finished;
	// DynamoQueued the requests in its HTTP queue before their first response; DynamoDisconnected the clients
	// that went away before their answer (lib/runtime/src/metrics/prometheus_names.rs, frontend_service).
	DynamoInflight     = Signal{ID: "dynamo_inflight", Kind: Gauge, Names: []string{"dynamo_frontend_inflight_requests"}, Unit: "short"}
	DynamoQueued       = Signal{ID: "dynamo_queued", Kind: Gauge, Names: []string{"dynamo_frontend_queued_requests"}, Unit: "short"}
	DynamoDisconnected = Signal{ID: "dynamo_disconnected", Kind: Gauge, Names: []string{"dynamo_frontend_disconnected_clients"}, Unit: "short"}
	// DynamoRouterQueue is the requests Dynamo's KV router holds in its scheduler queue before any worker takes
	// them (only with --router-queue-threshold), per worker_type.
	DynamoRouterQueue = Signal{ID: "dynamo_router_queue", Kind: Gauge, Names: []string{"dynamo_frontend_router_queue_pending_requests"}, Unit: "short"}
	// DynamoWorkerDecodeBlocks and DynamoWorkerPrefillTokens are the KV router's own books on each worker and DP
	// rank it routes to (labels worker_id, dp_rank, worker_type; no model): KV blocks its requests hold, and
	// prompt tokens it has sent and not yet seen prefilled. They replace dynamo_component_kvstats_active_blocks,
	// which current Dynamo no longer emits.
	DynamoWorkerDecodeBlocks  = Signal{ID: "dynamo_worker_decode_blocks", Kind: Gauge, Names: []string{"dynamo_frontend_worker_active_decode_blocks"}, Unit: "short"}
	DynamoWorkerPrefillTokens = Signal{ID: "dynamo_worker_prefill_tokens", Kind: Gauge, Names: []string{"dynamo_frontend_worker_active_prefill_tokens"}, Unit: "short"}
	DynamoComponentRequests   = Signal{ID: "dynamo_component_requests", Kind: Counter, Names: []string{"dynamo_component_requests_total"}, Unit: "short"}
	DynamoComponentErrors     = Signal{ID: "dynamo_component_errors", Kind: Counter, Names: []string{"dynamo_component_errors_total"}, Unit: "short"}
	// DynamoMigrations counts requests Dynamo moved to another worker after theirs went away, by migration_type
	// (new_request before the stream started, ongoing_request during it).
	DynamoMigrations = Signal{ID: "dynamo_migrations", Kind: Counter, Names: []string{"dynamo_frontend_model_migration_total"}, Unit: "short"}
	// LoRAInfo is vllm:lora_requests_info: one series per set of adapters, labels max_lora, running_lora_adapters
	// and waiting_lora_adapters (comma-joined adapter names), its value the unix time the set became current; old
	// sets stay exposed. No model_name or engine label.
	LoRAInfo = Signal{ID: "lora_info", Kind: Gauge, Names: withRay("vllm:lora_requests_info")}
	// ProcessRSS and ProcessFDs are the API server process's resident memory and open file descriptors, and
	// ProcessStart its start time (prometheus_client's process collector, single-process servers only).
	ProcessRSS   = Signal{ID: "process_rss", Kind: Gauge, Names: []string{"process_resident_memory_bytes"}, Unit: "bytes"}
	ProcessFDs   = Signal{ID: "process_fds", Kind: Gauge, Names: []string{"process_open_fds"}, Unit: "short"}
	ProcessStart = Signal{ID: "process_start", Kind: Gauge, Names: []string{"process_start_time_seconds"}, Unit: "dateTimeAsIso"}
	// CacheConfig is the info gauge whose labels carry block_size and num_gpu_blocks.
	CacheConfig = Signal{ID: "cache_config", Kind: Gauge, Names: withRay("vllm:cache_config_info")}
)

// Counters.
var (
	// PromptTokens counts prefill tokens.
	PromptTokens = Signal{ID: "prompt_tokens", Kind: Counter, Names: withRay("vllm:prompt_tokens_total"), Unit: "short"}
	// GenerationTokens counts generated tokens.
	GenerationTokens = Signal{ID: "generation_tokens", Kind: Counter, Names: withRay("vllm:generation_tokens_total", "dynamo_frontend_output_tokens_total"), Unit: "short"}
	// RequestSuccess counts finished requests by finished_reason.
	RequestSuccess = Signal{ID: "requests", Kind: Counter, Names: withRay("vllm:request_success_total"), Unit: "short"}
	// DynamoRequests counts the requests Dynamo's frontend handled, by status (success, error) and, for errors,
	// error_type (validation, not_found, overload, cancelled, internal, not_implemented); it has no finished_reason.
	DynamoRequests = Signal{ID: "dynamo_requests", Kind: Counter, Names: []string{"dynamo_frontend_requests_total"}, Unit: "short"}
	// Preemptions counts preemptions.
	Preemptions = Signal{ID: "preemptions", Kind: Counter, Names: withRay("vllm:num_preemptions_total"), Unit: "short"}
	// PrefixHits counts prefix-cache hits in tokens (V0's counted blocks); renamed from gpu_prefix_cache_hits.
	PrefixHits = Signal{ID: "prefix_hits", Kind: Counter, Names: withRay("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")}
	// PrefixQueries counts prefix-cache lookups in tokens.
	PrefixQueries = Signal{ID: "prefix_queries", Kind: Counter, Names: withRay("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")}
	// PromptTokensBySource counts prompt tokens by where their KV came from (source: local_compute,
	// local_cache_hit, external_kv_transfer) (vllm-project/vllm#27569).
	PromptTokensBySource = Signal{ID: "prompt_tokens_by_source", Kind: Counter, Names: withRay("vllm:prompt_tokens_by_source_total"), Unit: "short"}
	// PromptTokensCached counts prompt tokens whose KV came from a cache, local or external.
	PromptTokensCached = Signal{ID: "prompt_tokens_cached", Kind: Counter, Names: withRay("vllm:prompt_tokens_cached_total"), Unit: "short"}
	// PromptTokensCachedBySource splits PromptTokensCached by the tier that held the KV (source: device, host, disk,
	// p2p, external_unspecified); newest vLLM only.
	PromptTokensCachedBySource = Signal{ID: "prompt_tokens_cached_by_source", Kind: Counter, Names: withRay("vllm:prompt_tokens_cached_by_source_total"), Unit: "short"}
	// PromptTokensRecomputed counts cached prompt tokens computed again for the forward pass; later releases dropped it.
	PromptTokensRecomputed = Signal{ID: "prompt_tokens_recomputed", Kind: Counter, Names: withRay("vllm:prompt_tokens_recomputed_total"), Unit: "short"}
	// NixlFailedTransfers counts NIXL KV transfers that failed; the decode instance then computes the prompt itself.
	NixlFailedTransfers = Signal{ID: "nixl_failed_transfers", Kind: Counter, Names: withRay("vllm:nixl_num_failed_transfers_total"), Unit: "short"}
	// NixlFailedNotifications counts NIXL completion notifications that could not be sent to the KV's holder;
	// NixlExpiredRequests counts requests whose held KV expired before a decode instance read it, freed unread.
	NixlFailedNotifications = Signal{ID: "nixl_failed_notifications", Kind: Counter, Names: withRay("vllm:nixl_num_failed_notifications_total"), Unit: "short"}
	NixlExpiredRequests     = Signal{ID: "nixl_expired_requests", Kind: Counter, Names: withRay("vllm:nixl_num_kv_expired_reqs_total"), Unit: "short"}
	// OffloadLoadBytes and OffloadStoreBytes count the bytes vLLM's offloading connector moved from offload storage
	// (CPU memory, disk) to GPU and back; OffloadLoadTime and OffloadStoreTime the seconds those copies took. The
	// flat names come first; the releases before them have one pair by transfer_type (OffloadLoad and OffloadStore
	// select the direction), which the newest keep as deprecated, so an endpoint is read under one name only.
	OffloadLoadBytes  = Signal{ID: "offload_load_bytes", Kind: Counter, Names: withRay("vllm:kv_offload_load_bytes_total", "vllm:kv_offload_total_bytes_total"), Unit: "bytes"}
	OffloadStoreBytes = Signal{ID: "offload_store_bytes", Kind: Counter, Names: withRay("vllm:kv_offload_store_bytes_total", "vllm:kv_offload_total_bytes_total"), Unit: "bytes"}
	OffloadLoadTime   = Signal{ID: "offload_load_time", Kind: Counter, Names: withRay("vllm:kv_offload_load_time_total", "vllm:kv_offload_total_time_total"), Unit: "s"}
	OffloadStoreTime  = Signal{ID: "offload_store_time", Kind: Counter, Names: withRay("vllm:kv_offload_store_time_total", "vllm:kv_offload_total_time_total"), Unit: "s"}
	// OffloadAllocationFailures counts offload stores that found no room in offload storage.
	OffloadAllocationFailures = Signal{ID: "offload_allocation_failures", Kind: Counter, Names: withRay("vllm:kv_offload_allocation_failure_total"), Unit: "short"}
	// LMCacheRequestedTokens and LMCacheHitTokens count the tokens the LMCache connector was asked for and found;
	// LMCacheRetrieves and LMCacheStores its retrieve and store requests.
	// Multi-process LMCache counts the same tokens as lookups (lmcache_mp_lookup_*).
	LMCacheRequestedTokens = Signal{ID: "lmcache_requested_tokens", Kind: Counter, Names: []string{"lmcache:num_requested_tokens_total", "lmcache_mp_lookup_requested_tokens_total"}, Unit: "short"}
	LMCacheHitTokens       = Signal{ID: "lmcache_hit_tokens", Kind: Counter, Names: []string{"lmcache:num_hit_tokens_total", "lmcache_mp_lookup_hit_tokens_total"}, Unit: "short"}
	LMCacheRetrieves       = Signal{ID: "lmcache_retrieves", Kind: Counter, Names: []string{"lmcache:num_retrieve_requests_total"}, Unit: "short"}
	LMCacheStores          = Signal{ID: "lmcache_stores", Kind: Counter, Names: []string{"lmcache:num_store_requests_total"}, Unit: "short"}
	// LMCacheMPL1HitTokens counts the hits multi-process LMCache served from L1 (CPU memory); LMCacheMPRetrieves,
	// LMCacheMPDeferredRetrieves its submitted and deferred retrievals.
	LMCacheMPL1HitTokens       = Signal{ID: "lmcache_mp_l1_hit_tokens", Kind: Counter, Names: []string{"lmcache_mp_lookup_hit_l1_tokens_total"}, Unit: "short"}
	LMCacheMPRetrieves         = Signal{ID: "lmcache_mp_retrieves", Kind: Counter, Names: []string{"lmcache_mp_num_submitted_retrieves_total"}, Unit: "short"}
	LMCacheMPDeferredRetrieves = Signal{ID: "lmcache_mp_deferred_retrieves", Kind: Counter, Names: []string{"lmcache_mp_num_deferred_retrieves_total"}, Unit: "short"}
	// HTTPRequests counts the API server's HTTP requests by handler, method and status class (2xx, 4xx, 5xx), as
	// prometheus-fastapi-instrumentator counts them; ProcessCPU is the API server process's CPU seconds.
	HTTPRequests = Signal{ID: "http_requests", Kind: Counter, Names: []string{"http_requests_total"}, Unit: "short"}
	ProcessCPU   = Signal{ID: "process_cpu", Kind: Counter, Names: []string{"process_cpu_seconds_total"}, Unit: "s"}
	// CorruptedRequests counts requests with NaNs in their logits; vLLM counts them only with
	// VLLM_COMPUTE_NANS_IN_LOGITS=1.
	CorruptedRequests = Signal{ID: "corrupted_requests", Kind: Counter, Names: withRay("vllm:corrupted_requests_total"), Unit: "short"}
	// EstimatedFlops, EstimatedReadBytes and EstimatedWriteBytes are vLLM's per-GPU estimates of the work done and
	// the memory traffic (--enable-mfu-metrics; exposed at 0 when off).
	EstimatedFlops      = Signal{ID: "estimated_flops", Kind: Counter, Names: withRay("vllm:estimated_flops_per_gpu_total"), Unit: "flops"}
	EstimatedReadBytes  = Signal{ID: "estimated_read_bytes", Kind: Counter, Names: withRay("vllm:estimated_read_bytes_per_gpu_total"), Unit: "bytes"}
	EstimatedWriteBytes = Signal{ID: "estimated_write_bytes", Kind: Counter, Names: withRay("vllm:estimated_write_bytes_per_gpu_total"), Unit: "bytes"}
	// ExternalPrefixHits counts KV-connector (cross-instance) cache hits.
	ExternalPrefixHits = Signal{ID: "external_prefix_hits", Kind: Counter, Names: withRay("vllm:external_prefix_cache_hits_total")}
	// ExternalPrefixQueries counts KV-connector cache lookups.
	ExternalPrefixQueries = Signal{ID: "external_prefix_queries", Kind: Counter, Names: withRay("vllm:external_prefix_cache_queries_total")}
	// MMCacheHits counts multi-modal cache hits.
	MMCacheHits = Signal{ID: "mm_hits", Kind: Counter, Names: withRay("vllm:mm_cache_hits_total")}
	// MMCacheQueries counts multi-modal cache lookups.
	MMCacheQueries = Signal{ID: "mm_queries", Kind: Counter, Names: withRay("vllm:mm_cache_queries_total")}
	// SpecDrafts counts speculative drafts (V1).
	SpecDrafts = Signal{ID: "spec_drafts", Kind: Counter, Names: withRay("vllm:spec_decode_num_drafts_total")}
	// SpecDraftTokens counts draft tokens proposed.
	SpecDraftTokens = Signal{ID: "spec_draft_tokens", Kind: Counter, Names: withRay("vllm:spec_decode_num_draft_tokens_total")}
	// SpecAcceptedTokens counts draft tokens accepted.
	SpecAcceptedTokens = Signal{ID: "spec_accepted_tokens", Kind: Counter, Names: withRay("vllm:spec_decode_num_accepted_tokens_total")}
	// SpecAcceptedPerPos counts accepted tokens per draft position (label position).
	SpecAcceptedPerPos = Signal{ID: "spec_accepted_per_pos", Kind: Counter, Names: withRay("vllm:spec_decode_num_accepted_tokens_per_pos_total")}
	// AscendInputTokens counts prompt tokens as the Ascend profiler sees them.
	AscendInputTokens = Signal{ID: "ascend_input", Kind: Counter, Names: []string{"vllm_profiling_input_total"}, Unit: "short"}
	// AscendOutputTokens counts generated tokens as the Ascend profiler sees them.
	AscendOutputTokens = Signal{ID: "ascend_output", Kind: Counter, Names: []string{"vllm_profiling_output_total"}, Unit: "short"}
)

// Histograms.
var (
	// TTFT is time to first token.
	TTFT = Signal{ID: "ttft", Kind: Histogram, Names: withRay("vllm:time_to_first_token_seconds", "dynamo_frontend_time_to_first_token_seconds"), Unit: "s"}
	// ITL is inter-token latency (TPOT), renamed from time_per_output_token_seconds.
	ITL = Signal{ID: "itl", Kind: Histogram, Names: withRay("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds", "dynamo_frontend_inter_token_latency_seconds"), Unit: "s"}
	// RequestTPOT is each request's mean time per output token.
	RequestTPOT = Signal{ID: "request_tpot", Kind: Histogram, Names: withRay("vllm:request_time_per_output_token_seconds"), Unit: "s"}
	// E2E is end-to-end request latency.
	E2E = Signal{ID: "e2e", Kind: Histogram, Names: withRay("vllm:e2e_request_latency_seconds", "dynamo_frontend_request_duration_seconds"), Unit: "s"}
	// QueueTime is time spent waiting; V0 also had time_in_queue_requests.
	QueueTime = Signal{ID: "queue", Kind: Histogram, Names: withRay("vllm:request_queue_time_seconds", "vllm:time_in_queue_requests"), Unit: "s"}
	// PrefillTime is time spent in prefill.
	PrefillTime = Signal{ID: "prefill", Kind: Histogram, Names: withRay("vllm:request_prefill_time_seconds"), Unit: "s"}
	// DecodeTime is time spent in decode.
	DecodeTime = Signal{ID: "decode", Kind: Histogram, Names: withRay("vllm:request_decode_time_seconds"), Unit: "s"}
	// InferenceTime is time spent running.
	InferenceTime = Signal{ID: "inference", Kind: Histogram, Names: withRay("vllm:request_inference_time_seconds"), Unit: "s"}
	// PromptTokensHist is prompt length per request.
	PromptTokensHist = Signal{ID: "request_prompt_tokens", Kind: Histogram, Names: withRay("vllm:request_prompt_tokens", "dynamo_frontend_input_sequence_tokens"), Unit: "short"}
	// GenerationTokensHist is generated length per request.
	GenerationTokensHist = Signal{ID: "request_generation_tokens", Kind: Histogram, Names: withRay("vllm:request_generation_tokens", "dynamo_frontend_output_sequence_tokens"), Unit: "short"}
	// IterationTokens is the tokens each engine step processed (prompt and generated): how full the batches run.
	IterationTokens = Signal{ID: "iteration_tokens", Kind: Histogram, Names: withRay("vllm:iteration_tokens_total"), Unit: "short"}
	// ParamsMaxTokens, ParamsN and MaxGenerationTokens are each finished request's max_tokens and n parameters, and
	// the most tokens it could have generated (max_tokens × n, or what the context left).
	ParamsMaxTokens     = Signal{ID: "params_max_tokens", Kind: Histogram, Names: withRay("vllm:request_params_max_tokens"), Unit: "short"}
	ParamsN             = Signal{ID: "params_n", Kind: Histogram, Names: withRay("vllm:request_params_n"), Unit: "short"}
	MaxGenerationTokens = Signal{ID: "max_generation_tokens", Kind: Histogram, Names: withRay("vllm:request_max_num_generation_tokens"), Unit: "short"}
	// AscendFineTTFT is the Ascend profiler's fine-grained TTFT.
	AscendFineTTFT = Signal{ID: "ascend_fine_ttft", Kind: Histogram, Names: []string{"vllm_profiling_fine_grained_ttft"}, Unit: "s"}
	// AscendFineTPOT is the Ascend profiler's fine-grained TPOT.
	AscendFineTPOT = Signal{ID: "ascend_fine_tpot", Kind: Histogram, Names: []string{"vllm_profiling_fine_grained_tpot"}, Unit: "s"}
	// AscendSecondTokenLatency is the latency of the second token.
	AscendSecondTokenLatency = Signal{ID: "ascend_second_token", Kind: Histogram, Names: []string{"vllm_profiling_second_token_latency"}, Unit: "s"}
	// AscendBatchSize is the number of requests executing per scheduler step.
	AscendBatchSize = Signal{ID: "ascend_batch_size", Kind: Histogram, Names: []string{"vllm_profiling_batch_size"}, Unit: "short"}
	// AscendWaitingBatchSize is the number of requests waiting to be scheduled per step.
	AscendWaitingBatchSize = Signal{ID: "ascend_waiting_batch_size", Kind: Histogram, Names: []string{"vllm_profiling_waiting_batch_size"}, Unit: "short"}
	// NixlXferTime is the duration of one NIXL KV transfer, recorded by the instance that pulls the KV (the decode
	// side of disaggregated prefill/decode).
	NixlXferTime = Signal{ID: "nixl_xfer_time", Kind: Histogram, Names: withRay("vllm:nixl_xfer_time_seconds"), Unit: "s"}
	// NixlBytes is the size of one NIXL KV transfer.
	NixlBytes = Signal{ID: "nixl_bytes", Kind: Histogram, Names: withRay("vllm:nixl_bytes_transferred"), Unit: "bytes"}
	// NixlDescriptors is the number of descriptors of one NIXL transfer, recorded by the instance that pulls the KV.
	NixlDescriptors = Signal{ID: "nixl_descriptors", Kind: Histogram, Names: withRay("vllm:nixl_num_descriptors"), Unit: "short"}
	// NixlPostTime is the time to post one NIXL transfer request, before the transfer itself.
	NixlPostTime = Signal{ID: "nixl_post_time", Kind: Histogram, Names: withRay("vllm:nixl_post_time_seconds"), Unit: "s"}
	// PrefillKVComputed is the number of prompt tokens each request's prefill computed, its cached tokens left out
	// (vllm-project/vllm#30189).
	PrefillKVComputed = Signal{ID: "prefill_kv_computed", Kind: Histogram, Names: withRay("vllm:request_prefill_kv_computed_tokens"), Unit: "short"}
	// KVBlockLifetime, KVBlockIdleBeforeEvict and KVBlockReuseGap are KV block residency under --kv-cache-metrics
	// (sampled blocks; vllm-project/vllm#27793): allocation to eviction, idle time before eviction, and the time
	// between two uses of a cached block.
	KVBlockLifetime        = Signal{ID: "kv_block_lifetime", Kind: Histogram, Names: withRay("vllm:kv_block_lifetime_seconds"), Unit: "s"}
	KVBlockIdleBeforeEvict = Signal{ID: "kv_block_idle_before_evict", Kind: Histogram, Names: withRay("vllm:kv_block_idle_before_evict_seconds"), Unit: "s"}
	KVBlockReuseGap        = Signal{ID: "kv_block_reuse_gap", Kind: Histogram, Names: withRay("vllm:kv_block_reuse_gap_seconds"), Unit: "s"}
	// OffloadLookupDelay is the time of one offload lookup call.
	OffloadLookupDelay = Signal{ID: "offload_lookup_delay", Kind: Histogram, Names: withRay("vllm:kv_offload_lookup_sync_delay_seconds"), Unit: "s"}
	// LMCacheRetrieveTime is the time of one LMCache retrieval.
	LMCacheRetrieveTime     = Signal{ID: "lmcache_retrieve_time", Kind: Histogram, Names: []string{"lmcache:time_to_retrieve"}, Unit: "s"}
	DynamoComponentDuration = Signal{ID: "dynamo_component_duration", Kind: Histogram, Names: []string{"dynamo_component_request_duration_seconds"}, Unit: "s"}
	// HTTPDuration is the API server's time per HTTP request, by handler and method (few buckets: 0.1, 0.5, 1 s).
	HTTPDuration = Signal{ID: "http_duration", Kind: Histogram, Names: []string{"http_request_duration_seconds"}, Unit: "s"}
	// DynamoCachedTokens is the prompt tokens of each request the engine found in its prefix cache, as Dynamo's
	// frontend reads them from the response's usage.
	DynamoCachedTokens = Signal{ID: "dynamo_cached_tokens", Kind: Histogram, Names: []string{"dynamo_frontend_cached_tokens"}, Unit: "short"}
	// DynamoRouterHitRate is the KV hit rate Dynamo's KV router predicted for each request when it chose a worker
	// (0–1, overlap blocks ÷ prompt blocks); the router registers it in every mode and fills it only in KV mode.
	DynamoRouterHitRate = Signal{ID: "dynamo_router_hit_rate", Kind: Histogram, Names: []string{"dynamo_component_router_kv_hit_rate"}, Unit: "percentunit"}
	// SleepOperationDuration is the duration of one sleep-mode operation, by operation (sleep, wake,
	// release_kv_cache_memory).
	SleepOperationDuration = Signal{ID: "sleep_operation_duration", Kind: Histogram, Names: withRay("vllm:sleep_mode_operation_duration_seconds", "vllm:rl_sleep_mode_operation_duration_seconds"), Unit: "s"}
	// AscendTotalTokens is prompt plus generation tokens per iteration.
	AscendTotalTokens = Signal{ID: "ascend_total_tokens", Kind: Histogram, Names: []string{"vllm_profiling_total_tokens"}, Unit: "short"}
)

// The transfer_type values of the offloading connector's per-direction names (src + "_to_" + dst), and the label.
const (
	OffloadTransferLabel = "transfer_type"
	OffloadLoad          = "CPU_to_GPU"
	OffloadStore         = "GPU_to_CPU"
)

// BucketFamily is the --custom-histogram-buckets key (newest vLLM) that sets a histogram signal's bucket
// bounds, by signal ID.
var BucketFamily = map[string]string{
	TTFT.ID: "time_to_first_token", ITL.ID: "inter_token_latency", RequestTPOT.ID: "inter_token_latency",
	E2E.ID: "request_latency", QueueTime.ID: "request_latency", PrefillTime.ID: "request_latency",
	DecodeTime.ID: "request_latency", InferenceTime.ID: "request_latency",
}

// TimerSignal returns a histogram signal for a custom Ascend profiler timer such as
// vllm_profiling_server:create_chat_completion:duration; the name must carry the profiler prefix.
func TimerSignal(name string) (Signal, bool) {
	if len(name) <= len(AscendPrefix) || name[:len(AscendPrefix)] != AscendPrefix {
		return Signal{}, false
	}
	return Signal{ID: "timer", Kind: Histogram, Names: []string{name}, Unit: "s"}, true
}

// Name prefixes of the families each flavor adds.
const (
	VLLMPrefix            = "vllm:"
	AscendPrefix          = "vllm_profiling_"
	DynamoComponentPrefix = "dynamo_component_"
	DynamoFrontendPrefix  = "dynamo_frontend_"
)

// Signals lists every signal above, so tests can hold each name the product reads to its provenance row.
var Signals = []Signal{
	KVUsage, DynamoKVUsage, DynamoTotalBlocks, DynamoActiveBlocks, AscendTotalBlocks, AscendFreeBlocks,
	AscendAllocatedBlocks, AscendNumSpecTokens, Running, Waiting, WaitingByReason, Swapped, V0AcceptanceRate,
	V0Efficiency, V0PrefixHitRate, OffloadCPUUsage, LMCacheMPL1Memory,
	EngineSleepState, EngineHealthy, SleepOperationsInFlight, DynamoInflight, DynamoQueued, DynamoDisconnected,
	DynamoRouterQueue, DynamoWorkerDecodeBlocks, DynamoWorkerPrefillTokens, DynamoMigrations, DynamoComponentInflight,
	DynamoWorkerLastTTFT, DynamoWorkerLastITL, DynamoComponentRequests, DynamoComponentErrors, DynamoComponentDuration, LoRAInfo, CacheConfig,
	ProcessRSS, ProcessFDs, ProcessStart, HTTPRequests, ProcessCPU, HTTPDuration,
	PromptTokens, GenerationTokens, RequestSuccess, DynamoRequests, Preemptions, PrefixHits, PrefixQueries, PromptTokensBySource,
	PromptTokensCached, PromptTokensCachedBySource, PromptTokensRecomputed, NixlFailedTransfers,
	NixlFailedNotifications, NixlExpiredRequests, OffloadLoadBytes, OffloadStoreBytes, OffloadLoadTime,
	OffloadStoreTime, OffloadAllocationFailures, LMCacheRequestedTokens, LMCacheHitTokens, LMCacheRetrieves,
	LMCacheStores, LMCacheMPL1HitTokens, LMCacheMPRetrieves, LMCacheMPDeferredRetrieves, CorruptedRequests,
	EstimatedFlops, EstimatedReadBytes, EstimatedWriteBytes, ExternalPrefixHits, ExternalPrefixQueries, MMCacheHits,
	MMCacheQueries, SpecDrafts, SpecDraftTokens, SpecAcceptedTokens, SpecAcceptedPerPos, AscendInputTokens,
	AscendOutputTokens, TTFT, ITL, RequestTPOT, E2E, QueueTime, PrefillTime, DecodeTime, InferenceTime,
	PromptTokensHist, GenerationTokensHist, IterationTokens, ParamsMaxTokens, ParamsN, MaxGenerationTokens, AscendFineTTFT, AscendFineTPOT, AscendSecondTokenLatency, AscendBatchSize,
	AscendWaitingBatchSize, NixlXferTime, NixlBytes, NixlDescriptors, NixlPostTime, PrefillKVComputed, KVBlockLifetime,
	KVBlockIdleBeforeEvict, KVBlockReuseGap, OffloadLookupDelay, LMCacheRetrieveTime, DynamoCachedTokens,
	DynamoRouterHitRate, SleepOperationDuration, AscendTotalTokens,
}

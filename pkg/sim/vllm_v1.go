package sim

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// familyBuilder adds per-engine families for the local engines in one exposition style.
type familyBuilder struct {
	x        *exposition
	st       style
	engines  []*engine
	model    string
	noEngine bool // V0 has no engine label
}

func (b *familyBuilder) labels(e *engine, extra ...label) []label {
	ls := make([]label, 0, 2+len(extra))
	if !b.noEngine {
		ls = append(ls, label{"engine", strconv.Itoa(e.idx)})
	}
	ls = append(ls, label{"model_name", b.model})
	return append(ls, extra...)
}

func (b *familyBuilder) gauge(name, help string, v func(*engine) float64) {
	f := b.x.add(name, help, typeGauge, b.st)
	for _, e := range b.engines {
		f.set(v(e), b.labels(e)...)
	}
}

// counter takes the name as vLLM declares it, without "_total".
func (b *familyBuilder) counter(name, help string, v func(*engine) float64) {
	f := b.x.add(name, help, typeCounter, b.st)
	for _, e := range b.engines {
		f.set(v(e), b.labels(e)...)
	}
}

// counterBy adds one child per engine and per value of an extra label.
func (b *familyBuilder) counterBy(name, help, key string, values []string, v func(*engine, int) float64) {
	f := b.x.add(name, help, typeCounter, b.st)
	for _, e := range b.engines {
		for i, val := range values {
			f.set(v(e, i), b.labels(e, label{key, val})...)
		}
	}
}

func (b *familyBuilder) gaugeBy(name, help, key string, values []string, v func(*engine, int) float64) {
	f := b.x.add(name, help, typeGauge, b.st)
	for _, e := range b.engines {
		for i, val := range values {
			f.set(v(e, i), b.labels(e, label{key, val})...)
		}
	}
}

func (b *familyBuilder) hist(name, help string, h func(*engine) *histogram) {
	f := b.x.add(name, help, typeHistogram, b.st)
	for _, e := range b.engines {
		f.setHist(h(e), b.labels(e)...)
	}
}

// v1Families renders the vllm:* families of the V1 PrometheusStatLogger in registration order.
func (f *Fleet) v1Families(x *exposition, st style) {
	ft := f.v1Features()
	b := &familyBuilder{x: x, st: st, engines: f.local(), model: f.cfg.Model}

	// SpecDecodingProm is constructed before any other family.
	if k := f.cfg.SpecTokens; k > 0 {
		b.counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
			func(e *engine) float64 { return e.st.specDrafts })
		b.counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
			func(e *engine) float64 { return e.st.specDraftTokens })
		b.counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
			func(e *engine) float64 { return e.st.specAccepted })
		positions := make([]string, k)
		for i := range positions {
			positions[i] = strconv.Itoa(i)
		}
		b.counterBy("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
			"position", positions, func(e *engine, i int) float64 { return e.st.specAcceptedPerPos[i] })
	}

	b.gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
		func(e *engine) float64 { return float64(len(e.running) - e.awaitingKV()) })
	b.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
		func(e *engine) float64 { return float64(e.waiting.len() + e.awaitingKV()) })
	if ft.byReason {
		b.gaugeBy("vllm:num_requests_waiting_by_reason",
			"Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; "+
				"'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). "+
				"Sum of all reasons equals vllm:num_requests_waiting.",
			"reason", []string{"capacity", "deferred"}, func(e *engine, i int) float64 {
				if i == 0 {
					return float64(e.waiting.len())
				}
				return float64(e.awaitingKV())
			})
	}
	if ft.sleepState {
		b.gaugeBy("vllm:engine_sleep_state",
			"Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; "+
				"weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
			"sleep_state", []string{"awake", "weights_offloaded", "discard_all"}, func(e *engine, i int) float64 {
				if i == f.sleepLevelAt(f.now) {
					return 1
				}
				return 0
			})
	}
	if f.cfg.SleepLevel > 0 && ft.sleepState {
		f.sleepFamilies(b)
	}
	if f.cfg.LoRAAdapters > 0 {
		f.loraFamily(b)
	}
	if f.cfg.NaNLogitsRate > 0 {
		b.counter("vllm:corrupted_requests", "Corrupted requests, in terms of total number of requests with NaNs in logits.",
			func(e *engine) float64 { return e.st.corrupted })
	}
	if ft.mfu {
		b.counter("vllm:estimated_flops_per_gpu", "Estimated number of floating point operations per GPU.",
			func(e *engine) float64 { return e.st.flops })
		b.counter("vllm:estimated_read_bytes_per_gpu", "Estimated number of bytes read from memory per GPU.",
			func(e *engine) float64 { return e.st.readBytes })
		b.counter("vllm:estimated_write_bytes_per_gpu", "Estimated number of bytes written to memory per GPU.",
			func(e *engine) float64 { return e.st.writeBytes })
	}
	if f.cfg.FaultTolerance {
		// Collected by the API server, labelled by engine only.
		fam := b.x.add("vllm:engine_healthy", "Whether the engine reports healthy under fault tolerance.", typeGauge, b.st)
		for _, e := range b.engines {
			v := 0.0
			if f.healthy(e) {
				v = 1
			}
			fam.set(v, label{"engine", strconv.Itoa(e.idx)})
		}
	}
	if ft.hidden010 {
		// The missing spaces are in vLLM's own strings.
		b.gauge("vllm:gpu_cache_usage_perc",
			"GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
			func(e *engine) float64 { return e.kv.usage() })
		b.counter("vllm:gpu_prefix_cache_queries",
			"GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.",
			func(e *engine) float64 { return e.st.prefixQueries })
		b.counter("vllm:gpu_prefix_cache_hits",
			"GPU prefix cache hits, in terms of number of cached tokens. DEPRECATED: Use vllm:prefix_cache_hits instead.",
			func(e *engine) float64 { return e.st.prefixHits })
	}
	f.kvUsageFamily(b)
	b.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
		func(e *engine) float64 { return e.st.prefixQueries })
	b.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
		func(e *engine) float64 { return e.st.prefixHits })
	zero := func(*engine) float64 { return 0 }
	if ft.externalPrefix {
		b.counter("vllm:external_prefix_cache_queries",
			"External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
			func(e *engine) float64 { return e.st.externalQueries })
		b.counter("vllm:external_prefix_cache_hits",
			"External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
			func(e *engine) float64 { return e.st.externalHits })
	}
	if ft.mmCache {
		b.counter("vllm:mm_cache_queries", "Multi-modal cache queries, in terms of number of queried items.",
			func(e *engine) float64 { return e.st.mmQueries })
		b.counter("vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items.",
			func(e *engine) float64 { return e.st.mmHits })
	}
	b.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		func(e *engine) float64 { return e.st.preemptions })
	b.counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
		func(e *engine) float64 { return e.st.promptTokens })
	if ft.bySource {
		b.counterBy("vllm:prompt_tokens_by_source", "Number of prompt tokens by source.", "source",
			[]string{"local_compute", "local_cache_hit", "external_kv_transfer"}, func(e *engine, i int) float64 {
				switch i {
				case 0:
					return e.st.promptTokens - e.st.promptCacheHit - e.st.promptTransferred
				case 1:
					return e.st.promptCacheHit
				}
				return e.st.promptTransferred
			})
		b.counter("vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
			func(e *engine) float64 { return e.st.promptCacheHit + e.st.promptTransferred })
		b.counter("vllm:prompt_tokens_recomputed", "Number of cached tokens recomputed for forward pass.", zero)
		// The same cached tokens by the tier that held them: this instance's GPU prefix cache (device) or another
		// instance's, over NIXL (p2p); the offload tiers' and unspecified connectors' hits are not modelled.
		b.counterBy("vllm:prompt_tokens_cached_by_source", "Number of cached prompt tokens by source.", "source",
			cachedSources, func(e *engine, i int) float64 {
				switch cachedSources[i] {
				case "device":
					return e.st.promptCacheHit
				case "p2p":
					return e.st.promptTransferred
				}
				return 0
			})
	}
	b.counter("vllm:generation_tokens", "Number of generation tokens processed.",
		func(e *engine) float64 { return e.st.generationTokens })
	reasons := f.finishReasons()
	b.counterBy("vllm:request_success", "Count of successfully processed requests.", "finished_reason", reasons,
		func(e *engine, i int) float64 { return e.st.success[reasons[i]] })

	b.hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
		func(e *engine) *histogram { return e.st.reqPromptTokens })
	b.hist("vllm:request_generation_tokens", "Number of generation tokens processed.",
		func(e *engine) *histogram { return e.st.reqGenTokens })
	b.hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
		func(e *engine) *histogram { return e.st.iterTokens })
	b.hist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.",
		func(e *engine) *histogram { return e.st.reqMaxGen })
	b.hist("vllm:request_params_n", "Histogram of the n request parameter.",
		func(e *engine) *histogram { return e.st.paramsN })
	b.hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
		func(e *engine) *histogram { return e.st.paramsMaxTokens })
	b.hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		func(e *engine) *histogram { return e.st.ttft })
	if ft.hidden010 {
		// vLLM observes every inter-token latency into both names.
		b.hist("vllm:time_per_output_token_seconds",
			"Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
			func(e *engine) *histogram { return e.st.itl })
	}
	b.hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		func(e *engine) *histogram { return e.st.itl })
	if ft.tpotRequest {
		b.hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.",
			func(e *engine) *histogram { return e.st.tpotRequest })
	}
	b.hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
		func(e *engine) *histogram { return e.st.e2e })
	b.hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
		func(e *engine) *histogram { return e.st.queue })
	b.hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
		func(e *engine) *histogram { return e.st.inference })
	b.hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
		func(e *engine) *histogram { return e.st.prefill })
	b.hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
		func(e *engine) *histogram { return e.st.decode })
	if ft.prefillKV {
		b.hist("vllm:request_prefill_kv_computed_tokens",
			"Histogram of new KV tokens computed during prefill (excluding cached tokens).",
			func(e *engine) *histogram { return e.st.prefillKV })
	}
	if f.cfg.KVRole != "" {
		f.nixlFamilies(b)
	}
	if f.cfg.KVOffloadGB > 0 {
		f.offloadFamilies(b)
	}
	if f.cfg.LMCache {
		f.lmcacheFamilies(b)
	}
	if f.cfg.LMCacheMP {
		f.lmcacheMPFamilies(b)
	}
	if f.cfg.KVCacheMetrics {
		b.hist("vllm:kv_block_lifetime_seconds", "Histogram of KV cache block lifetime from allocation to eviction.",
			func(e *engine) *histogram { return e.st.blockLifetime })
		b.hist("vllm:kv_block_idle_before_evict_seconds", "Histogram of idle time before KV cache block eviction.",
			func(e *engine) *histogram { return e.st.blockIdle })
		b.hist("vllm:kv_block_reuse_gap_seconds", "Histogram of time between consecutive KV cache block accesses.",
			func(e *engine) *histogram { return e.st.blockReuseGap })
	}
	f.cacheConfigFamily(b)
}

// cachedSources are the source values of prompt_tokens_cached_by_source.
var cachedSources = []string{"device", "host", "disk", "p2p", "external_unspecified"}

// loraFamily renders vllm:lora_requests_info: the adapters the running batches use and those only waiting
// requests name, comma-joined, on a series set to the time the sets last changed; earlier sets stay exposed, as
// prometheus_client keeps them. It carries no model or engine label.
func (f *Fleet) loraFamily(b *familyBuilder) {
	running, waiting := map[string]bool{}, map[string]bool{}
	for _, e := range b.engines {
		for a := range e.loraRunning() {
			running[a] = true
		}
	}
	for _, e := range b.engines {
		for i := 0; i < e.waiting.len(); i++ {
			if a := e.waiting.at(i).lora; a != "" && !running[a] {
				waiting[a] = true
			}
		}
	}
	join := func(set map[string]bool) string { return strings.Join(slices.Sorted(maps.Keys(set)), ",") }
	cur := loraInfo{running: join(running), waiting: join(waiting), setAt: float64(f.start.Unix()) + f.now}
	if n := len(f.loraInfo); n == 0 || f.loraInfo[n-1].running != cur.running || f.loraInfo[n-1].waiting != cur.waiting {
		f.loraInfo = append(f.loraInfo, cur)
		if len(f.loraInfo) > maxLoRAInfo {
			f.loraInfo = f.loraInfo[1:]
		}
	}
	fam := b.x.add("vllm:lora_requests_info", "Running stats on lora requests.", typeGauge, b.st)
	for _, s := range f.loraInfo {
		fam.set(s.setAt, label{"max_lora", strconv.Itoa(f.cfg.MaxLoRA)}, label{"running_lora_adapters", s.running},
			label{"waiting_lora_adapters", s.waiting})
	}
}

// lmcacheFamilies renders the LMCache connector's own metrics, which vLLM's /metrics carries.
func (f *Fleet) lmcacheFamilies(b *familyBuilder) {
	b.counter("lmcache:num_retrieve_requests", "Total number of retrieve requests sent to lmcache",
		func(e *engine) float64 { return e.st.lmcacheRetrieves })
	b.counter("lmcache:num_store_requests", "Total number of store requests sent to lmcache",
		func(e *engine) float64 { return e.st.lmcacheStores })
	b.counter("lmcache:num_requested_tokens", "Total number of tokens requested from lmcache",
		func(e *engine) float64 { return e.st.lmcacheRequested })
	b.counter("lmcache:num_hit_tokens", "Total number of tokens hit in lmcache",
		func(e *engine) float64 { return e.st.lmcacheHit })
	b.counter("lmcache:num_stored_tokens", "Total number of tokens stored in lmcache",
		func(e *engine) float64 { return e.st.lmcacheStored })
	b.hist("lmcache:time_to_retrieve", "Time to retrieve from cache (seconds)",
		func(e *engine) *histogram { return e.st.lmcacheRetrieveTime })
}

// lmcacheMPFamilies renders the multi-process LMCache server's metrics, which vLLM's /metrics carries.
func (f *Fleet) lmcacheMPFamilies(b *familyBuilder) {
	b.counter("lmcache_mp_lookup_requested_tokens", "Tokens looked up in LMCache.",
		func(e *engine) float64 { return e.st.lmcacheRequested })
	b.counter("lmcache_mp_lookup_hit_tokens", "Tokens found in LMCache.",
		func(e *engine) float64 { return e.st.lmcacheHit })
	b.counter("lmcache_mp_lookup_hit_l1_tokens", "Tokens found in LMCache's L1 (CPU memory).",
		func(e *engine) float64 { return e.st.lmcacheHit * lmcacheL1Share })
	b.counter("lmcache_mp_lookup_hit_l2_tokens", "Tokens found in LMCache's L2.",
		func(e *engine) float64 { return e.st.lmcacheHit * (1 - lmcacheL1Share) })
	b.counter("lmcache_mp_num_submitted_retrieves", "Retrieves submitted to LMCache.",
		func(e *engine) float64 { return e.st.lmcacheRetrieves })
	b.counter("lmcache_mp_num_finished_retrieves", "Retrieves LMCache finished.",
		func(e *engine) float64 { return e.st.lmcacheRetrieves })
	b.counter("lmcache_mp_num_deferred_retrieves", "Retrieves LMCache deferred.",
		func(e *engine) float64 { return e.st.lmcacheDeferred })
	b.gauge("lmcache_mp_l1_memory_usage_bytes", "Bytes of LMCache's L1 in use.",
		func(e *engine) float64 { return math.Min(lmcacheL1Bytes, e.st.lmcacheStored*kvBytesPerToken) })
}

// offloadFamilies renders the offloading connector's metrics with the CPU spec (OffloadPromMetrics): before 0.24,
// only the transfer_type names (children created on a direction's first transfer: CPU_to_GPU loads, GPU_to_CPU
// stores); from 0.24.0 (and on main) the flat names too, each child created on its first observation, with the
// transfer_type ones created for both directions at start. A release's table picks which of these the server has; the flavor's own (no release) are the flat names.
func (f *Fleet) offloadFamilies(b *familyBuilder) {
	capacity := f.cfg.KVOffloadGB * 1e9
	eager := vllm.CompareReleases(f.release, flatOffloadSince) >= 0
	byType := func(name, help string, typ metricType, load, store func(*engine) float64, hist func(*engine) [2]*histogram) {
		fam := b.x.add(name, help, typ, b.st)
		for _, e := range b.engines {
			for i, dir := range []string{"CPU_to_GPU", "GPU_to_CPU"} {
				if hist != nil {
					h := hist(e)[i]
					if eager || h.count > 0 {
						fam.setHist(h, b.labels(e, label{"transfer_type", dir})...)
					}
					continue
				}
				v, n := load(e), e.st.offloadLoadSize.count
				if i == 1 {
					v, n = store(e), e.st.offloadStoreSize.count
				}
				if eager || n > 0 {
					fam.set(v, b.labels(e, label{"transfer_type", dir})...)
				}
			}
		}
	}
	if f.release != "" {
		byType("vllm:kv_offload_total_bytes", "Number of bytes offloaded by KV connector", typeCounter,
			func(e *engine) float64 { return e.st.offloadLoadBytes }, func(e *engine) float64 { return e.st.offloadStoreBytes }, nil)
		byType("vllm:kv_offload_total_time", "Total time measured by all KV offloading operations", typeCounter,
			func(e *engine) float64 { return e.st.offloadLoadTime }, func(e *engine) float64 { return e.st.offloadStoreTime }, nil)
		byType("vllm:kv_offload_size", "Histogram of KV offload transfer size, in bytes.", typeHistogram, nil, nil,
			func(e *engine) [2]*histogram { return [2]*histogram{e.st.offloadLoadSize, e.st.offloadStoreSize} })
	}
	// A release creates a flat name's child on its first observation (OffloadPromMetrics._get_prometheus_metric): an
	// engine that has not loaded (stored) yet has the load (store) families without samples.
	flat := func(name, help string, typ metricType, v func(*engine) float64, h func(*engine) *histogram) {
		fam := b.x.add(name, help, typ, b.st)
		for _, e := range b.engines {
			if f.release != "" && h(e).count == 0 {
				continue
			}
			if typ == typeHistogram {
				fam.setHist(h(e), b.labels(e)...)
			} else {
				fam.set(v(e), b.labels(e)...)
			}
		}
	}
	loads := func(e *engine) *histogram { return e.st.offloadLoadSize }
	stores := func(e *engine) *histogram { return e.st.offloadStoreSize }
	flat("vllm:kv_offload_load_bytes", "Total bytes loaded from offload storage to GPU.", typeCounter,
		func(e *engine) float64 { return e.st.offloadLoadBytes }, loads)
	flat("vllm:kv_offload_load_time", "Total load time from offload storage to GPU, in seconds.", typeCounter,
		func(e *engine) float64 { return e.st.offloadLoadTime }, loads)
	flat("vllm:kv_offload_load_size", "Histogram of KV offload load operation size, in bytes.", typeHistogram, nil, loads)
	flat("vllm:kv_offload_store_bytes", "Total bytes stored from GPU to offload storage.", typeCounter,
		func(e *engine) float64 { return e.st.offloadStoreBytes }, stores)
	flat("vllm:kv_offload_store_time", "Total store time from GPU to offload storage, in seconds.", typeCounter,
		func(e *engine) float64 { return e.st.offloadStoreTime }, stores)
	flat("vllm:kv_offload_store_size", "Histogram of KV offload store operation size, in bytes.", typeHistogram, nil, stores)
	b.hist("vllm:kv_offload_lookup_sync_delay_seconds", "Histogram of the time spent in a single offload lookup call, in seconds.",
		func(e *engine) *histogram { return e.st.offloadLookup })
	b.hist("vllm:kv_offload_lookup_async_delay_seconds",
		"Histogram of time between a request's offload lookup first deferring and the following lookup resolving, or request finish, in seconds.",
		func(e *engine) *histogram { return e.st.offloadAsyncLookup })
	b.counter("vllm:kv_offload_allocation_failure", "Number of KV offload store allocation attempts that failed.",
		func(e *engine) float64 { return e.st.offloadFailures })
	b.gauge("vllm:kv_offload_cpu_cache_usage_perc",
		"Fraction of CPU KV-cache space currently pinned by active transfers (0.0 = idle, 1.0 = saturated). Sustained high values indicate transfers (stores or promotions) may be dropped due to insufficient capacity.",
		func(e *engine) float64 { return e.st.offloadResident / capacity })
	// Stores and loads finish within the step that starts them here, so no CPU space stays pinned by one in flight.
	zero := func(*engine) float64 { return 0 }
	b.gauge("vllm:kv_offload_cpu_cache_write_usage_perc",
		"Fraction of CPU KV-cache space currently pinned by in-flight stores that have not yet completed (0.0 = idle, 1.0 = saturated).", zero)
	b.gauge("vllm:kv_offload_cpu_cache_read_usage_perc",
		"Fraction of CPU KV-cache space currently pinned by in-flight loads that have not yet completed (0.0 = idle, 1.0 = saturated).", zero)
	b.hist("vllm:kv_offload_cpu_allocation_size",
		"Histogram of the number of CPU blocks requested by each KV offload prepare_store call.",
		func(e *engine) *histogram { return e.st.offloadAllocation })
}

// flatOffloadSince is the release whose offloading connector has the flat kv_offload_{load,store}_* names and creates
// the transfer_type children at start (the provenance table's First of vllm:kv_offload_load_bytes).
var flatOffloadSince = func() string {
	o, _ := vllm.Provenance("vllm:kv_offload_load_bytes_total")
	return o.First
}()

// nixlFamilies renders the NIXL KV connector's metrics (NixlPromMetrics). Both sides of a pair register them; the
// instance that pulls the KV (decode) records transfers, the one that holds it (prefill) only KV expired unread,
// which the simulated pair never lets happen.
func (f *Fleet) nixlFamilies(b *familyBuilder) {
	b.hist("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
		func(e *engine) *histogram { return e.st.nixlXfer })
	b.hist("vllm:nixl_post_time_seconds", "Histogram of transfer post time for NIXL KV Cache transfers.",
		func(e *engine) *histogram { return e.st.nixlPost })
	b.hist("vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
		func(e *engine) *histogram { return e.st.nixlBytes })
	b.hist("vllm:nixl_num_descriptors", "Histogram of number of descriptors per NIXL KV Cache transfers.",
		func(e *engine) *histogram { return e.st.nixlDescriptors })
	b.counter("vllm:nixl_num_failed_transfers", "Number of failed NIXL KV Cache transfers.",
		func(e *engine) float64 { return e.st.nixlFailed })
	b.counter("vllm:nixl_num_failed_notifications", "Number of failed NIXL KV Cache notifications.",
		func(*engine) float64 { return 0 })
	b.counter("vllm:nixl_num_kv_expired_reqs", "Number of requests that had their KV expire.",
		func(*engine) float64 { return 0 })
}

// kvUsageFamily renders vllm:kv_cache_usage_perc. With the pid artefact every API-server process
// keeps its own copy of the gauge; only the one that receives the engine's stats is non-zero.
func (f *Fleet) kvUsageFamily(b *familyBuilder) {
	fam := b.x.add("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", typeGauge, b.st)
	for _, e := range b.engines {
		if !f.cfg.PIDLabel {
			fam.set(e.kv.usage(), b.labels(e)...)
			continue
		}
		for i, pid := range f.pids {
			v := 0.0
			if i == 0 {
				v = e.kv.usage()
			}
			fam.set(v, b.labels(e, label{"pid", strconv.Itoa(pid)})...)
		}
	}
}

// cacheConfigFamily emulates prometheus Info with a gauge set to 1, labelled with CacheConfig: the flavor's own
// labels, or every attribute the release's CacheConfig has (vllm.Family.LabelsAt).
func (f *Fleet) cacheConfigFamily(b *familyBuilder) {
	fam := b.x.add("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", typeGauge, b.st)
	names := f.labelsOf("vllm:cache_config_info")
	if names == nil {
		names = []string{"block_size", "cache_dtype", "calculate_kv_scales", "cpu_offload_gb", "enable_prefix_caching",
			"gpu_memory_utilization", "is_attention_free", "num_cpu_blocks", "num_gpu_blocks", "num_gpu_blocks_override",
			"prefix_caching_hash_algo", "sliding_window", "swap_space", "swap_space_bytes", "engine"}
	}
	values := f.cacheConfigValues()
	for _, e := range b.engines {
		ls := make([]label, 0, len(names))
		for _, n := range names {
			v, ok := values[n]
			switch {
			case n == "engine":
				v = strconv.Itoa(e.idx)
			case !ok:
				v = "None"
			}
			ls = append(ls, label{n, v})
		}
		fam.set(1, ls...)
	}
}

// cacheConfigValues are the CacheConfig attribute values the simulated server prints (str() of each, as
// metrics_info() does); attributes left out print None.
func (f *Fleet) cacheConfigValues() map[string]string {
	c := f.cfg
	prefix := "False"
	if c.PrefixHitRate > 0 {
		prefix = "True"
	}
	offloadSize, offloadBackend := "None", "None"
	if c.KVOffloadGB > 0 {
		offloadSize, offloadBackend = strconv.FormatFloat(c.KVOffloadGB, 'g', -1, 64), "native"
	}
	return map[string]string{
		"block_size": strconv.Itoa(c.BlockSize), "hash_block_size": strconv.Itoa(c.BlockSize),
		"prefix_match_unit": strconv.Itoa(c.BlockSize), "cache_dtype": "auto", "calculate_kv_scales": "False",
		"cpu_offload_gb": "0", "enable_prefix_caching": prefix, "gpu_memory_utilization": "0.9",
		"is_attention_free": "False", "num_gpu_blocks": strconv.Itoa(c.NumGPUBlocks),
		"prefix_caching_hash_algo": "sha256", "swap_space": "4", "swap_space_bytes": "4294967296",
		"cpu_kvcache_space_bytes": "None", "mamba_page_size_padded": "None", "mamba_cache_dtype": "auto",
		"mamba_ssm_cache_dtype": "auto", "mamba_cache_mode": "none", "kv_sharing_fast_prefill": "False",
		"kv_offloading_size": offloadSize, "kv_offloading_backend": offloadBackend, "_block_size_resolved": "True",
		"user_specified_block_size": "False", "user_specified_mamba_block_size": "False",
		"kv_cache_dtype_skip_layers": "[]", "use_replayssm": "False",
	}
}

// v1Features are the families a V1 flavor has; with a release every one, the release's table choosing among them.
func (f *Fleet) v1Features() v1Features {
	if f.release != "" {
		return v1Features{hidden010: true, sleepState: true, externalPrefix: true, mmCache: true, byReason: true,
			bySource: true, tpotRequest: true, prefillKV: true, errorReason: true, mfu: true}
	}
	return f.cfg.Flavor.v1()
}

// finishReasons are the finished_reason values the server pre-creates (V1) or may produce (V0): the release's, or
// the flavor's.
func (f *Fleet) finishReasons() []string {
	if f.release != "" && !vllm.V0Release(f.release) {
		return vllm.FinishReasons(f.release)
	}
	return f.cfg.Flavor.finishReasons()
}

package sim

import (
	"math"
	"sort"
	"strconv"
)

// dynamoEndpoints are the endpoints a Dynamo vLLM worker registers; only generate sees traffic.
var dynamoEndpoints = []string{"clear_kv_blocks", "generate", "list_loras", "load_lora", "unload_lora"}

// dynamoWorkerFamilies renders a Dynamo vLLM worker's own dynamo_component_* families. The Rust
// registry prints families sorted by name; the engine's vllm:* text follows, passed through
// verbatim by register_engine_metrics_callback.
func (f *Fleet) dynamoWorkerFamilies(x *exposition) {
	st := styleRust
	engines := f.local()
	hier := []label{{"dynamo_component", "backend"}, {"dynamo_namespace", "dynamo"}}
	perEndpoint := func(ep string) []label {
		return append([]label{{"dynamo_endpoint", ep}, {"model", f.cfg.Model}}, hier...)
	}
	var fams []*family
	add := func(name, help string, t metricType) *family {
		fam := &family{name: name, help: help, typ: t, style: st}
		fams = append(fams, fam)
		return fam
	}
	var inflight, reqs, reqBytes, respBytes float64
	duration := newHistogram(bucketsRustDefault)
	for _, e := range engines {
		inflight += float64(len(e.running) + e.waiting.len())
		reqs += e.st.workerRequests
		reqBytes += e.st.workerRequestBytes
		respBytes += e.st.workerResponseBytes
		for i, c := range e.st.workerDuration.counts {
			duration.counts[i] += c
		}
		duration.sum += e.st.workerDuration.sum
		duration.count += e.st.workerDuration.count
	}
	endpointFamily := func(name, help string, t metricType, generate float64) {
		fam := add(name, help, t)
		for _, ep := range dynamoEndpoints {
			v := 0.0
			if ep == "generate" {
				v = generate
			}
			fam.set(v, perEndpoint(ep)...)
		}
	}
	endpointFamily("dynamo_component_inflight_requests", "Number of requests currently being processed by work handler", typeGauge, inflight)
	endpointFamily("dynamo_component_requests_total", "Total number of requests processed by work handler", typeCounter, reqs)
	endpointFamily("dynamo_component_request_bytes_total", "Total number of bytes received in requests by work handler", typeCounter, reqBytes)
	endpointFamily("dynamo_component_response_bytes_total", "Total number of bytes sent in responses by work handler", typeCounter, respBytes)
	failed := 0.0
	for _, e := range engines {
		failed += e.st.success["error"]
	}
	if failed > 0 {
		// The work handler counts a request whose generation failed once it has one (a Rust CounterVec child).
		add("dynamo_component_errors_total", "Total number of errors in work handler processing", typeCounter).
			set(failed, append(perEndpoint("generate"), label{"error_type", "generate"})...)
	}
	dur := add("dynamo_component_request_duration_seconds", "Time spent processing requests by work handler", typeHistogram)
	for _, ep := range dynamoEndpoints {
		h := newHistogram(bucketsRustDefault)
		if ep == "generate" {
			h = duration
		}
		dur.setHist(h, perEndpoint(ep)...)
	}

	if f.cfg.DynamoNames == "legacy" {
		// The older names carry no dp_rank: with several ranks the last one written wins.
		e := engines[len(engines)-1]
		add("dynamo_component_kvstats_active_blocks", "Number of active KV cache blocks currently in use", typeGauge).
			set(float64(e.kv.used), hier...)
		add("dynamo_component_kvstats_gpu_cache_usage_percent", "GPU cache usage as a percentage (0.0-1.0)", typeGauge).
			set(e.kv.usage(), hier...)
		add("dynamo_component_kvstats_gpu_prefix_cache_hit_rate", "GPU prefix cache hit rate as a percentage (0.0-1.0)", typeGauge).
			set(ratio(e.st.prefixHits, e.st.prefixQueries), hier...)
		add("dynamo_component_kvstats_total_blocks", "Total number of KV cache blocks available", typeGauge).
			set(float64(e.kv.total), hier...)
	} else {
		usage := add("dynamo_component_gpu_cache_usage_percent", "GPU cache usage as a percentage (0.0-1.0)", typeGauge)
		total := add("dynamo_component_total_blocks", "Total number of KV cache blocks available on the worker", typeGauge)
		for _, e := range engines {
			ls := append([]label{{"dp_rank", strconv.Itoa(e.idx)}}, hier...)
			usage.set(e.kv.usage(), ls...)
			total.set(float64(e.kv.total), ls...)
		}
	}
	add("dynamo_component_uptime_seconds", "Total uptime of the DistributedRuntime in seconds", typeGauge).
		set(math.Round((f.uptime()+12.4)*1e9) / 1e9)

	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	x.fams = append(x.fams, fams...)
}

// dynamoFrontendFamilies renders Dynamo's HTTP frontend in front of the whole fleet. Request
// metrics spell the model in lower case, configuration gauges keep its case (as in fe.log); the
// Rust registry omits families that have no series yet.
func (f *Fleet) dynamoFrontendFamilies(x *exposition) {
	st := styleRust
	fe := f.fe
	lm := []label{{"model", lower(f.cfg.Model)}}
	cm := []label{{"model", f.cfg.Model}}
	var fams []*family
	add := func(name, help string, t metricType) *family {
		fam := &family{name: name, help: help, typ: t, style: st}
		fams = append(fams, fam)
		return fam
	}
	hist := func(name, help string, h *histogram) {
		if h.count > 0 {
			add(name, help, typeHistogram).setHist(h, lm...)
		}
	}
	inflight, queued := 0.0, 0.0
	for _, e := range f.engines {
		inflight += float64(len(e.running) + e.waiting.len())
		queued += float64(e.waiting.len())
		for _, r := range e.running {
			if r.firstToken < 0 {
				queued++
			}
		}
	}
	c := f.cfg
	add("dynamo_frontend_disconnected_clients", "Number of disconnected clients", typeGauge).set(0)
	add("dynamo_frontend_inflight_requests", "Number of inflight requests", typeGauge).set(inflight, lm...)
	add("dynamo_frontend_queued_requests", "Number of requests in HTTP processing queue", typeGauge).set(queued, lm...)
	add("dynamo_frontend_model_context_length", "Maximum context length in tokens for a worker serving the model", typeGauge).
		set(float64(c.MaxModelLen), cm...)
	add("dynamo_frontend_model_kv_cache_block_size", "KV cache block size in tokens for a worker serving the model", typeGauge).
		set(float64(c.BlockSize), cm...)
	add("dynamo_frontend_model_max_num_batched_tokens", "Maximum number of batched tokens for a worker serving the model", typeGauge).
		set(float64(c.MaxNumBatchedTokens), cm...)
	add("dynamo_frontend_model_max_num_seqs", "Maximum number of sequences for a worker serving the model", typeGauge).
		set(float64(c.MaxNumSeqs), cm...)
	add("dynamo_frontend_model_migration_limit", "Maximum number of request migrations allowed for the model", typeGauge).
		set(0, cm...)
	add("dynamo_frontend_model_total_kv_blocks", "Total KV cache blocks available for a worker serving the model", typeGauge).
		set(float64(c.NumGPUBlocks), cm...)
	hist("dynamo_frontend_input_sequence_tokens", "Input sequence length in tokens", fe.isl)
	hist("dynamo_frontend_output_sequence_tokens", "Output sequence length in tokens", fe.osl)
	hist("dynamo_frontend_inter_token_latency_seconds", "Inter-token latency in seconds", fe.itl)
	hist("dynamo_frontend_request_duration_seconds", "Duration of LLM requests", fe.duration)
	hist("dynamo_frontend_time_to_first_token_seconds", "Time to first token in seconds", fe.ttft)
	if fe.outputTokens > 0 {
		add("dynamo_frontend_output_tokens_total", "Total number of output tokens generated (updates in real-time)", typeCounter).
			set(fe.outputTokens, lm...)
	}
	if len(fe.requests) > 0 {
		req := add("dynamo_frontend_requests_total", "Total number of LLM requests processed", typeCounter)
		keys := make([][2]string, 0, len(fe.requests))
		for k := range fe.requests {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
		for _, k := range keys {
			ls := []label{{"endpoint", "chat_completions"}, lm[0], {"request_type", k[0]}, {"status", k[1]}}
			if k[1] == "error" {
				// An engine's failure reaches the frontend as an internal error (prometheus_names.rs error_type).
				ls = append(ls, label{"error_type", "internal"})
			}
			req.set(fe.requests[k], ls...)
		}
	}
	if c.DynamoNames != "legacy" {
		f.dynamoRouterFamilies(add, lm)
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	x.fams = append(x.fams, fams...)
}

// dynamoWorkerID is the lease id the simulated frontend's single worker registered under; its DP ranks are the
// fleet's engines.
const dynamoWorkerID = "7587884888253033398"

// dynamoRouterFamilies renders what current Dynamo's frontend adds in KV-router mode: the router's books per
// worker and DP rank (no model label; aggregated workers report as decode), its queue, the cached tokens the
// engines reported, migrations, and the router's component metrics bridged in from the runtime's registry.
func (f *Fleet) dynamoRouterFamilies(add func(name, help string, t metricType) *family, lm []label) {
	fe := f.fe
	rank := func(e *engine) []label {
		return []label{{"dp_rank", strconv.Itoa(e.idx)}, {"worker_id", dynamoWorkerID}, {"worker_type", "decode"}}
	}
	blocks := add("dynamo_frontend_worker_active_decode_blocks", "Active KV cache decode blocks per worker", typeGauge)
	prefill := add("dynamo_frontend_worker_active_prefill_tokens", "Active prefill tokens queued per worker", typeGauge)
	pending := 0.0
	for _, e := range f.engines {
		blocks.set(float64(e.kv.used), rank(e)...)
		tokens := 0
		for i := 0; i < e.waiting.len(); i++ {
			r := e.waiting.at(i)
			tokens += r.promptLen - r.computed
		}
		for _, r := range e.running {
			if r.computed < r.promptLen {
				tokens += r.promptLen - r.computed
			}
		}
		prefill.set(float64(tokens), rank(e)...)
		pending += float64(e.waiting.len())
	}
	lastGauge := func(name, help string, v func(l workerLast) (float64, bool)) {
		var fam *family
		for _, e := range f.engines {
			if x, ok := v(fe.last[e.idx]); ok {
				if fam == nil {
					fam = add(name, help, typeGauge)
				}
				fam.set(x, rank(e)...)
			}
		}
	}
	lastGauge("dynamo_frontend_worker_last_time_to_first_token_seconds", "Last observed time to first token per worker",
		func(l workerLast) (float64, bool) { return l.ttft, l.seenTTFT })
	lastGauge("dynamo_frontend_worker_last_input_sequence_tokens", "Last observed input sequence tokens per worker",
		func(l workerLast) (float64, bool) { return l.inputTokens, l.seenTTFT })
	lastGauge("dynamo_frontend_worker_last_inter_token_latency_seconds", "Last observed inter-token latency per worker",
		func(l workerLast) (float64, bool) { return l.itl, l.seenITL })
	add("dynamo_frontend_router_queue_pending_requests", "Number of requests pending in the router scheduler queue", typeGauge).
		set(pending, append(lm[:1:1], label{"worker_type", "decode"})...)
	if fe.cached.count > 0 {
		add("dynamo_frontend_cached_tokens", "Number of cached tokens (prefix cache hits) per request", typeHistogram).
			setHist(fe.cached, lm...)
	}
	if fe.migrations > 0 {
		add("dynamo_frontend_model_migration_total", "Total number of request migrations due to worker unavailability", typeCounter).
			set(fe.migrations, label{"migration_type", "ongoing_request"}, lm[0])
	}
	hier := []label{{"dynamo_component", "backend"}, {"dynamo_endpoint", "generate"}, {"dynamo_namespace", "dynamo"}}
	add("dynamo_component_router_requests_total", "Total number of requests processed by the router", typeCounter).
		set(fe.routed, hier...)
	add("dynamo_component_router_kv_hit_rate", "Predicted KV cache hit rate at routing time (0.0-1.0)", typeHistogram).
		setHist(fe.routerHit, hier...)
}

package sim

import "strconv"

// v0Families renders the legacy V0 engine's vllm:* families (vllm/engine/metrics.py, ~0.6-0.7,
// deprecated gauges shown). V0 labels by model_name only and disables _created series. Its
// histograms and finished_reason children appear on first observation, as V0 creates labelled
// children lazily; families without children still print their HELP and TYPE lines.
func (f *Fleet) v0Families(x *exposition) {
	b := &familyBuilder{x: x, st: stylePython, engines: f.local(), model: f.cfg.Model, noEngine: true}
	zero := func(*engine) float64 { return 0 }

	b.gauge("vllm:num_requests_running", "Number of requests currently running on GPU.",
		func(e *engine) float64 { return float64(len(e.running)) })
	b.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
		func(e *engine) float64 { return float64(e.waiting.len()) })
	x.add("vllm:lora_requests_info", "Running stats on lora requests.", typeGauge, stylePython)
	// V0 swaps a preempted request's KV blocks out to CPU (its swap preemption mode) until it is resumed, so the
	// preempted requests still waiting are the swapped ones.
	b.gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", func(e *engine) float64 {
		n := 0
		for i := 0; i < e.waiting.len(); i++ {
			if e.waiting.at(i).generated > 0 {
				n++
			}
		}
		return float64(n)
	})
	b.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.",
		func(e *engine) float64 { return e.kv.usage() })
	b.gauge("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", zero)
	b.gauge("vllm:cpu_prefix_cache_hit_rate", "CPU prefix cache block hit rate.", zero)
	b.gauge("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.", func(e *engine) float64 {
		return ratio(e.st.prefixHits, e.st.prefixQueries)
	})

	// 0.6's throughput gauges (gone by 0.7.3, the flavor's own release) are per 5 s logging interval; the simulator
	// keeps no such window and prints the mean since start.
	perSecond := func(v func(*engine) float64) func(*engine) float64 {
		return func(e *engine) float64 { return ratio(v(e), f.now) }
	}
	if f.release != "" {
		b.gauge("vllm:avg_prompt_throughput_toks_per_s", "Average prefill throughput in tokens/s.",
			perSecond(func(e *engine) float64 { return e.st.promptTokens }))
		b.gauge("vllm:avg_generation_throughput_toks_per_s", "Average generation throughput in tokens/s.",
			perSecond(func(e *engine) float64 { return e.st.generationTokens }))
	}

	for _, c := range []struct {
		name, help string
		v          func(*engine) float64
	}{
		{"vllm:num_preemptions", "Cumulative number of preemption from the engine.", func(e *engine) float64 { return e.st.preemptions }},
		{"vllm:prompt_tokens", "Number of prefill tokens processed.", func(e *engine) float64 { return e.st.promptTokens }},
		{"vllm:generation_tokens", "Number of generation tokens processed.", func(e *engine) float64 { return e.st.generationTokens }},
		{"vllm:tokens", "Number of prefill plus generation tokens processed.", func(e *engine) float64 {
			return e.st.promptTokens + e.st.generationTokens
		}},
	} {
		b.counter(c.name, c.help, c.v)
	}

	lazyHist := func(name, help string, h func(*engine) *histogram) {
		fam := x.add(name, help, typeHistogram, stylePython)
		for _, e := range b.engines {
			if hh := h(e); hh.count > 0 {
				fam.setHist(hh, b.labels(e)...)
			}
		}
	}
	lazyHist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
		func(e *engine) *histogram { return e.st.iterTokens })
	lazyHist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		func(e *engine) *histogram { return e.st.ttft })
	lazyHist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
		func(e *engine) *histogram { return e.st.itl })
	lazyHist("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.",
		func(e *engine) *histogram { return e.st.e2e })
	lazyHist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
		func(e *engine) *histogram { return e.st.queue })
	lazyHist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
		func(e *engine) *histogram { return e.st.inference })
	lazyHist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
		func(e *engine) *histogram { return e.st.prefill })
	lazyHist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
		func(e *engine) *histogram { return e.st.decode })
	// Observed only with --collect-detailed-traces, which the simulated server runs without: declared, no children.
	x.add("vllm:model_forward_time_milliseconds", "Histogram of time spent in the model forward pass in ms.", typeHistogram, stylePython)
	x.add("vllm:model_execute_time_milliseconds", "Histogram of time spent in the model execute function in ms.", typeHistogram, stylePython)
	lazyHist("vllm:time_in_queue_requests", "Histogram of time the request spent in the queue in seconds.",
		func(e *engine) *histogram { return e.st.queue })
	lazyHist("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
		func(e *engine) *histogram { return e.st.reqPromptTokens })
	lazyHist("vllm:request_generation_tokens", "Number of generation tokens processed.",
		func(e *engine) *histogram { return e.st.reqGenTokens })
	lazyHist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.",
		func(e *engine) *histogram { return e.st.reqMaxGen })
	lazyHist("vllm:request_params_n", "Histogram of the n request parameter.",
		func(e *engine) *histogram { return e.st.paramsN })
	lazyHist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
		func(e *engine) *histogram { return e.st.paramsMaxTokens })

	success := x.add("vllm:request_success", "Count of successfully processed requests.", typeCounter, stylePython)
	for _, e := range b.engines {
		for _, reason := range f.cfg.Flavor.finishReasons() {
			if v := e.st.success[reason]; v > 0 {
				success.set(v, b.labels(e, label{"finished_reason", reason})...)
			}
		}
	}

	// Spec-decode metrics exist from start but get a child only once speculation has run.
	k := float64(f.cfg.SpecTokens)
	specGauges := []struct {
		name, help string
		v          func(*engine) float64
	}{
		// "Speulative" is V0's own spelling.
		{"vllm:spec_decode_draft_acceptance_rate", "Speulative token acceptance rate.", func(e *engine) float64 {
			return ratio(e.st.specAccepted, e.st.specDraftTokens)
		}},
		{"vllm:spec_decode_efficiency", "Speculative decoding system efficiency.", func(e *engine) float64 {
			return ratio(e.st.specEmitted, e.st.specDrafts*(k+1))
		}},
	}
	specCounters := []struct {
		name, help string
		v          func(*engine) float64
	}{
		{"vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", func(e *engine) float64 { return e.st.specAccepted }},
		{"vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", func(e *engine) float64 { return e.st.specDraftTokens }},
		{"vllm:spec_decode_num_emitted_tokens", "Number of emitted tokens.", func(e *engine) float64 { return e.st.specEmitted }},
	}
	for _, g := range specGauges {
		fam := x.add(g.name, g.help, typeGauge, stylePython)
		for _, e := range b.engines {
			if e.st.specDrafts > 0 {
				fam.set(g.v(e), b.labels(e)...)
			}
		}
	}
	for _, c := range specCounters {
		fam := x.add(c.name, c.help, typeCounter, stylePython)
		for _, e := range b.engines {
			if e.st.specDrafts > 0 {
				fam.set(c.v(e), b.labels(e)...)
			}
		}
	}

	c := f.cfg
	prefix := "False"
	if c.PrefixHitRate > 0 {
		prefix = "True"
	}
	info := x.add("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", typeGauge, stylePython)
	info.set(1,
		label{"block_size", strconv.Itoa(c.BlockSize)},
		label{"cache_dtype", "auto"},
		label{"cpu_offload_gb", "0"},
		label{"enable_prefix_caching", prefix},
		label{"gpu_memory_utilization", "0.9"},
		label{"is_attention_free", "False"},
		label{"num_cpu_blocks", strconv.Itoa(4294967296 / (c.BlockSize * 128 * 1024))},
		label{"num_gpu_blocks", strconv.Itoa(c.NumGPUBlocks)},
		label{"num_gpu_blocks_override", "None"},
		label{"sliding_window", "None"},
		label{"swap_space_bytes", "4294967296"},
	)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

package sim

import (
	"fmt"
	"strings"
)

// Flavor selects which server's /metrics the simulator impersonates.
type Flavor string

// The flavors the simulator can impersonate.
const (
	// FlavorV1 is current vLLM (V1 engine, >= 0.12): kv_cache_usage_perc, inter_token_latency_seconds,
	// prefix_cache_*, prompt_tokens_by_source, per-engine spec decode, _created series.
	FlavorV1 Flavor = "vllm-v1"
	// FlavorV1010 is the transitional V1 shape (0.11 with --show-hidden-metrics-for-version=0.10):
	// the deprecated gpu_cache_usage_perc, gpu_prefix_cache_* and time_per_output_token_seconds
	// next to their replacements.
	FlavorV1010 Flavor = "vllm-v1-0.10"
	// FlavorV0 is the legacy V0 engine: no engine label, swapped/cpu gauges, spec-decode gauges.
	FlavorV0 Flavor = "vllm-v0"
	// FlavorAscend is vLLM-Ascend with msServiceProfiler: V1 plus vllm_profiling_* with label dp.
	FlavorAscend Flavor = "vllm-ascend"
	// FlavorDynamoWorker is a Dynamo vLLM worker's system port: dynamo_component_* then vllm:*.
	FlavorDynamoWorker Flavor = "dynamo-worker"
	// FlavorDynamoFrontend is Dynamo's HTTP frontend: dynamo_frontend_* for the whole fleet.
	FlavorDynamoFrontend Flavor = "dynamo-frontend"
)

// Flavors lists every supported flavor, in documentation order.
var Flavors = []Flavor{FlavorV1, FlavorV1010, FlavorV0, FlavorAscend, FlavorDynamoWorker, FlavorDynamoFrontend}

// ParseFlavor validates a flavor name.
func ParseFlavor(s string) (Flavor, error) {
	for _, f := range Flavors {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Flavors))
	for i, f := range Flavors {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown flavor %q (want one of %s)", s, strings.Join(names, ", "))
}

// v1Features says which V1 families and quirks a flavor's vLLM version has.
type v1Features struct {
	hidden010      bool // gpu_cache_usage_perc, gpu_prefix_cache_*, time_per_output_token_seconds
	sleepState     bool // engine_sleep_state
	externalPrefix bool // external_prefix_cache_*
	mmCache        bool // mm_cache_*
	byReason       bool // num_requests_waiting_by_reason
	bySource       bool // prompt_tokens_by_source, prompt_tokens_cached, prompt_tokens_recomputed
	tpotRequest    bool // request_time_per_output_token_seconds
	prefillKV      bool // request_prefill_kv_computed_tokens
	errorReason    bool // finished_reason="error" exists
	mfu            bool // estimated_{flops,read_bytes,write_bytes}_per_gpu_total (at 0 without --enable-mfu-metrics)
}

func (f Flavor) v1() v1Features {
	switch f {
	case FlavorV1010:
		// As read in vllm/v1/metrics/loggers.py of 0.11 with show_hidden_metrics on.
		return v1Features{hidden010: true}
	case FlavorDynamoWorker:
		// The families of the real Dynamo worker capture (vLLM ~0.12).
		return v1Features{sleepState: true, externalPrefix: true, mmCache: true, tpotRequest: true,
			prefillKV: true, errorReason: true}
	default:
		return v1Features{sleepState: true, externalPrefix: true, mmCache: true, byReason: true,
			bySource: true, tpotRequest: true, prefillKV: true, errorReason: true, mfu: true}
	}
}

func (f Flavor) isV0() bool { return f == FlavorV0 }

// Version is the vLLM release a flavor impersonates, as its /version answers.
func (f Flavor) Version() string {
	switch f {
	case FlavorV1010:
		return "0.11.0"
	case FlavorV0:
		return "0.7.3"
	case FlavorAscend:
		return "0.11.0"
	case FlavorDynamoWorker:
		return "0.12.0"
	}
	return "0.13.0"
}

func (f Flavor) hasErrorReason() bool { return !f.isV0() && f.v1().errorReason }

// finishReasons are the finished_reason values a flavor pre-creates (V1) or may produce (V0).
func (f Flavor) finishReasons() []string {
	if !f.hasErrorReason() {
		return []string{"stop", "length", "abort"}
	}
	return []string{"stop", "length", "abort", "error"}
}

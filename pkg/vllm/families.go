package vllm

import (
	"regexp"
	"strings"
)

// FamilyPrefixes start the names of every family InferScope reads — vLLM's (vllm: and the Ascend profiler's
// vllm_), Dynamo's, LMCache's (lmcache: and the multi-process lmcache_mp_) and vLLM's under Ray Serve (ray_vllm) — so
// direct mode keeps just these from a scrape and Prometheus mode asks the server for just these.
var FamilyPrefixes = []string{"vllm:", "vllm_", "dynamo_", "lmcache:", "lmcache_", "ray_vllm"}

// ReadsFamily reports whether a family or sample name starts with one of FamilyPrefixes.
func ReadsFamily(name string) bool {
	for _, p := range FamilyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// FamilySelector is FamilyPrefixes as a PromQL series selector.
var FamilySelector = func() string {
	alts := make([]string, len(FamilyPrefixes))
	for i, p := range FamilyPrefixes {
		alts[i] = regexp.QuoteMeta(p) + ".+"
	}
	return `{__name__=~"` + strings.Join(alts, "|") + `"}`
}()

// RouterLabel is the label vLLM production-stack's router puts on the gauges it exports under vLLM's own names
// (vllm:num_requests_running, …_waiting, …_swapped, gpu_prefix_cache_hit_rate, gpu_prefix_cache_hits_total and
// …_queries_total, one series per backend server; src/vllm_router/services/metrics_service/__init__.py): look-alikes
// of the engines' series, which the engines' own endpoints report already.
const RouterLabel = "server"

// RouterLookalikes are the engine names the router exports too (its other vllm: names are its own).
var RouterLookalikes = map[string]bool{
	"vllm:num_requests_running": true, "vllm:num_requests_waiting": true, "vllm:num_requests_swapped": true,
	"vllm:gpu_prefix_cache_hit_rate": true, "vllm:gpu_prefix_cache_hits_total": true,
	"vllm:gpu_prefix_cache_queries_total": true,
}

// routerOwn reports whether a vllm: sample name is one of the router's own families (src/vllm_router/services/
// metrics_service/__init__.py), which no engine has.
func routerOwn(name string) bool {
	for _, p := range []string{"vllm:current_qps", "vllm:avg_decoding_length", "vllm:num_prefill_requests",
		"vllm:num_decoding_requests", "vllm:num_incoming_requests", "vllm:routing_decisions", "vllm:healthy_pods_total",
		"vllm:avg_latency", "vllm:avg_itl", "vllm:input_tokens", "vllm:output_tokens", "vllm:request_errors",
		"vllm:request_latency_seconds"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// RouterSeries reports whether a series is a router's look-alike rather than an engine's: one of RouterLookalikes
// carrying RouterLabel, which no vLLM engine sets. has reports whether the series carries a label.
func RouterSeries(name string, has func(label string) bool) bool {
	return RouterLookalikes[name] && has(RouterLabel)
}

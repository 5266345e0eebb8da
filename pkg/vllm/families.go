package vllm

import (
	"regexp"
	"strings"
)

// FamilyPrefixes start the names of every family InferScope reads — vLLM's (vllm: and the Ascend profiler's
// vllm_), Dynamo's, LMCache's (lmcache: and the multi-process lmcache_mp_) and vLLM's under Ray Serve (ray_vllm) — so
// direct mode keeps just these from a scrape and Prometheus mode asks the server for just these.
var FamilyPrefixes = []string{"vllm:", "vllm_", "dynamo_", "lmcache:", "lmcache_", "ray_vllm"}

// APIServerFamilies are the only other families of vLLM's API server InferScope reads, by exact name: the HTTP
// instrumentator's request counter and duration histogram, and prometheus_client's process collector (CPU, resident
// memory, open file descriptors, start time) — not every http_ or process_ family a server exposes.
var APIServerFamilies = []string{"http_requests_total", "http_request_duration_seconds", "process_cpu_seconds_total",
	"process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"}

// ReadsFamily reports whether a family or sample name starts with one of FamilyPrefixes or is one of
// APIServerFamilies (a counter's family with or without _total, a histogram's _bucket, _sum and _count samples).
func ReadsFamily(name string) bool {
	for _, p := range FamilyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return apiServerName(name)
}

func apiServerName(name string) bool {
	for _, f := range APIServerFamilies {
		if name == f || name == strings.TrimSuffix(f, "_total") {
			return true
		}
		if rest, ok := strings.CutPrefix(name, f); ok && (rest == "_bucket" || rest == "_sum" || rest == "_count") {
			return true
		}
	}
	return false
}

// APIServerSelector matches the series of APIServerFamilies as a PromQL series selector.
var APIServerSelector = func() string {
	var alts []string
	for _, f := range APIServerFamilies {
		alts = append(alts, regexp.QuoteMeta(f), regexp.QuoteMeta(f)+"_(bucket|sum|count)")
	}
	return `{__name__=~"` + strings.Join(alts, "|") + `"}`
}()

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

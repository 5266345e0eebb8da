package sim

import (
	"fmt"
	"math"
)

// routerFamilies renders vLLM production-stack's router in front of the local engines: each engine's running,
// waiting and swapped requests and GPU prefix-cache hit rate, hits and queries, as gauges labelled server (the
// engine's URL) under vLLM's own names; then the router's own request counter. Its hits and queries are gauges though
// named _total, as the router declares them.
func (f *Fleet) routerFamilies(x *exposition) {
	server := func(e *engine) label { return label{"server", fmt.Sprintf("http://engine-%d:8000", e.idx)} }
	gauge := func(name, help string, v func(*engine) float64) {
		fam := x.add(name, help, typeGauge, stylePython)
		for _, e := range f.local() {
			fam.set(v(e), server(e))
		}
	}
	gauge("vllm:num_requests_running", "Number of running requests", func(e *engine) float64 {
		return float64(len(e.running) - e.awaitingKV())
	})
	gauge("vllm:num_requests_waiting", "Number of waiting requests", func(e *engine) float64 {
		return float64(e.waiting.len() + e.awaitingKV())
	})
	gauge("vllm:gpu_prefix_cache_hit_rate", "GPU Prefix Cache Hit Rate", func(e *engine) float64 {
		return ratio(e.st.prefixHits, e.st.prefixQueries)
	})
	gauge("vllm:gpu_prefix_cache_hits_total", "Total GPU Prefix Cache Hits", func(e *engine) float64 { return e.st.prefixHits })
	gauge("vllm:gpu_prefix_cache_queries_total", "Total GPU Prefix Cache Queries", func(e *engine) float64 { return e.st.prefixQueries })
	gauge("vllm:num_requests_swapped", "Number of swapped requests", func(*engine) float64 { return 0 })
	incoming := 0.0
	for _, e := range f.local() {
		incoming += e.st.workerRequests
	}
	fam := x.add("vllm:num_incoming_requests", "Total valid incoming requests to router (including when no backends available).", typeCounter, stylePython)
	fam.set(math.Floor(incoming), label{"model", f.cfg.Model})
}

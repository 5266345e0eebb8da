package sim

import (
	"math"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// processFamilies renders what prometheus_client's default registry adds in a single-process API
// server: garbage-collector, platform and process collectors. The numbers follow a Python
// process hosting the vLLM API server, grown with uptime.
func (f *Fleet) processFamilies(x *exposition, st style) {
	up := f.uptime()
	gens := []string{"0", "1", "2"}
	gc := []struct {
		name, help string
		v          func(gen int) float64
	}{
		{"python_gc_objects_collected", "Objects collected during gc", func(g int) float64 {
			return math.Floor([]float64{7431, 4936, 1661}[g] + up*[]float64{38, 6, 0.4}[g])
		}},
		{"python_gc_objects_uncollectable", "Uncollectable objects found during GC", func(int) float64 { return 0 }},
		{"python_gc_collections", "Number of times this generation was collected", func(g int) float64 {
			return math.Floor([]float64{1151, 104, 6}[g] + up*[]float64{2.1, 0.19, 0.004}[g])
		}},
	}
	for _, c := range gc {
		fam := x.add(c.name, c.help, typeCounter, st)
		fam.noCreated = true
		for i, g := range gens {
			fam.set(c.v(i), label{"generation", g})
		}
	}
	x.add("python_info", "Python platform information", typeGauge, st).set(1,
		label{"implementation", "CPython"}, label{"major", "3"}, label{"minor", "12"},
		label{"patchlevel", "11"}, label{"version", "3.12.11"})

	running := 0.0
	for _, e := range f.local() {
		running += float64(len(e.running) + e.waiting.len())
	}
	start := float64(f.start.UnixNano()) / 1e9
	x.add("process_virtual_memory_bytes", "Virtual memory size in bytes.", typeGauge, st).set(3.2466944e10 + 4096*running*16)
	x.add("process_resident_memory_bytes", "Resident memory size in bytes.", typeGauge, st).set(2.718924800e9 + 4096*math.Floor(up/60))
	x.add("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", typeGauge, st).set(math.Floor(start*100) / 100)
	cpu := x.add("process_cpu_seconds", "Total user and system CPU time spent in seconds.", typeCounter, st)
	cpu.noCreated = true
	cpu.set(math.Floor((38.5+up*0.42)*100) / 100)
	x.add("process_open_fds", "Number of open file descriptors.", typeGauge, st).set(71 + math.Min(running, 400))
	x.add("process_max_fds", "Maximum number of open file descriptors.", typeGauge, st).set(1048576)
}

// httpFamilies renders prometheus-fastapi-instrumentator's request counter and duration histogram, which vLLM
// mounts on its API server (from the release the provenance table gives); /metrics and /health are excluded from
// them, as in vLLM.
func (f *Fleet) httpFamilies(x *exposition, st style) {
	if o, ok := vllm.Provenance("http_requests_total"); f.release != "" && ok && vllm.CompareReleases(f.release, o.First) < 0 {
		return
	}
	ok, failed := 0.0, 0.0
	duration := newHistogram(bucketsHTTPDuration)
	for _, e := range f.local() {
		duration.add(e.st.httpDuration)
		for reason, n := range e.st.success {
			if reason == "error" {
				failed += n
			} else {
				ok += n
			}
		}
	}
	fam := x.add("http_requests", "Total number of requests by method, status and handler.", typeCounter, st)
	fam.set(ok, label{"handler", "/v1/chat/completions"}, label{"method", "POST"}, label{"status", "2xx"})
	if failed > 0 {
		fam.set(failed, label{"handler", "/v1/chat/completions"}, label{"method", "POST"}, label{"status", "5xx"})
	}
	if duration.count > 0 {
		x.add("http_request_duration_seconds", "Latency with only few buckets by handler. Made to be only used if aggregation by handler is important.", typeHistogram, st).
			setHist(duration, label{"handler", "/v1/chat/completions"}, label{"method", "POST"})
	}
}

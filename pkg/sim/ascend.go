package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/symbols"
)

// ascendPrefix is msServiceProfiler's VLLM_METRICS_PREFIX; colons in names are kept.
const ascendPrefix = symbols.MetricPrefix

// defaultTimer is the custom timer the service_metrics_symbols.yaml msServiceProfiler ships declares.
const defaultTimer = ascendPrefix + "server:create_chat_completion:duration"

// customTimers are the timers the profiler records on this fleet: those of the symbols file active on the flavor's
// vLLM version, read once as the profiler reads it at vLLM's start, or the shipped file's one timer.
func customTimers(cfg Config) ([]string, error) {
	if cfg.SymbolsFile == "" {
		return []string{defaultTimer}, nil
	}
	fi, err := os.Stat(cfg.SymbolsFile)
	if err != nil {
		return nil, fmt.Errorf("symbols-file: %w", err)
	}
	if fi.Size() > symbols.MaxFileBytes {
		return nil, fmt.Errorf("symbols-file: over %d bytes", symbols.MaxFileBytes)
	}
	doc, err := os.ReadFile(cfg.SymbolsFile)
	if err != nil {
		return nil, fmt.Errorf("symbols-file: %w", err)
	}
	entries, err := symbols.Parse(doc)
	if err != nil {
		return nil, fmt.Errorf("symbols-file %s: %w", cfg.SymbolsFile, err)
	}
	return symbols.Timers(entries, cfg.servedVersion()), nil
}

// ascendDP is the dp label msServiceProfiler attaches: the DP rank of the engine process, or "-1"
// when there is no data parallelism (the DPEngineCoreProc hook that learns the rank never runs).
func (f *Fleet) ascendDP(e *engine) string {
	if f.cfg.Engines == 1 {
		return "-1"
	}
	return strconv.Itoa(e.idx)
}

// ascendFamilies renders the built-in vllm_profiling_* metrics (generation "A" of the tool,
// ms_service_profiler/patcher/vllm) and the default custom timer. The tool registers a metric on
// its first record and runs under PROMETHEUS_MULTIPROC_DIR, so a family appears only once it
// has data, and the output is the multiprocess collector's.
func (f *Fleet) ascendFamilies(x *exposition) {
	st := stylePythonMultiproc
	engines := f.local()
	dp := func(e *engine) label { return label{"dp", f.ascendDP(e)} }

	gauge := func(name string, v func(*engine) float64) {
		var fam *family
		for _, e := range engines {
			if !e.asc.recorded {
				continue
			}
			if fam == nil {
				fam = x.add(ascendPrefix+name, "Gauge for "+name, typeGauge, st)
			}
			fam.set(v(e), dp(e))
		}
	}
	hist := func(name string, h func(*ascendStats) *histogram) {
		var fam *family
		for _, e := range engines {
			hh := h(e.asc)
			if hh.count == 0 {
				continue
			}
			if fam == nil {
				fam = x.add(ascendPrefix+name, "Histogram for "+name, typeHistogram, st)
			}
			fam.setHist(hh, dp(e))
		}
	}
	counter := func(name string, seen func(*ascendStats) bool, v func(*ascendStats) float64) {
		var fam *family
		for _, e := range engines {
			if !seen(e.asc) {
				continue
			}
			if fam == nil {
				fam = x.add(ascendPrefix+name, "Counter for "+name, typeCounter, st)
			}
			fam.set(v(e.asc), dp(e))
		}
	}

	// Scheduler.make_stats runs before StatLoggerManager.record, so the KV gauges register first.
	gauge("total_kvcache_blocks", func(e *engine) float64 { return float64(e.kv.total) })
	gauge("free_kvcache_blocks", func(e *engine) float64 { return float64(e.kv.free()) })
	// allocated = total - free - 1: the null block is neither free nor allocated.
	gauge("allocated_kvcache_blocks", func(e *engine) float64 { return float64(e.kv.used) })
	hist("batch_size", func(a *ascendStats) *histogram { return a.batchSize })
	hist("waiting_batch_size", func(a *ascendStats) *histogram { return a.waitingBatchSize })
	if f.cfg.SpecTokens > 0 {
		k := float64(f.cfg.SpecTokens)
		gauge("num_spec_tokens", func(*engine) float64 { return k })
	}
	hist("total_tokens", func(a *ascendStats) *histogram { return a.totalTokens })
	hist("second_token_latency", func(a *ascendStats) *histogram { return a.secondTokenLatency })
	counter("input", func(a *ascendStats) bool { return a.inputSeen }, func(a *ascendStats) float64 { return a.input })
	counter("output", func(a *ascendStats) bool { return a.outputSeen }, func(a *ascendStats) float64 { return a.output })
	hist("fine_grained_ttft", func(a *ascendStats) *histogram { return a.fineTTFT })
	hist("fine_grained_tpot", func(a *ascendStats) *histogram { return a.fineTPOT })

	// The custom timer from service_metrics_symbols.yaml runs in the API-server process (dp=-1).
	timer := newHistogram(bucketsAscendTimer)
	for _, e := range engines {
		h := e.asc.chatCompletion
		for i, c := range h.counts {
			timer.counts[i] += c
		}
		timer.sum += h.sum
		timer.count += h.count
	}
	if timer.count > 0 {
		for _, full := range f.timers {
			name := strings.TrimPrefix(full, ascendPrefix)
			x.add(full, "Execution duration of "+name, typeHistogram, st).setHist(timer, label{"dp", "-1"})
		}
	}
}

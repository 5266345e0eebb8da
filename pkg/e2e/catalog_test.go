package e2e

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// catalogFleet is one simulator per flavor, each alone on its endpoint, with what every measure needs switched on
// (speculative decoding, failed requests); the endpoint is named after the flavor it impersonates, or the release it
// speaks exactly (vllm-0.25-*: the newest release read, so every measure is walked against it).
var catalogFleet = []struct {
	endpoint string
	flavor   vllm.Flavor
	args     []string
	raw      string   // a series the flavor exposes, for the raw entry
	old      bool     // vLLM 0.11 or older, without the catalog's Recent entries
	runs     []string // what the server runs besides its flavor (an entry's Needs)
	release  string   // the vLLM release the simulator speaks (-vllm-version): an output answers where it has a name
}{
	{"vllm-v1", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-engines=2", "-qps=20", "-spec-tokens=3", "-error-rate=0.05", "-seed=21", "-external-prefix-hit-rate=0.3", "-mm-items=2", "-mm-hit-rate=0.5"}, "vllm:num_requests_running", false, nil, ""},
	{"ray-vllm", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-ray", "-engines=2", "-qps=20", "-spec-tokens=3", "-error-rate=0.05", "-seed=18", "-external-prefix-hit-rate=0.3", "-mm-items=2", "-mm-hit-rate=0.5"}, "ray_vllm_num_requests_running", false, nil, ""},
	{"vllm-v1-0.10", vllm.FlavorV1, []string{"-flavor=vllm-v1-0.10", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=22"}, "vllm:gpu_cache_usage_perc", true, nil, ""},
	{"vllm-v0", vllm.FlavorV0, []string{"-flavor=vllm-v0", "-qps=8", "-spec-tokens=2", "-seed=23"}, "vllm:num_requests_swapped", true, nil, ""},
	{"vllm-ascend", vllm.FlavorAscend, []string{"-flavor=vllm-ascend", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=24", "-external-prefix-hit-rate=0.2", "-mm-items=1", "-mm-hit-rate=0.3"}, "vllm_profiling_free_kvcache_blocks", false, nil, ""},
	{"dynamo-worker", vllm.FlavorDynamoWorker, []string{"-flavor=dynamo-worker", "-engines=2", "-qps=8", "-spec-tokens=2", "-error-rate=0.05", "-seed=25", "-external-prefix-hit-rate=0.4", "-mm-items=3", "-mm-hit-rate=0.6"}, "dynamo_component_total_blocks", false, nil, ""},
	{"dynamo-frontend", vllm.FlavorDynamoFrontend, []string{"-flavor=dynamo-frontend", "-engines=2", "-qps=8", "-seed=26", "-prefix-hit-rate=0.4", "-migration-rate=0.05", "-error-rate=0.05"}, "dynamo_frontend_inflight_requests", false, nil, ""},
	{"vllm-v1-decode", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-fail-rate=0.05", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=27", "-external-prefix-hit-rate=0.2", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:nixl_num_failed_transfers_total", false, []string{measure.NeedsNIXL}, ""},
	{"vllm-v1-offload", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-kv-offload-gb=20", "-kv-offload-fail-rate=0.05", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=28", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:kv_offload_allocation_failure_total", false, []string{measure.NeedsOffload}, ""},
	{"vllm-v1-residency", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-kv-cache-metrics", "-prefix-hit-rate=0.5", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=30", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:kv_block_reuse_gap_seconds_bucket", false, []string{measure.NeedsKVCacheMetrics}, ""},
	{"vllm-v1-lmcache", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-lmcache", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=29", "-external-prefix-hit-rate=0.4", "-mm-items=1", "-mm-hit-rate=0.4"}, "lmcache:num_hit_tokens_total", false, []string{measure.NeedsLMCache}, ""},
	{"vllm-v1-lmcache-mp", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-lmcache-mp", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=20", "-external-prefix-hit-rate=0.4", "-mm-items=1", "-mm-hit-rate=0.4"}, "lmcache_mp_lookup_hit_l1_tokens_total", false, []string{measure.NeedsLMCacheMP}, ""},
	{"vllm-v1-sleep", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-sleep-level=1", "-sleep-cycle=2m", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=17", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:sleep_mode_operations_in_flight", false, []string{measure.NeedsSleepMode}, ""},
	{"vllm-0.11", vllm.FlavorV1, []string{"-vllm-version=0.11", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=15"}, "vllm:num_requests_running", false, nil, "0.11.0"},
	{"vllm-0.16-offload", vllm.FlavorV1, []string{"-vllm-version=0.16", "-kv-offload-gb=20", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=14", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:kv_offload_total_bytes_total", false, []string{measure.NeedsOffload}, "0.16.0"},
	{"vllm-0.20-decode", vllm.FlavorV1, []string{"-vllm-version=0.20", "-kv-role=decode", "-kv-transfer-fail-rate=0.05", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=13", "-external-prefix-hit-rate=0.2", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:nixl_num_failed_transfers_total", false, []string{measure.NeedsNIXL}, "0.20.1"},
	{"vllm-0.25-offload", vllm.FlavorV1, []string{"-vllm-version=0.25", "-kv-offload-gb=20", "-kv-offload-fail-rate=0.05", "-kv-cache-metrics", "-prefix-hit-rate=0.5", "-mfu", "-nan-logits-rate=0.01", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=12", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:kv_offload_load_bytes_total", false, []string{measure.NeedsOffload, measure.NeedsKVCacheMetrics, measure.NeedsMFU, measure.NeedsNaNCheck}, "0.25.1"},
	{"vllm-0.25-decode", vllm.FlavorV1, []string{"-vllm-version=0.25", "-kv-role=decode", "-kv-transfer-fail-rate=0.05", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=11", "-external-prefix-hit-rate=0.2", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:nixl_num_failed_transfers_total", false, []string{measure.NeedsNIXL}, "0.25.1"},
	{"vllm-v1-mfu", vllm.FlavorV1, []string{"-flavor=vllm-v1", "-mfu", "-nan-logits-rate=0.01", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=19", "-external-prefix-hit-rate=0.3", "-mm-items=1", "-mm-hit-rate=0.4"}, "vllm:estimated_flops_per_gpu_total", false, []string{measure.NeedsMFU, measure.NeedsNaNCheck}, ""},
}

// TestCatalogWalk evaluates every catalog entry on every flavor's simulator, and on simulators speaking a release
// exactly (an output answers there where the release has one of its names), in direct mode and through the
// generated PromQL on a real Prometheus holding the same samples (backfilled; Prometheus 2.42 and 3, see layouts). On the flavors the entry lists,
// both modes must answer and agree within TestPrometheusModeMatchesDirectOnSameSamples's tolerances (1e-9
// relative, 1e-6 for quantiles); on the others both must answer nothing — so an entry's flavor list is true.
func TestCatalogWalk(t *testing.T) {
	t.Parallel() // see doc.go
	onEngines(t, catalogArgs(), 12*time.Minute, true, nil, walkCatalog)
}

// catalogArgs are the simulator flags of catalogFleet by endpoint.
func catalogArgs() map[string][]string {
	args := map[string][]string{}
	for _, f := range catalogFleet {
		args[f.endpoint] = f.args
	}
	return args
}

// walkCatalog evaluates every entry on every flavor's endpoint in both modes (see TestCatalogWalk).
func walkCatalog(t *testing.T, run *simRun, prom *promtest.Server) {
	walkCatalogWith(t, run, prom, nil)
}

// walkCatalogWith is walkCatalog with a comparison of the values of rate-based entries (nil: exact, point by point);
// it returns false for entries whose values it compares itself.
func walkCatalogWith(t *testing.T, run *simRun, prom *promtest.Server, rateCheck func(t *testing.T, e *measure.Entry, direct, other []query.Output) bool) {
	modes := newBothModes(run, prom)

	for _, e := range measure.Catalog {
		if e.Type == query.TypeDiagnosis || e.Type == query.TypePromQL || (query.Query{QueryType: e.Type, Measure: e.Name}).Composed() {
			continue // not formulas: diagnosis reads the other entries, promql is the user's; the data source composes P/D TTFT and LoRA (TestRolesInBothModes, TestLoRAInBothModes)
		}
		for _, f := range catalogFleet {
			t.Run(string(e.Type)+"/"+e.Name+"/"+f.endpoint, func(t *testing.T) {
				q := query.Query{QueryType: e.Type, Measure: e.Name, Endpoint: f.endpoint}
				switch e.Type {
				case query.TypeLatency:
					q.Metric = "ttft"
					threshold := 0.3 // between bounds: the interpolation is compared, not just a bucket's count
					q.Threshold = &threshold
				case query.TypeRaw:
					q.Metric = f.raw
				}
				direct, ans := modes.eval(t, q)
				if !slices.Contains(e.Flavors, f.flavor) || e.Recent && f.old || !runsWhatItNeeds(f.runs, e.Needs) ||
					f.release != "" && !slices.ContainsFunc(e.Outputs, func(o measure.Output) bool { return releaseHas(f.release, o) }) {
					if len(direct.Outputs) > 0 || len(ans.Result.Outputs) > 0 {
						t.Errorf("%s is not listed for %s (or is marked recent), but direct mode returns %d series and Prometheus mode %d",
							e.Name, f.endpoint, len(direct.Outputs), len(ans.Result.Outputs))
					}
					return
				}
				if len(direct.Outputs) == 0 {
					t.Fatalf("%s lists %s, but direct mode returns nothing: %v", e.Name, f.flavor, direct.Notices)
				}
				for _, o := range e.Outputs {
					name, _ := o.Resolve(q.Metric, "")
					if o.Flavors != nil && !slices.Contains(o.Flavors, f.flavor) || f.release != "" && !releaseHas(f.release, o) {
						if slices.ContainsFunc(direct.Outputs, func(out query.Output) bool { return out.Measure == name }) {
							t.Errorf("%s: output %s is not listed for %s, but direct mode returns it", e.Name, name, f.flavor)
						}
						continue
					}
					if name != "" && !slices.ContainsFunc(direct.Outputs, func(out query.Output) bool { return out.Measure == name }) {
						t.Errorf("%s lists %s, but direct mode has no %s series", e.Name, f.flavor, name)
					}
				}
				tol := 1e-9
				if e.Type == query.TypeLatency {
					tol = 1e-6
				}
				var ok valueTolerance
				if rateCheck != nil && rateCheck(t, e, direct.Outputs, ans.Result.Outputs) {
					ok = func(string, float64, float64) bool { return true } // series, labels and units still compared
				}
				if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, tol, ok); n == 0 {
					t.Errorf("nothing compared")
				}
				if t.Failed() {
					t.Logf("PromQL:\n%s", ans.PromQL())
				}
			})
		}
	}
}

// releaseHas reports whether a release has a name an output reads, as the provenance table says (names of other
// projects and outputs that read no signal of their own count as had).
func releaseHas(release string, o measure.Output) bool {
	sigs := (&measure.Entry{Outputs: []measure.Output{o}}).Signals()
	if len(sigs) == 0 {
		return true
	}
	for _, s := range sigs {
		for _, n := range s.Names {
			p, ok := vllm.Provenance(n)
			switch {
			case !ok || p.Ray:
			case p.Project != vllm.ProjectVLLM:
				return true
			case p.Unreleased == "" && p.First != "" && vllm.CompareReleases(release, p.First) >= 0 &&
				(p.Last == "" || vllm.CompareReleases(release, p.Last) <= 0):
				return true
			}
		}
	}
	return false
}

// runsWhatItNeeds reports whether a server running runs has one of what an entry needs (or it needs nothing).
func runsWhatItNeeds(runs, needs []string) bool {
	return len(needs) == 0 || slices.ContainsFunc(needs, func(n string) bool { return slices.Contains(runs, n) })
}

// TestCatalogWalkVictoriaMetrics walks the catalog on VictoriaMetrics. Its rate() neither extrapolates nor leaves
// out the sample before the window, so rate-based values are compared as means over the range (victoriaRates);
// everything else — which series, their labels and units, and every gauge value — must be exactly as in direct mode.
func TestCatalogWalkVictoriaMetrics(t *testing.T) {
	t.Parallel() // see doc.go
	onEngines(t, catalogArgs(), 12*time.Minute, true, func(layout) []promtest.Engine { return []promtest.Engine{promtest.VictoriaMetrics} },
		func(t *testing.T, run *simRun, prom *promtest.Server) { walkCatalogWith(t, run, prom, victoriaRates) })
}

// victoriaRates compares rate-based entries on VictoriaMetrics per series, as means over the range: its rate()
// neither extrapolates nor leaves out the sample before the window, which moves single values of sparse counters
// by 100 % and more, but not their level. Means must agree within 25 % or 0.05 absolute (a rate near zero); gauges
// are left to the exact comparison.
func victoriaRates(t *testing.T, e *measure.Entry, direct, vm []query.Output) bool {
	rates := measure.ReadsRates(e.Outputs) || e.Type == query.TypeDPBalance // balance scores over rate loads
	if !rates {
		return false
	}
	mean := func(outs []query.Output) map[string]float64 {
		m := map[string]float64{}
		for _, o := range outs {
			if len(o.Points) == 0 {
				continue
			}
			var sum float64
			for _, p := range o.Points {
				sum += p.V
			}
			m[outputKey(o)] = sum / float64(len(o.Points))
		}
		return m
	}
	dm, vmm := mean(direct), mean(vm)
	for k, d := range dm {
		v, ok := vmm[k]
		if !ok {
			continue // compareOutputs reports missing series
		}
		if diff := math.Abs(d - v); diff > 0.05 && diff > 0.25*math.Max(math.Abs(d), math.Abs(v)) {
			t.Errorf("%s: mean over the range %v in direct mode, %v on VictoriaMetrics", k, d, v)
		}
	}
	return true
}

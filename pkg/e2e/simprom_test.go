package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// simRun steps simulators of every flavor through the same timeline, recording each scrape into a history store
// (what direct mode answers from) and into OpenMetrics text for promtool (what Prometheus answers from).
type simRun struct {
	store      *history.Store
	om         map[string]map[string][]string // sample name -> label set -> "value ts" lines
	start, end time.Time
}

// layout is where a comparison with a real Prometheus puts the scrapes relative to the query steps, and which
// Prometheus versions it compares with there.
type layout struct {
	name    string
	offset  time.Duration // of every scrape from the whole 5 s marks the steps fall on
	engines []promtest.Engine
}

// layouts compare on step boundaries, where every rate window starts exactly on a sample, with Prometheus 3 only:
// direct mode follows 3's left-open windows, 2.42's are left-closed (TestWindowBoundaryAgainstEngines in pkg/derive
// pins 2.42's answers there). Off the boundaries both versions agree, and both are compared with unchanged
// tolerances.
var layouts = []layout{
	{"on step boundaries", 0, []promtest.Engine{promtest.Prometheus3}},
	{"off step boundaries", 2 * time.Second, []promtest.Engine{promtest.Prometheus2, promtest.Prometheus3}},
}

// onEngines runs check for each layout on a simulated fleet of those flavors, against each of the engines
// (engines(l), or the layout's own) holding the same samples; instance names the endpoint label as Prometheus mode
// expects.
func onEngines(t *testing.T, flavors map[string][]string, duration time.Duration, instance bool, engines func(layout) []promtest.Engine,
	check func(t *testing.T, run *simRun, prom *promtest.Server)) {
	for _, l := range layouts {
		want := l.engines
		if engines != nil {
			want = engines(l)
		}
		present := promtest.EnginesOf(t, want...)
		if len(present) == 0 {
			continue // no run stepped for a layout nothing is compared on
		}
		run := newSimRunAt(t, flavors, duration, 5*time.Second, l.offset)
		om := run.openMetrics()
		if instance {
			om = strings.ReplaceAll(om, `{endpoint="`, `{instance="`)
		}
		for _, engine := range present {
			t.Run(l.name+"/"+engine.String(), func(t *testing.T) {
				check(t, run, promtest.Start(t, promtest.Options{Engine: engine, OpenMetrics: om}))
			})
		}
	}
}

// newSimRunAt steps simulators of the given flavors (by endpoint name) for duration, scraped every interval with
// every scrape offset from the whole 5 s marks the query steps fall on. A run is stepped once per test binary and
// shared: the catalog's fleet is walked on Prometheus, VictoriaMetrics and the scale-out engines, and stepping it
// under the race detector took longer than any of those comparisons (about 95 s a run on the 2-core VM). Tests
// only read a run (its store answers concurrent queries as the plugin's does).
func newSimRunAt(t testing.TB, flavors map[string][]string, duration, interval, offset time.Duration) *simRun {
	t.Helper()
	key := fmt.Sprint(flavors, duration, interval, offset) // fmt prints a map's keys sorted
	sharedRuns.Lock()
	step, ok := sharedRuns.byKey[key]
	if !ok {
		step = sync.OnceValues(func() (*simRun, error) {
			return stepSimRun(flavors, time.Now().Add(-3*time.Hour).Truncate(time.Minute).Add(offset), duration, interval)
		})
		sharedRuns.byKey[key] = step
	}
	sharedRuns.Unlock()
	run, err := step() // the first test to ask steps the run; the others wait for it
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// sharedRuns are newSimRunAt's runs by fleet and timeline.
var sharedRuns = struct {
	sync.Mutex
	byKey map[string]func() (*simRun, error)
}{byKey: map[string]func() (*simRun, error){}}

// newSimRunFrom is newSimRunAt from a given start, stepped for the caller alone.
func newSimRunFrom(t testing.TB, flavors map[string][]string, start time.Time, duration, interval time.Duration) *simRun {
	t.Helper()
	r, err := stepSimRun(flavors, start, duration, interval)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stepSimRun steps the simulators from start for duration, scraped every interval.
func stepSimRun(flavors map[string][]string, start time.Time, duration, interval time.Duration) (*simRun, error) {
	r := &simRun{store: history.New(history.Options{Retention: 24 * time.Hour}), om: map[string]map[string][]string{}}
	r.start, r.end = start, start.Add(duration)
	names := make([]string, 0, len(flavors))
	for n := range flavors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, ep := range names {
		cfg, err := sim.ParseArgs(flavors[ep], func(string) string { return "" }, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ep, err)
		}
		fleet, err := sim.NewFleet(cfg, r.start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ep, err)
		}
		fleet.SetProfilingEnabled(true)
		for el := time.Duration(0); el <= duration; el += interval {
			fleet.AdvanceTo(el)
			var buf bytes.Buffer
			if err := fleet.WriteExposition(&buf); err != nil {
				return nil, fmt.Errorf("%s at %s: %w", ep, el, err)
			}
			sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{})
			if err != nil {
				return nil, fmt.Errorf("%s at %s: %w", ep, el, err)
			}
			ts := r.start.Add(el).UnixMilli()
			r.store.Append(ep, ts, sc)
			r.record(ep, ts, sc)
		}
	}
	return r, nil
}

func (r *simRun) record(endpoint string, ts int64, sc *exposition.Scrape) {
	for _, f := range sc.Families {
		for _, s := range f.Samples {
			if !vllm.ReadsFamily(s.Name) {
				continue
			}
			if strings.HasSuffix(s.Name, "_created") {
				continue
			}
			var lb strings.Builder
			fmt.Fprintf(&lb, "endpoint=%q", endpoint)
			for _, l := range s.Labels {
				fmt.Fprintf(&lb, ",%s=%q", l.Name, l.Value)
			}
			if r.om[s.Name] == nil {
				r.om[s.Name] = map[string][]string{}
			}
			r.om[s.Name][lb.String()] = append(r.om[s.Name][lb.String()],
				strconv.FormatFloat(s.Value, 'g', -1, 64)+" "+strconv.FormatInt(ts/1000, 10))
		}
	}
}

func (r *simRun) openMetrics() string {
	var b strings.Builder
	names := make([]string, 0, len(r.om))
	for n := range r.om {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "# TYPE %s unknown\n", n)
		sets := make([]string, 0, len(r.om[n]))
		for l := range r.om[n] {
			sets = append(sets, l)
		}
		sort.Strings(sets)
		for _, l := range sets {
			for _, line := range r.om[n][l] {
				fmt.Fprintf(&b, "%s{%s} %s\n", n, l, line)
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// TestSimulatorMathMatchesPrometheus runs the seed documents' panel queries over simulated V1 (DP=4, skewed,
// spec decoding), V0, vLLM-Ascend (DP=2) and Dynamo traffic, in direct mode and in Prometheus 2.42 on the same
// samples. Tolerance: 1e-9 relative for gauges, rates and ratios; 1e-6 for quantiles, whose interpolation
// amplifies last-bit differences in summed bucket rates.
func TestSimulatorMathMatchesPrometheus(t *testing.T) {
	t.Parallel() // see doc.go
	flavors := map[string][]string{
		"v1":     {"-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-qps=30", "-spec-tokens=3", "-seed=11"},
		"v0":     {"-flavor=vllm-v0", "-qps=6", "-seed=12"},
		"ascend": {"-flavor=vllm-ascend", "-engines=2", "-qps=10", "-seed=13"},
		"dynamo": {"-flavor=dynamo-worker", "-qps=8", "-seed=14"},
	}
	// The same assertions on Prometheus 2.42 and 3, where each agrees with direct mode (see layouts).
	onEngines(t, flavors, 20*time.Minute, false, nil, simulatorMathMatchesPrometheus)
}

func simulatorMathMatchesPrometheus(t *testing.T, run *simRun, prom *promtest.Server) {
	eng := &query.Engine{Source: query.HistorySource{Store: run.store}, ScrapeInterval: 5 * time.Second}
	req := query.Request{From: run.start.Add(2 * time.Minute), To: run.end, Interval: 10 * time.Second}

	byEngine := []string{"endpoint", "model_name", "engine"}
	cases := []struct {
		name    string
		q       query.Query
		promql  string
		measure string
		keep    []string
		tol     float64
	}{
		{"TTFT p95 (seed panel 1)", query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}},
			`histogram_quantile(0.95, sum by (le, endpoint, model_name, engine) (rate({__name__=~"vllm:time_to_first_token_seconds_bucket"}[$w])))`, "ttft", byEngine, 1e-6},
		{"TPOT p95 (seed panel 1)", query.Query{QueryType: query.TypeLatency, Metric: "itl", Quantiles: []float64{0.95}, Endpoint: "v1|ascend|dynamo"},
			`histogram_quantile(0.95, sum by (le, endpoint, model_name, engine) (rate(vllm:inter_token_latency_seconds_bucket[$w])))`, "itl", byEngine, 1e-6},
		{"generation tokens/s (seed panel 2)", query.Query{QueryType: query.TypeThroughput, Measure: "generation_tokens"},
			`sum by (endpoint, model_name, engine) (rate(vllm:generation_tokens_total[$w]))`, "generation_tokens_per_second", byEngine, 1e-9},
		{"waiting (seed panel 3)", query.Query{QueryType: query.TypeQueue, Measure: "waiting"},
			`sum by (endpoint, model_name, engine) (vllm:num_requests_waiting)`, "waiting", byEngine, 1e-9},
		{"running (seed panel 3)", query.Query{QueryType: query.TypeQueue, Measure: "running"},
			`sum by (endpoint, model_name, engine) (vllm:num_requests_running)`, "running", byEngine, 1e-9},
		{"KV usage V1 (seed panel 4)", query.Query{QueryType: query.TypeKVCacheUsage, Endpoint: "v1|dynamo"},
			`avg by (endpoint, model_name, engine) (vllm:kv_cache_usage_perc{endpoint=~"v1|dynamo"}) * 100`, "kv_usage", byEngine, 1e-9},
		{"KV usage V0", query.Query{QueryType: query.TypeKVCacheUsage, Endpoint: "v0"},
			`avg by (endpoint, model_name) (vllm:gpu_cache_usage_perc{endpoint="v0"}) * 100`, "kv_usage", []string{"endpoint", "model_name"}, 1e-9},
		{"KV usage Ascend 1 - free/total per dp", query.Query{QueryType: query.TypeKVCacheUsage, Endpoint: "ascend"},
			`(1 - sum by (endpoint, dp) (vllm_profiling_free_kvcache_blocks) / sum by (endpoint, dp) (vllm_profiling_total_kvcache_blocks)) * 100`,
			"kv_usage", []string{"endpoint", "dp"}, 1e-9},
		{"preemptions/s (seed panel 4)", query.Query{QueryType: query.TypeCache, Measure: "preemptions"},
			`sum by (endpoint, model_name, engine) (rate(vllm:num_preemptions_total[$w]))`, "preemptions_per_second", byEngine, 1e-9},
		{"spec acceptance rate", query.Query{QueryType: query.TypeSpecDecode, Measure: "acceptance_rate", Endpoint: "v1"},
			`sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_accepted_tokens_total[$w])) / sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_draft_tokens_total[$w]))`,
			"acceptance_rate", byEngine, 1e-9},
		{"DP imbalance max/mean (running)", query.Query{QueryType: query.TypeDPBalance, Measure: "running", Endpoint: "v1"},
			`max(vllm:num_requests_running{endpoint="v1"}) / avg(vllm:num_requests_running{endpoint="v1"})`, "max_over_mean", nil, 1e-9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := eng.Eval(context.Background(), tc.q, req)
			if err != nil {
				t.Fatal(err)
			}
			ours := promtest.Values{}
			for _, o := range res.Outputs {
				if o.Measure != tc.measure {
					continue
				}
				k := promtest.Key(o.Labels, tc.keep)
				ours[k] = map[int64]float64{}
				for _, p := range o.Points {
					ours[k][p.T] = p.V
				}
			}
			step := res.Step.Milliseconds()
			from, to := req.From.UnixMilli()/step*step, req.To.UnixMilli()/step*step
			compared := prom.CompareRange(t, strings.ReplaceAll(tc.promql, "$w", model.Duration(res.Window).String()),
				time.UnixMilli(from), time.UnixMilli(to), res.Step, ours, tc.keep, tc.tol)
			t.Logf("%d values over %d series agree", compared, len(ours))
		})
	}
}

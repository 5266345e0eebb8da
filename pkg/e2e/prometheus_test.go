package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// promModeQueries is every query type and measure of direct mode, with the groupings dashboards use.
func promModeQueries() []query.Query {
	var out []query.Query
	types := []query.Type{query.TypeKVCacheUsage, query.TypeSpecDecode, query.TypeDPBalance, query.TypeThroughput,
		query.TypeQueue, query.TypeCache, query.TypeCapacity}
	for _, t := range types {
		for _, m := range query.Measures[t] {
			out = append(out, query.Query{QueryType: t, Measure: m})
		}
	}
	for _, g := range []query.Group{query.GroupEndpoint, query.GroupModel, query.GroupFleet} {
		out = append(out,
			query.Query{QueryType: query.TypeThroughput, GroupBy: g},
			query.Query{QueryType: query.TypeQueue, Measure: "running", GroupBy: g},
			query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.99}, GroupBy: g},
			query.Query{QueryType: query.TypeDPBalance, Measure: "running_waiting", GroupBy: g},
			// V1 endpoints only: where a model or fleet mixes V0's gauge with V1's counters, direct mode returns
			// two series with the same labels, which no PromQL answer can hold.
			query.Query{QueryType: query.TypeCache, Measure: "prefix_hit_rate", GroupBy: g, Endpoint: "v1.*"},
			// Both modes sum a raw metric over the group (direct mode used to return one series per endpoint).
			query.Query{QueryType: query.TypeRaw, Metric: "vllm:num_requests_running", GroupBy: g},
			query.Query{QueryType: query.TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: "quantiles", Quantiles: []float64{0.9}, GroupBy: g, Endpoint: "v1.*"},
			// Several quantiles per model or fleet are taken from one answer of summed bucket rates (promapi.BucketQuantiles).
			query.Query{QueryType: query.TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: "quantiles", Quantiles: []float64{0.5, 0.9, 0.99}, GroupBy: g},
			query.Query{QueryType: query.TypeLatency, Metric: "itl", Quantiles: []float64{0.5, 0.95, 0.99}, GroupBy: g},
		)
		// A score query returns that score only (Prometheus mode used to return every load and score).
		for _, score := range query.BalanceScores {
			out = append(out, query.Query{QueryType: query.TypeDPBalance, Measure: "running_waiting", Score: score, GroupBy: g})
		}
	}
	for _, m := range []string{"ttft", "itl", "e2e", "queue", "request_tpot", "ascend_fine_ttft", "ascend_batch_size",
		"timer:vllm_profiling_server:create_chat_completion:duration"} {
		out = append(out, query.Query{QueryType: query.TypeLatency, Metric: m}, query.Query{QueryType: query.TypeLatency, Metric: m, Measure: "mean"})
	}
	out = append(out,
		query.Query{QueryType: query.TypeKVCacheUsage, Endpoint: "v1.*", Engine: "1|2"},
		query.Query{QueryType: query.TypeThroughput, Measure: "requests", Model: ".+"},
		query.Query{QueryType: query.TypeRaw, Metric: "vllm:num_requests_waiting"},
		query.Query{QueryType: query.TypeRaw, Metric: "vllm:num_requests_running", GroupBy: query.GroupEndpoint},
		query.Query{QueryType: query.TypeRaw, Metric: "vllm:kv_cache_usage_perc", Labels: map[string]string{"engine": "0"}},
		query.Query{QueryType: query.TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: "buckets", Endpoint: "v1"},
		query.Query{QueryType: query.TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: "quantiles", Quantiles: []float64{0.9}},
	)
	return out
}

// TestPrometheusModeMatchesDirectOnSameSamples runs every query type through the generated PromQL on a real
// Prometheus holding exactly the samples direct mode answers from (simulators of every flavor, backfilled with
// promtool, endpoint names as the instance label). Series sets must be identical and values agree to 1e-9
// relative (1e-6 for quantiles, whose interpolation amplifies last-bit differences of summed bucket rates),
// as in TestSimulatorMathMatchesPrometheus.
func TestPrometheusModeMatchesDirectOnSameSamples(t *testing.T) {
	t.Parallel() // see doc.go
	// The same assertions on Prometheus 2.42 and 3, where each agrees with direct mode (see layouts).
	onEngines(t, modeFleet, 15*time.Minute, true, nil, prometheusModeMatchesDirect)
}

// modeFleet is TestPrometheusModeMatchesDirectOnSameSamples's simulators by endpoint.
var modeFleet = map[string][]string{
	"v1":       {"-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-qps=30", "-spec-tokens=3", "-seed=11"},
	"v1-pid":   {"-flavor=vllm-v1", "-engines=2", "-api-server-processes=2", "-qps=10", "-seed=15"},
	"v1-0.10":  {"-flavor=vllm-v1-0.10", "-engines=2", "-qps=10", "-seed=16"},
	"v0":       {"-flavor=vllm-v0", "-qps=6", "-seed=12", "-spec-tokens=2"},
	"ascend":   {"-flavor=vllm-ascend", "-engines=2", "-qps=10", "-seed=13", "-spec-tokens=2"},
	"dynamo":   {"-flavor=dynamo-worker", "-engines=2", "-qps=8", "-seed=14"},
	"frontend": {"-flavor=dynamo-frontend", "-qps=8", "-seed=17"},
}

// bothModes answers a query over a simulated run in direct mode (its history) and in Prometheus mode (the generated
// PromQL on a server holding the same samples), over the range every comparison uses.
type bothModes struct {
	eng *query.Engine
	ev  *promapi.Evaluator
	req query.Request
	// external is a server's external label that raw series keep and direct mode cannot have (a shard's), left
	// out of Prometheus mode's outputs before they are compared (mergeExternal).
	external string
}

func newBothModes(run *simRun, prom *promtest.Server) bothModes {
	client := &promapi.Client{BaseURL: prom.URL, HTTP: dataSourceHTTP(prom)}
	external := ""
	if prom.Engine == promtest.ThanosShards {
		external = promtest.ShardLabel
	}
	return bothModes{
		external: external,
		eng:      &query.Engine{Source: query.HistorySource{Store: run.store}, ScrapeInterval: 5 * time.Second},
		ev:       &promapi.Evaluator{Client: client, Discovery: &promapi.Discovery{Client: client, Lookback: 24 * time.Hour}, ScrapeInterval: 5 * time.Second},
		req:      query.Request{From: run.start.Add(2 * time.Minute), To: run.end, Interval: 10 * time.Second},
	}
}

// mergeExternal leaves label out of every output and sums the outputs that then coincide, point by point: a raw
// query grouped wider than the endpoint (sum without (job, instance, …)) keeps a shard's external label and so
// answers one partial sum per shard (README "Engines").
func mergeExternal(outs []query.Output, label string) []query.Output {
	var merged []query.Output
	at := map[string]int{}
	for _, o := range outs {
		delete(o.Labels, label)
		k := outputKey(o)
		i, ok := at[k]
		if !ok {
			at[k] = len(merged)
			merged = append(merged, o)
			continue
		}
		sum := map[int64]float64{}
		for _, p := range merged[i].Points {
			sum[p.T] += p.V
		}
		for _, p := range o.Points {
			sum[p.T] += p.V
		}
		pts := make([]derive.Point, 0, len(sum))
		for t, v := range sum {
			pts = append(pts, derive.Point{T: t, V: v})
		}
		sort.Slice(pts, func(a, b int) bool { return pts[a].T < pts[b].T })
		merged[i].Points = pts
	}
	return merged
}

// direct answers q in direct mode, the way pkg/role and pkg/lora call a data source's mode.
func (b bothModes) direct(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
	return b.eng.Eval(ctx, q, r)
}

// prometheus answers q in Prometheus mode, the way pkg/role and pkg/lora call a data source's mode.
func (b bothModes) prometheus(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
	ans, err := b.ev.Eval(ctx, q, r)
	if err != nil {
		return nil, err
	}
	return ans.Result, nil
}

// eval answers q in both modes, failing the test (with the PromQL) when either mode fails.
func (b bothModes) eval(t *testing.T, q query.Query) (*query.Result, *promapi.Answer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	direct, err := b.eng.Eval(ctx, q, b.req)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := b.ev.Eval(ctx, q, b.req)
	if err != nil {
		t.Fatalf("%v\n%s", err, ansPromQL(ans))
	}
	if b.external != "" {
		ans.Result.Outputs = mergeExternal(ans.Result.Outputs, b.external)
	}
	return direct, ans
}

func prometheusModeMatchesDirect(t *testing.T, run *simRun, prom *promtest.Server) {
	modes := newBothModes(run, prom)

	for _, q := range promModeQueries() {
		name := fmt.Sprintf("%s/%s/%s/%s", q.QueryType, q.Measure, q.Metric, q.GroupBy)
		t.Run(name, func(t *testing.T) {
			direct, ans := modes.eval(t, q)
			tol := 1e-9
			if q.QueryType == query.TypeLatency || q.Histogram == "quantiles" {
				tol = 1e-6
			}
			n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, tol, nil)
			if n == 0 && len(direct.Outputs) > 0 {
				t.Errorf("nothing compared")
			}
			t.Logf("%d values over %d series agree", n, len(direct.Outputs))
			if t.Failed() {
				t.Logf("PromQL:\n%s", ans.PromQL())
			}
		})
	}
}

func ansPromQL(a *promapi.Answer) string {
	if a == nil {
		return ""
	}
	return a.PromQL()
}

func outputKey(o query.Output) string {
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(o.Measure + "{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s=%q", k, o.Labels[k])
	}
	return b.String() + "}"
}

// valueTolerance says whether two values of one series at one instant agree.
type valueTolerance func(key string, direct, prom float64) bool

// compareOutputs checks that both modes return the same series (measure and labels) with the same units and
// values at the same instants; ok overrides the relative tolerance when set. It returns how many values matched.
func compareOutputs(t *testing.T, direct, prom []query.Output, tol float64, ok valueTolerance) int {
	t.Helper()
	index := func(outs []query.Output) map[string]query.Output {
		m := map[string]query.Output{}
		for _, o := range outs {
			k := outputKey(o)
			if prev, dup := m[k]; dup {
				o.Points = append(append([]derive.Point(nil), prev.Points...), o.Points...)
			}
			m[k] = o
		}
		return m
	}
	d, p := index(direct), index(prom)
	var missing, extra []string
	for k := range d {
		if _, ok := p[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range p {
		if _, ok := d[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("series only direct mode returns: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("series only Prometheus mode returns: %v", extra)
	}
	compared, bad := 0, 0
	for k, do := range d {
		po, found := p[k]
		if !found {
			continue
		}
		if do.Unit != po.Unit {
			t.Errorf("%s: unit %q in direct mode, %q in Prometheus mode", k, do.Unit, po.Unit)
		}
		pv := map[int64]float64{}
		for _, pt := range po.Points {
			pv[pt.T] = pt.V
		}
		for _, pt := range do.Points {
			v, found := pv[pt.T]
			if !found {
				if ok == nil {
					bad++
					if bad < 10 {
						t.Errorf("%s at %s: direct %v, Prometheus mode has no value", k, time.UnixMilli(pt.T).UTC().Format(time.TimeOnly), pt.V)
					}
				}
				continue
			}
			good := pt.V == v || math.Abs(pt.V-v) <= tol*math.Max(math.Abs(pt.V), math.Abs(v))
			if ok != nil {
				good = ok(k, pt.V, v)
			}
			if !good {
				bad++
				if bad < 10 {
					t.Errorf("%s at %s: direct %v, Prometheus mode %v", k, time.UnixMilli(pt.T).UTC().Format(time.TimeOnly), pt.V, v)
				}
			}
			compared++
		}
		if ok == nil && len(po.Points) > len(do.Points) {
			t.Errorf("%s: Prometheus mode has %d values, direct mode %d", k, len(po.Points), len(do.Points))
		}
	}
	if bad >= 10 {
		t.Errorf("%d mismatches in all", bad)
	}
	return compared
}

// frameOutputs reads harness frames back into outputs: value field name as measure, its labels and unit.
func frameOutputs(frames data.Frames) []query.Output {
	var outs []query.Output
	for _, f := range frames {
		if len(f.Fields) < 2 {
			continue
		}
		o := query.Output{Measure: f.Fields[1].Name, Labels: map[string]string{}}
		for k, v := range f.Fields[1].Labels {
			o.Labels[k] = v
		}
		if c := f.Fields[1].Config; c != nil {
			o.Unit = c.Unit
		}
		for i := 0; i < f.Rows(); i++ {
			ts, _ := f.Fields[0].ConcreteAt(i)
			v, _ := f.Fields[1].FloatAt(i)
			o.Points = append(o.Points, derive.Point{T: ts.(time.Time).UnixMilli(), V: v})
		}
		outs = append(outs, o)
	}
	return outs
}

// healthUntil asks pc's health until done accepts the answer or ctx ends, and returns the last answer; a failed
// call fails the test.
func healthUntil(ctx context.Context, t *testing.T, p *harness.Plugin, pc *pluginv2.PluginContext, done func(*backend.CheckHealthResult) bool) *backend.CheckHealthResult {
	t.Helper()
	var h *backend.CheckHealthResult
	var err error
	poll(ctx, func() bool {
		h, err = p.CheckHealth(ctx, pc)
		return err != nil || done(h)
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPrometheusModeLiveMatchesDirect runs simulators of every flavor, a real Prometheus scraping them every
// second and the built data source twice through the protocol harness — once in direct mode scraping the same
// simulators (endpoints named like Prometheus's instance label), once in Prometheus mode — and queries every
// type over the same range in both. The frames must hold the same series (value field name, labels, unit).
// Values come from different scrapes (our scraper and Prometheus sample the simulators at different moments,
// up to one interval apart, and rates use 4 s windows), so they are compared per series as means over the
// range: within 50 % of each other, or within 5 % of the largest value of that measure; for queue lengths and
// rank counts, each mode's mean lies within the values the other mode saw, give or take one. The exact agreement
// on identical samples is TestPrometheusModeMatchesDirectOnSameSamples. The range is 16 s: over 8 s, a small
// queue's means drifted apart by more than a request under the full suite's load (once in five runs), from
// sampling phase alone, and they still do by more than one on a loaded machine.
func TestPrometheusModeLiveMatchesDirect(t *testing.T) {
	t.Parallel() // see doc.go
	if testing.Short() {
		t.Skip("starts simulators and Prometheus")
	}
	sims := [][]string{
		{"-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-qps=20", "-speed=4", "-seed=1", "-spec-tokens=3"},
		{"-flavor=vllm-v1-0.10", "-engines=2", "-qps=8", "-speed=4", "-seed=5"},
		{"-flavor=vllm-v0", "-qps=6", "-speed=4", "-seed=2"},
		{"-flavor=vllm-ascend", "-engines=2", "-qps=8", "-speed=4", "-seed=3", "-profiler-config=" + profilerConfig(t, 1)},
		{"-flavor=dynamo-worker", "-engines=2", "-qps=8", "-speed=4", "-seed=4"},
		{"-flavor=dynamo-frontend", "-qps=8", "-speed=4", "-seed=6"},
	}
	var endpoints []map[string]string
	var targets []promtest.Target
	for _, args := range sims {
		u := startSim(t, args...)
		host := hostPort(u)
		endpoints = append(endpoints, map[string]string{"name": host, "url": u})
		targets = append(targets, promtest.Target{Addr: host})
	}
	prom := promtest.Start(t, promtest.Options{Targets: targets, ScrapeInterval: time.Second})
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	directCtx := harness.DataSourceContext(t, harness.DataSource{UID: "direct-live",
		// Scraped as often as Prometheus scrapes, with the whole interval as the timeout (a loaded machine is slow).
		JSONData: map[string]any{"mode": "direct", "endpoints": endpoints, "scrapeInterval": "1s", "scrapeTimeout": "1s"}}, harness.User("Viewer"))
	promCtx := harness.DataSourceContext(t, harness.DataSource{UID: "prom-live", URL: prom.URL,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Health scrapes every endpoint then and there: on a loaded machine, simulators just started time out a scrape
	// of 1 s (as the full suite on a machine twice as busy saw), so ask until all answer in one check (bounded by ctx).
	if h := healthUntil(ctx, t, p, directCtx, func(h *backend.CheckHealthResult) bool { return h.Status == backend.HealthStatusOk }); h.Status != backend.HealthStatusOk {
		t.Fatalf("direct health: %v %s", h.Status, h.Message)
	}
	// Every simulator scraped at least once in the last minute: on a loaded machine Prometheus's 1 s scrapes of
	// the in-process simulators time out, and a timed-out scrape ends that target's series until one succeeds, so
	// the targets whose series are current at one instant may never all be there (the full suite saw 2 of 6 for a
	// whole minute). The waits below still ask until the compared range is held in both modes.
	prom.WaitFor(t, `count(count by (instance) (last_over_time(`+promapi.FamilySelector+`[1m])))`, time.Minute, func(v model.Vector) bool {
		return len(v) == 1 && int(v[0].Value) == len(sims)
	})
	// The compared range (16 s ending 2 s ago) and its 4 s rate windows must lie in both modes' history: ask until
	// the running gauge reaches back 22 s in each (bounded by ctx).
	held := func(pc *pluginv2.PluginContext) bool {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running"},
			From: now.Add(-time.Minute), To: now, Interval: time.Second})
		return err == nil && heldSince(resp.Responses["A"], now.Add(-22*time.Second))
	}
	poll(ctx, func() bool { return held(directCtx) && held(promCtx) })

	// Health reads the series current at the moment it asks: on a loaded machine a scrape that timed out has just
	// ended an endpoint's series (staleness markers) until the next one lands. Ask until every endpoint is seen.
	h := healthUntil(ctx, t, p, promCtx, func(h *backend.CheckHealthResult) bool {
		return strings.Contains(h.Message, fmt.Sprintf("%d endpoint(s)", len(sims)))
	})
	if h.Status != backend.HealthStatusOk {
		t.Fatalf("Prometheus-mode health: %v %s", h.Status, h.Message)
	}
	for _, want := range []string{"Prometheus 2.42", "6 endpoint(s)", "vllm-v1 ×2", "vllm-v0 ×1", "vllm-ascend ×1", "dynamo-worker ×1", "dynamo-frontend ×1", "4 engine rank(s)"} {
		if !strings.Contains(h.Message, want) {
			t.Errorf("health message lacks %q: %s", want, h.Message)
		}
	}

	// Resources answer from the server in the same shapes as direct mode.
	for _, rc := range []struct{ path, want string }{
		{"models", `"meta-llama/Llama-3.1-8B-Instruct"`}, {"engines", `"3"`}, {"metrics", `"vllm:time_to_first_token_seconds"`},
		{"label-values?label=finished_reason", `"stop"`}, {"label-values?label=endpoint", `"` + endpoints[0]["name"] + `"`},
		{"endpoints", `{"name":"` + endpoints[0]["name"] + `"`},
	} {
		res, err := p.CallResource(ctx, promCtx, http.MethodGet, rc.path, nil)
		if err != nil {
			t.Fatalf("resource %s: %v", rc.path, err)
		}
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), rc.want) || !strings.HasPrefix(string(res.Body), "[") {
			t.Errorf("resource %s: %v %s", rc.path, res.Status, res.Body)
		}
	}

	to := time.Now().Add(-2 * time.Second)
	from := to.Add(-16 * time.Second)
	queries := []query.Query{
		{QueryType: query.TypeKVCacheUsage}, {QueryType: query.TypeKVCacheUsage, Measure: "blocks"},
		{QueryType: query.TypeSpecDecode}, {QueryType: query.TypeDPBalance, Measure: "running_waiting"},
		{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.5}}, {QueryType: query.TypeLatency, Metric: "e2e", Measure: "mean"},
		{QueryType: query.TypeThroughput}, {QueryType: query.TypeQueue}, {QueryType: query.TypeCache},
		{QueryType: query.TypeCapacity}, {QueryType: query.TypeRaw, Metric: "vllm:num_requests_running"},
	}
	for _, q := range queries {
		t.Run(fmt.Sprintf("%s/%s", q.QueryType, q.Measure), func(t *testing.T) {
			hq := harness.Query{RefID: "A", JSON: q, From: from, To: to, Interval: time.Second}
			dr, err := p.QueryData(ctx, t, directCtx, hq)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := p.QueryData(ctx, t, promCtx, hq)
			if err != nil {
				t.Fatal(err)
			}
			if e := dr.Responses["A"].Error; e != nil {
				t.Fatalf("direct: %v", e)
			}
			if e := pr.Responses["A"].Error; e != nil {
				t.Fatalf("prometheus: %v", e)
			}
			pf := pr.Responses["A"].Frames
			if len(pf) == 0 || pf[0].Meta == nil || !strings.Contains(pf[0].Meta.ExecutedQueryString, "Prometheus mode") {
				t.Errorf("no generated PromQL in the executed query string")
			}
			directOuts, promOuts := frameOutputs(dr.Responses["A"].Frames), frameOutputs(pf)
			for _, o := range promOuts {
				delete(o.Labels, "job_name") // a target label of promtest's scrape config, kept by raw queries
			}
			compareLive(t, directOuts, promOuts)
		})
	}
}

// countMeasures are small whole-number gauges, where a scrape's phase moves the value by whole requests.
var countMeasures = map[string]bool{"running": true, "waiting": true, "swapped": true, "load": true, "idle_while_waiting": true}

// within reports whether v lies within slack of the values of points.
func within(v float64, points []derive.Point, slack float64) bool {
	lo, hi := bounds(points)
	return v >= lo-slack && v <= hi+slack
}

// span formats the values' range for a failure message.
func span(points []derive.Point) string {
	lo, hi := bounds(points)
	return fmt.Sprintf("%v–%v", lo, hi)
}

// bounds returns the smallest and largest value of points.
func bounds(points []derive.Point) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range points {
		lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
	}
	return lo, hi
}

// compareLive checks both modes return the same series and values of the same size (see the test's comment).
func compareLive(t *testing.T, direct, prom []query.Output) {
	t.Helper()
	mean := func(o query.Output) float64 {
		var s float64
		for _, p := range o.Points {
			s += p.V
		}
		return s / float64(len(o.Points))
	}
	scale := map[string]float64{}
	d, p := map[string]query.Output{}, map[string]query.Output{}
	for _, o := range direct {
		d[outputKey(o)] = o
		scale[o.Measure] = math.Max(scale[o.Measure], math.Abs(mean(o)))
	}
	for _, o := range prom {
		p[outputKey(o)] = o
		scale[o.Measure] = math.Max(scale[o.Measure], math.Abs(mean(o)))
	}
	for k := range d {
		if _, ok := p[k]; !ok {
			t.Errorf("series only direct mode returns: %s", k)
		}
	}
	for k := range p {
		if _, ok := d[k]; !ok {
			t.Errorf("series only Prometheus mode returns: %s", k)
		}
	}
	if len(d) == 0 {
		t.Fatal("no series")
	}
	for k, do := range d {
		po, ok := p[k]
		if !ok {
			continue
		}
		if do.Unit != po.Unit {
			t.Errorf("%s: unit %q vs %q", k, do.Unit, po.Unit)
		}
		a, b := mean(do), mean(po)
		if countMeasures[do.Measure] {
			// A small queue sampled at other instants sees other lengths: over 17 s of a loaded run one engine's
			// waiting queue averaged 0.47 at our scrapes and 1.88 at Prometheus's. Each mode's mean must lie within
			// the lengths the other mode saw, give or take a request.
			if !within(a, po.Points, 1) || !within(b, do.Points, 1) {
				t.Errorf("%s: mean %v in direct mode (range %s), %v in Prometheus mode (range %s)", k, a, span(do.Points), b, span(po.Points))
			}
			continue
		}
		if diff := math.Abs(a - b); diff > 0.5*math.Max(math.Abs(a), math.Abs(b)) && diff > 0.05*scale[do.Measure] {
			t.Errorf("%s: mean %v in direct mode, %v in Prometheus mode", k, a, b)
		}
	}
	t.Logf("%d series in both modes", len(d))
}

// TestPrometheusModeAuthAndErrors runs the built data source against a fake Prometheus that demands a bearer
// token and a tenant header: the right settings get data, wrong credentials, a 5xx with Prometheus's JSON error
// body and an invalid expression each give a clear per-query error, and no secret reaches errors, frames or logs.
func TestPrometheusModeAuthAndErrors(t *testing.T) {
	const token, password, userToken = "tok-3f9a1c", "pw-77b2e0", "user-oauth-5d1e"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		auth := r.Header.Get("Authorization")
		if (auth != "Bearer "+token && auth != "Bearer "+userToken) || r.Header.Get("X-Scope-OrgID") != "tenant-1" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"unauthorized","error":"authentication required"}`))
			return
		}
		_ = r.ParseForm()
		switch {
		case r.URL.Path == "/api/v1/status/buildinfo":
			_, _ = w.Write([]byte(`{"status":"success","data":{"version":"9.9.9"}}`))
		case strings.HasPrefix(r.URL.Path, "/api/v1/label/"):
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running"]}`))
		case r.Form.Get("query") == "boom":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"internal","error":"store gateway exploded"}`))
		case r.Form.Get("query") == "sum(}":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}`))
		case r.URL.Path == "/api/v1/query_range":
			s := r.Form.Get("start")
			_, _ = w.Write([]byte(`{"status":"success","warnings":["partial data"],"data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000","engine":"0","model_name":"m"},"values":[[` + s + `,"2"]]}]}}`))
		default:
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"a:8000","__name__":"vllm:num_requests_running","engine":"0"},"value":[1,"1"]}]}}`))
		}
	}))
	defer srv.Close()
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jsonData := map[string]any{"mode": "prometheus", "httpHeaderName1": "X-Scope-OrgID", "basicAuth": false}
	good := harness.DataSourceContext(t, harness.DataSource{UID: "prom-auth", URL: srv.URL, JSONData: jsonData,
		Secure: map[string]string{"bearerToken": token, "httpHeaderValue1": "tenant-1"}}, harness.User("Viewer"))
	bad := harness.DataSourceContext(t, harness.DataSource{UID: "prom-bad", URL: srv.URL, JSONData: map[string]any{"mode": "prometheus", "basicAuth": true, "basicAuthUser": "u"},
		Secure: map[string]string{"bearerToken": token + "x", "basicAuthPassword": password}}, harness.User("Viewer"))

	var seen []string
	h, err := p.CheckHealth(ctx, good)
	if err != nil || h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, "Prometheus 9.9.9") {
		t.Errorf("health with the right credentials: %+v %v", h, err)
	}
	h, err = p.CheckHealth(ctx, bad)
	if err != nil || h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "authentication required") {
		t.Errorf("health with wrong credentials: %+v %v", h, err)
	}
	if h != nil {
		seen = append(seen, h.Message)
	}
	now := time.Now()
	cases := []struct {
		name string
		pc   *pluginv2.PluginContext
		q    map[string]any
		want string // error text; empty for success
	}{
		{"right credentials", good, map[string]any{"queryType": "queue", "measure": "running"}, ""},
		{"wrong credentials", bad, map[string]any{"queryType": "queue", "measure": "running"}, "401 (unauthorized): authentication required"},
		{"server error", good, map[string]any{"queryType": "promql", "expr": "boom"}, "500 (internal): store gateway exploded"},
		{"invalid expression", good, map[string]any{"queryType": "promql", "expr": "sum(}"}, "invalid PromQL: 1:5: parse error"},
	}
	for _, tc := range cases {
		resp, err := p.QueryData(ctx, t, tc.pc, harness.Query{RefID: "A", JSON: tc.q, From: now.Add(-time.Minute), To: now})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := resp.Responses["A"]
		if tc.want == "" {
			if r.Error != nil || len(r.Frames) != 1 || len(valueFields(r.Frames[0])) == 0 || valueFields(r.Frames[0])[0].Labels["endpoint"] != "a:8000" || !strings.Contains(noticeText(r.Frames), "partial data") {
				t.Errorf("%s: error %v, frames %s, notices %q", tc.name, r.Error, frameSummary(r.Frames), noticeText(r.Frames))
			}
		} else if r.Error == nil || !strings.Contains(r.Error.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, r.Error, tc.want)
		}
		if r.Error != nil {
			seen = append(seen, r.Error.Error())
		}
		for _, f := range r.Frames {
			b, _ := json.Marshal(f)
			seen = append(seen, string(b))
		}
	}
	// OAuth pass-through: Grafana sends the signed-in user's token with the request; the SDK forwards it.
	oauth := harness.DataSourceContext(t, harness.DataSource{UID: "prom-oauth", URL: srv.URL,
		JSONData: map[string]any{"mode": "prometheus", "oauthPassThru": true, "httpHeaderName1": "X-Scope-OrgID"},
		Secure:   map[string]string{"httpHeaderValue1": "tenant-1"}}, harness.User("Viewer"))
	for _, fwd := range []bool{true, false} {
		req := &pluginv2.QueryDataRequest{PluginContext: oauth, Headers: map[string]string{},
			Queries: []*pluginv2.DataQuery{{RefId: "A", IntervalMS: 5000, MaxDataPoints: 100, Json: []byte(`{"queryType":"queue","measure":"running"}`),
				TimeRange: &pluginv2.TimeRange{FromEpochMS: now.Add(-time.Minute).UnixMilli(), ToEpochMS: now.UnixMilli()}}}}
		if fwd {
			req.Headers["Authorization"] = "Bearer " + userToken
		}
		raw, err := p.Data.QueryData(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := backend.FromProto().QueryDataResponse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r := resp.Responses["A"]; (r.Error == nil) != fwd {
			t.Errorf("OAuth pass-through with the user's token %v: error %v", fwd, r.Error)
		}
	}

	seen = append(seen, p.Logs())
	for _, s := range seen {
		for _, secret := range []string{token, password, "tenant-1", userToken} {
			if strings.Contains(s, secret) {
				t.Errorf("a secret appears in %q", s)
			}
		}
	}
}

// BenchmarkPrometheusModeOverhead compares a 1-hour, 64-series range query (generation tokens/s per engine of
// 16 endpoints × 4 engines, 5 s step) through the built data source in Prometheus mode — gRPC, PromQL
// generation, names cache, frames — with the same PromQL sent straight to Prometheus's HTTP API and decoded,
// in the same run. It reports both latencies and their ratio (goal ≤ 1.2).
func BenchmarkPrometheusModeOverhead(b *testing.B) {
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	var om strings.Builder
	om.WriteString("# TYPE vllm:generation_tokens_total counter\n")
	for i := 0; i < 16; i++ {
		for e := 0; e < 4; e++ {
			v := 0.0
			for s := 0; s <= 720; s++ {
				v += float64(100 + 37*e + (s*(i+1))%50)
				fmt.Fprintf(&om, "vllm:generation_tokens_total{instance=\"10.0.0.%d:8000\",engine=\"%d\",model_name=\"m\"} %g %d\n", i, e, v, start.Add(time.Duration(s)*5*time.Second).Unix())
			}
		}
	}
	om.WriteString("# EOF\n")
	prom := promtest.Start(b, promtest.Options{DataDir: promtest.Backfill(b, om.String())})
	p := harness.Start(b, harness.Executable(b, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(b, harness.DataSource{UID: "prom-bench", URL: prom.URL,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "5s"}}, harness.User("Viewer"))
	ctx := context.Background()
	q := query.Query{QueryType: query.TypeThroughput, Measure: "generation_tokens"}
	req := query.Request{From: start, To: start.Add(time.Hour), Interval: 5 * time.Second, MaxDataPoints: 1000}
	rng, _ := query.ResolveRange(q, req, 5*time.Second)
	step, window, from, to := rng.Step, rng.Window, rng.From, rng.To
	exprs, err := promapi.Generate(q, promapi.Names{"vllm:generation_tokens_total": true}, nil, window)
	if err != nil {
		b.Fatal(err)
	}
	hq := harness.Query{RefID: "A", JSON: q, From: req.From, To: req.To, Interval: req.Interval, MaxDataPoints: req.MaxDataPoints}
	viaDS := func() {
		resp, err := p.QueryData(ctx, b, pc, hq)
		if err != nil || resp.Responses["A"].Error != nil || len(resp.Responses["A"].Frames) != 64 {
			b.Fatalf("data source: %v %v", err, resp.Responses["A"].Error)
		}
	}
	// The baseline is what any Go client does: POST the query, decode the JSON with prometheus/common/model.
	hc := &http.Client{Timeout: 30 * time.Second}
	form := url.Values{"query": {exprs[0].PromQL}, "start": {strconv.FormatInt(from.Unix(), 10)},
		"end": {strconv.FormatInt(to.Unix(), 10)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}.Encode()
	direct := func() {
		resp, err := hc.Post(prom.URL+"/api/v1/query_range", "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Data struct {
				Result model.Matrix `json:"result"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil || len(r.Data.Result) != 64 {
			b.Fatalf("Prometheus: %v, %d series", err, len(r.Data.Result))
		}
	}
	viaDS() // warm the names cache and connections
	direct()
	b.ResetTimer()
	var dsTime, promTime time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		viaDS()
		t1 := time.Now()
		direct()
		dsTime += t1.Sub(t0)
		promTime += time.Since(t1)
	}
	b.ReportMetric(float64(dsTime.Microseconds())/float64(b.N)/1000, "ms/datasource")
	b.ReportMetric(float64(promTime.Microseconds())/float64(b.N)/1000, "ms/prometheus")
	b.ReportMetric(float64(dsTime)/float64(promTime), "overhead-ratio")
}

package promapi

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/rules"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

var updateRules = flag.Bool("update-rules", false, "rewrite provisioning/prometheus's generated recording rules from the catalog")

// recordingFiles are the generated rule files: a Prometheus rules file and the same groups as a prometheus-operator
// PrometheusRule.
var recordingFiles = map[string]func() string{
	"../../provisioning/prometheus/inferscope-recording-rules.yaml": func() string {
		return "# Generated from the catalog by `go test ./pkg/promapi -run RecordingRuleFiles -update-rules`; do not edit.\n" +
			"# Recording rules for large fleets: InferScope reads these series instead of computing the rates (README, Scaling out).\n" +
			"# Set each interval to your scrape interval, but inferscope-layouts' (15s, or your scrape interval if longer).\n" + RuleGroups(query.DefaultScrapeInterval, 0)
	},
	"../../provisioning/prometheus/inferscope-prometheusrule.yaml": func() string {
		return "# Generated from the catalog by `go test ./pkg/promapi -run RecordingRuleFiles -update-rules`; do not edit.\n" +
			"# The recording rules of inferscope-recording-rules.yaml for the Prometheus Operator. Set each interval to your scrape interval, but inferscope-layouts' (15s, or your scrape interval if longer).\n" +
			"apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: inferscope-recording-rules\n  labels:\n    app.kubernetes.io/name: inferscope\nspec:\n" +
			RuleGroups(query.DefaultScrapeInterval, 2)
	},
}

// TestRecordingRuleFiles holds the shipped rule files to the catalog: a measure that starts reading a new counter
// or histogram gets its rule.
func TestRecordingRuleFiles(t *testing.T) {
	for path, gen := range recordingFiles {
		want := gen()
		if *updateRules {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil { // #nosec G306 -- a shipped, world-readable config file
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path) // #nosec G304 -- a fixed path in the repository
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is out of step with the catalog: run go test ./pkg/promapi -run RecordingRuleFiles -update-rules", path)
		}
	}
}

// TestRatedNamesCoverTheCatalog: the rules record the catalog's counters and histograms' sums and counts, the buckets
// of a histogram the dashboards read by bucket (TestRecordedBucketsCoverTheShippedQueries holds which), no bucket of
// one the catalog only averages, and none of Ray Serve's copies.
func TestRatedNamesCoverTheCatalog(t *testing.T) {
	names := RatedNames()
	for _, want := range []string{"vllm:time_to_first_token_seconds_bucket", "vllm:request_success_total", "vllm:prompt_tokens_total",
		"vllm:e2e_request_latency_seconds_count", "dynamo_frontend_requests_total"} {
		if !strings.Contains(strings.Join(names, "\n")+"\n", want+"\n") {
			t.Errorf("RatedNames lacks %s", want)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "ray_") {
			t.Errorf("RatedNames lists Ray Serve's %s", n)
		}
	}
	// A histogram the catalog only averages is rated by its sum and count, not its buckets.
	for _, n := range []string{"vllm:request_params_n_bucket", "vllm:request_params_max_tokens_bucket"} {
		if slices.Contains(names, n) {
			t.Errorf("RatedNames lists %s, whose buckets no formula reads", n)
		}
	}
	if !slices.Contains(names, "vllm:request_prompt_tokens_sum") || !slices.Contains(names, "vllm:nixl_xfer_time_seconds_bucket") {
		t.Errorf("RatedNames lacks an averaged histogram's sum or a Quantiles node's buckets")
	}
	for _, n := range RatedNamesAt(time.Minute) {
		if strings.HasSuffix(n, "_bucket") {
			t.Errorf("RatedNamesAt(1m) lists %s: buckets are recorded at BucketWindows only", n)
		}
	}
}

// TestGenerateReadsRecordedRates: where the server holds a recorded rate at the query's window, the PromQL reads it
// in place of rate(); at another window, or where it is not held, it computes the rate.
func TestGenerateReadsRecordedRates(t *testing.T) {
	q := query.Query{QueryType: query.TypeLatency, Measure: "quantiles", Metric: "ttft", Quantiles: []float64{0.95}, GroupBy: query.GroupEndpoint}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	held := Names{"vllm:time_to_first_token_seconds_bucket": true, "vllm:time_to_first_token_seconds_sum": true, "vllm:time_to_first_token_seconds_count": true}
	for _, c := range []struct {
		recorded bool
		window   string
		want     string
	}{
		{false, "5m", `rate(vllm:time_to_first_token_seconds_bucket[5m])`},
		{true, "5m", `inferscope:vllm:time_to_first_token_seconds_bucket:rate5m`},
		{true, "2m", `rate(vllm:time_to_first_token_seconds_bucket[2m])`},
	} {
		names := Names{}
		for k := range held {
			names[k] = true
		}
		if c.recorded {
			for _, w := range RecordedWindows {
				names[RecordedName("vllm:time_to_first_token_seconds_bucket", w)] = true
			}
		}
		w, err := (query.Query{Window: c.window}).WindowDuration()
		if err != nil {
			t.Fatal(err)
		}
		exprs, err := Generate(q, names, nil, w)
		if err != nil || len(exprs) != 1 {
			t.Fatalf("Generate: %v, %d expressions", err, len(exprs))
		}
		if !strings.Contains(exprs[0].PromQL, c.want) || c.recorded && c.window == "5m" && strings.Contains(exprs[0].PromQL, "rate(") {
			t.Errorf("recorded=%v window=%s: %s, want %s", c.recorded, c.window, exprs[0].PromQL, c.want)
		}
	}
}

func TestSwapName(t *testing.T) {
	for _, c := range [][3]string{
		{`vllm:x_total`, `vllm:x_total`, `inferscope:vllm:x_total:rate5m`},
		{`vllm:x_total{instance=~"a"}`, `vllm:x_total`, `inferscope:vllm:x_total:rate5m{instance=~"a"}`},
		{`{__name__="vllm:x_total", le="1"}`, `vllm:x_total`, `{__name__="inferscope:vllm:x_total:rate5m", le="1"}`},
	} {
		if got := swapName(c[0], c[1], RecordedName(c[1], 5*60e9)); got != c[2] {
			t.Errorf("swapName(%s) = %s, want %s", c[0], got, c[2])
		}
	}
}

// TestRecordingRulesFileIsValid has Prometheus's promtool check the shipped rules file.
func TestRecordingRulesFileIsValid(t *testing.T) {
	bin := promtest.EngineBinary(t, promtest.Prometheus2, "promtool")
	out, err := exec.Command(bin, "check", "rules", "../../provisioning/prometheus/inferscope-recording-rules.yaml").CombinedOutput() // #nosec G204 -- a test binary and a repository file
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	rules := len(RecordedBalanceScores) + 1 + 2 + len(RecordedWindows) // the layouts' rule; each group ends with its heartbeat
	for _, w := range RecordedWindows {
		rules += 3 * len(RatedNamesAt(w))
		if slices.Contains(BucketWindows, w) {
			rules += len(QuantiledNames()) * len(RecordedQuantiles) * len(QuantileLevels)
		}
	}
	if !strings.Contains(string(out), "SUCCESS: "+strconv.Itoa(rules)+" rules found") {
		t.Errorf("promtool check rules: %s", out)
	}
}

// TestGenerateReadsRecordedSums: a query per model or for the fleet over every endpoint and engine reads the recorded
// sums over endpoints; one per endpoint, or per model over some endpoints, the sums per endpoint; one per endpoint at
// recorded quantiles the recorded quantiles; one filtered or grouped by an engine label, one whose endpoints may answer
// under several names, and quantiles over histograms whose layouts may differ (the clean-up counts series) read the
// per-series rates.
func TestGenerateReadsRecordedSums(t *testing.T) {
	const ttft = "vllm:time_to_first_token_seconds_bucket"
	layouts := map[string]string{ttft: "+Inf,0.1,0.5"}
	names := func(extra ...string) Names {
		n := Names{"vllm:request_success_total": true, ttft: true}
		for _, e := range extra {
			n[e] = true
		}
		for k := range n {
			for _, w := range RecordedWindows {
				n[RecordedName(k, w)], n[SummedName(k, w)], n[EndpointSumName(k, w)] = true, true, true
			}
		}
		for _, w := range RecordedWindows {
			for _, q := range RecordedQuantiles {
				for _, l := range QuantileLevels {
					n[QuantileName("vllm:time_to_first_token_seconds", q, w, l.Group)] = true
				}
			}
		}
		return n
	}
	errors := query.Query{QueryType: query.TypeThroughput, Measure: "errors", Window: "5m"}
	p95 := query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}, Window: "5m"}
	p97 := query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95, 0.97}, Window: "5m"}
	byEngine := func(q query.Query) query.Query { q.Engine = "0"; return q }
	byPid := func(q query.Query) query.Query { q.Labels = map[string]string{"pid": "1"}; return q }
	const (
		series    = ""
		endpoints = ":sum_endpoints"
		engines   = ":sum_engines"
		quantiles = "quantiles"
	)
	quantileRead := regexp.MustCompile(`:rate[0-9a-z]+:p[0-9]+_(endpoint|engine)\b`)
	for _, c := range []struct {
		name    string
		q       query.Query
		names   Names
		layouts map[string]string
		reads   string
	}{
		{"errors per model", with(errors, query.GroupModel, ""), names(), nil, endpoints},
		{"errors for the fleet", with(errors, query.GroupFleet, ".*"), names(), nil, endpoints},
		{"errors per endpoint", with(errors, query.GroupEndpoint, ""), names(), nil, engines},
		{"errors per model on some endpoints", with(errors, query.GroupModel, "a|b"), names(), nil, engines},
		{"errors per endpoint on one engine", with(byEngine(errors), query.GroupEndpoint, ""), names(), nil, series},
		{"errors per endpoint by pid", with(byPid(errors), query.GroupEndpoint, ""), names(), nil, series},
		{"errors per engine", with(errors, query.GroupEngine, ""), names(), nil, series},
		{"TTFT p95 per model, one layout", with(p95, query.GroupModel, ""), names(), layouts, endpoints},
		{"TTFT p95 per model, layouts unknown", with(p95, query.GroupModel, ""), names(), nil, series},
		{"TTFT p95 per model, a second name", with(p95, query.GroupModel, ""), names("dynamo_frontend_time_to_first_token_seconds_bucket"), layouts, series},
		{"TTFT p95 per endpoint", with(p95, query.GroupEndpoint, "a|b"), names(), nil, quantiles},
		{"TTFT p95 per endpoint, a second name", with(p95, query.GroupEndpoint, ""), names("dynamo_frontend_time_to_first_token_seconds_bucket"), nil, quantiles},
		{"TTFT p95 and p97 per endpoint", with(p97, query.GroupEndpoint, ""), names(), nil, engines},
		{"TTFT p95 per endpoint on one engine", with(byEngine(p95), query.GroupEndpoint, ""), names(), nil, series},
		{"TTFT p95 per engine", with(p95, query.GroupEngine, ""), names(), nil, quantiles},
		{"TTFT p95 of one engine", with(byEngine(p95), query.GroupEngine, ""), names(), nil, quantiles},
		{"TTFT p95 per engine by pid", with(byPid(p95), query.GroupEngine, ""), names(), nil, series},
		{"TTFT p95 and p97 per engine", with(p97, query.GroupEngine, ""), names(), nil, series},
	} {
		w, err := c.q.WindowDuration()
		if err != nil {
			t.Fatal(err)
		}
		exprs, err := Generate(c.q, c.names, &Facts{Layouts: c.layouts}, w)
		if err != nil || len(exprs) == 0 {
			t.Fatalf("%s: %v, %d expressions", c.name, err, len(exprs))
		}
		for _, e := range exprs {
			reads := series
			for _, level := range []string{endpoints, engines} {
				if strings.Contains(e.PromQL, level) {
					reads = level
				}
			}
			if quantileRead.MatchString(e.PromQL) {
				reads = quantiles
			}
			if reads != c.reads || strings.Contains(e.PromQL, "rate(") || !strings.Contains(e.PromQL, RecordedPrefix) {
				t.Errorf("%s: %s, want the recorded level %q read and no rate()", c.name, e.PromQL, c.reads)
			}
		}
	}
}

// TestQuantileNames: the recorded quantiles' names read as the quantile they hold, and the rules record the vLLM
// latency histograms the fleet's per-endpoint panels read.
func TestQuantileNames(t *testing.T) {
	for q, want := range map[float64]string{0.5: "p50", 0.9: "p90", 0.95: "p95", 0.99: "p99", 0.999: "p999"} {
		if got := QuantileName("vllm:x", q, 5*time.Minute, query.GroupEndpoint); got != "inferscope:vllm:x:rate5m:"+want+"_endpoint" {
			t.Errorf("QuantileName(%v) = %s", q, got)
		}
	}
	got := QuantiledNames()
	for _, want := range []string{"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"} {
		if !slices.Contains(got, want) {
			t.Errorf("QuantiledNames lacks %s: %v", want, got)
		}
	}
	if slices.Contains(got, "vllm:e2e_request_latency_seconds") {
		t.Errorf("QuantiledNames lists the end-to-end latency, whose quantiles nothing shipped asks per endpoint or engine: %v", got)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, "vllm:") {
			t.Errorf("QuantiledNames lists %s, whose labels QuantileLevels do not describe", n)
		}
	}
}

// with is q grouped by group over the endpoints endpoint matches, validated.
func with(q query.Query, group query.Group, endpoint string) query.Query {
	q.GroupBy, q.Endpoint = group, endpoint
	if err := q.Validate(); err != nil {
		panic(err)
	}
	return q
}

// shippedQueries are the queries of every shipped dashboard's targets (template variables selecting everything) and
// of the diagnosis's rules, validated, with where each comes from; targets that are not ours are left out.
func shippedQueries(t *testing.T) (qs []query.Query, from []string) {
	t.Helper()
	files, err := filepath.Glob("../../dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	for _, f := range files {
		panels, err := dashtest.Panels(f, map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range panels {
			for _, target := range p.Targets {
				b, err := json.Marshal(target)
				if err != nil {
					t.Fatal(err)
				}
				var q query.Query
				if err := json.Unmarshal(b, &q); err != nil || strings.Contains(q.Window, "$") || q.Validate() != nil {
					continue // not ours, or the window follows the step
				}
				qs, from = append(qs, q), append(from, filepath.Base(f)+": "+p.Title)
			}
		}
	}
	var mu sync.Mutex
	capture := func(_ context.Context, q query.Query) ([]query.Output, error) {
		mu.Lock()
		defer mu.Unlock()
		qs, from = append(qs, q), append(from, "diagnosis")
		return nil, nil
	}
	if _, _, err := query.Diagnose(context.Background(), query.Query{QueryType: query.TypeDiagnosis}, capture); err != nil {
		t.Fatal(err)
	}
	return qs, from
}

// TestRecordedWindowsCoverTheDashboards: every rate window a shipped dashboard asks is one the rules record, so a
// fleet with the rules loaded computes no rate() over the hour for any panel (the sleep-mode panel's 15 minutes are
// the exception, kept for events minutes apart, on a few series per endpoint); and a panel reading histogram buckets
// (quantiles, SLO attainment, bucket rates) reads them at a window the rules record buckets at.
func TestRecordedWindowsCoverTheDashboards(t *testing.T) {
	qs, from := shippedQueries(t)
	checked := 0
	for i, q := range qs {
		if q.Window == "" || !measure.ReadsRates(q.Outputs()) {
			continue
		}
		w, err := q.WindowDuration()
		if err != nil {
			t.Fatalf("%s: %v", from[i], err)
		}
		checked++
		if !slices.Contains(RecordedWindows, w) && !(q.Measure == "sleep_operations" && w == 15*time.Minute) {
			t.Errorf("%s asks rates over %s, which the recording rules do not record (%v)", from[i], w, RecordedWindows)
		}
		readsBuckets := q.ReadsBuckets() || measure.Reads(q.Outputs(), func(n measure.Node) bool {
			switch n.(type) {
			case *measure.Quantiles, *measure.Attainment:
				return true
			}
			return false
		})
		if readsBuckets && slices.Contains(RecordedWindows, w) && !slices.Contains(BucketWindows, w) {
			t.Errorf("%s reads histogram buckets over %s, where the rules record no buckets (%v)", from[i], w, BucketWindows)
		}
	}
	if checked == 0 {
		t.Fatal("no dashboard target reads rates at a window")
	}
	t.Logf("%d targets reading rates at a window", checked)
}

// TestRecordedQuantilesCoverTheDashboards: every latency quantile the shipped dashboards and the diagnosis ask per
// endpoint or per engine, of a vLLM latency family over a window the rules record buckets at, is one the rules record
// (RecordedQuantiles of QuantiledNames), so those panels read one series per group; and every recorded quantile is
// asked by one of them, so no rule costs the server for nothing.
func TestRecordedQuantilesCoverTheDashboards(t *testing.T) {
	qs, from := shippedQueries(t)
	asked := map[string]bool{}
	for i, q := range qs {
		if q.QueryType != query.TypeLatency || !measure.ReadsQuantiles(q.Outputs()) || q.Window == "" ||
			!slices.ContainsFunc(QuantileLevels, func(l QuantileLevel) bool { return l.Group == q.GroupBy }) {
			continue
		}
		w, err := q.WindowDuration()
		if err != nil || !slices.Contains(BucketWindows, w) {
			continue
		}
		for _, n := range q.LatencySignal().Names {
			if src, _ := vllm.RankLabel(n); src != "engine" || !strings.HasPrefix(n, vllm.VLLMPrefix) {
				continue
			}
			for _, p := range q.Quantiles {
				asked[QuantileName(n, p, w, q.GroupBy)] = true
				if !slices.Contains(QuantiledNames(), n) || !slices.Contains(RecordedQuantiles, p) {
					t.Errorf("%s asks the %v quantile of %s per %s, which the rules do not record", from[i], p, n, q.GroupBy)
				}
			}
		}
	}
	if len(asked) == 0 {
		t.Fatal("no shipped query asks a latency quantile per endpoint or engine")
	}
	// The family's names are recorded together (an endpoint answers under whichever it exposes), so a name counts as
	// asked where its family is.
	family := map[string]string{}
	for _, f := range measure.Families {
		for _, n := range f.Signal.Names {
			family[n] = f.Signal.ID
		}
	}
	askedFamily := map[string]bool{}
	for name := range asked {
		for n, id := range family {
			if strings.HasPrefix(name, RecordedPrefix+n+":") {
				askedFamily[id+":"+strings.TrimPrefix(name, RecordedPrefix+n+":")] = true
			}
		}
	}
	for _, w := range BucketWindows {
		for _, l := range QuantileLevels {
			for _, n := range QuantiledNames() {
				for _, p := range RecordedQuantiles {
					rec := QuantileName(n, p, w, l.Group)
					if !askedFamily[family[n]+":"+strings.TrimPrefix(rec, RecordedPrefix+n+":")] {
						t.Errorf("the rules record %s, which no shipped query asks", rec)
					}
				}
			}
		}
	}
}

// TestRecordedBucketsCoverTheShippedQueries: every histogram bucket the shipped dashboards, the alert rules and the
// diagnosis read at a window the rules record buckets at has its rate recorded, so those panels and rules compute no
// bucket rate; and every histogram whose buckets the rules record is read so by one of them, so no bucket rule (a
// series per bound and engine at each evaluation) costs the server for nothing.
func TestRecordedBucketsCoverTheShippedQueries(t *testing.T) {
	qs, from := shippedQueries(t)
	for _, a := range rules.Alerts {
		for _, aq := range a.Queries {
			b, err := json.Marshal(aq.Provisioned())
			if err != nil {
				t.Fatal(err)
			}
			var q query.Query
			if err := json.Unmarshal(b, &q); err != nil || q.Validate() != nil {
				t.Fatalf("alert %s: a query the data source refuses: %s", a.UID, b)
			}
			qs, from = append(qs, q), append(from, "alert "+a.UID)
		}
	}
	// Every name every signal may go by, so that each query reads what it would on any endpoint.
	every := Names{}
	for _, s := range vllm.Signals {
		for _, n := range s.Names {
			every[n] = true
			if s.Kind == vllm.Histogram {
				every[vllm.BucketName(n)] = true
			}
		}
	}
	recorded := RatedNames()
	bucket := regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*_bucket\b`)
	read := map[string]bool{}
	for i, q := range qs {
		w, err := q.WindowDuration()
		if err != nil || !slices.Contains(BucketWindows, w) || q.ReadsPD() {
			continue // pkg/role answers the P/D parts with latency and KV-transfer queries of their own
		}
		exprs, err := Generate(q, every, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", from[i], err)
		}
		for _, e := range exprs {
			for _, n := range bucket.FindAllString(e.PromQL, -1) {
				if strings.HasPrefix(n, "ray_") {
					continue // Ray Serve's servers have their own rules (RatedNames)
				}
				read[n] = true
				if !slices.Contains(recorded, n) {
					t.Errorf("%s reads %s over %s, whose rate the rules do not record", from[i], n, w)
				}
			}
		}
	}
	if len(read) == 0 {
		t.Fatal("no shipped query reads histogram buckets at a recorded window")
	}
	// An endpoint answers under whichever name of a histogram it exposes, so a histogram counts as read where one of
	// its names is.
	for _, s := range vllm.Signals {
		if s.Kind != vllm.Histogram {
			continue
		}
		recordsIt, readIt := false, false
		for _, n := range s.Names {
			recordsIt = recordsIt || slices.Contains(recorded, vllm.BucketName(n))
			readIt = readIt || read[vllm.BucketName(n)]
		}
		if recordsIt && !readIt {
			t.Errorf("the rules record the buckets of %s, which no shipped dashboard, alert rule or the diagnosis reads at %v", s.ID, BucketWindows)
		}
	}
}

// TestGenerateReadsRecordedBalance: a DP-balance score per endpoint over every model and engine, where the server
// holds its recorded series, reads it, filtered by endpoint; per model, filtered by model or label, the per-rank
// load itself, or without the recorded series, it is computed from the gauges.
func TestGenerateReadsRecordedBalance(t *testing.T) {
	held := Names{"vllm:num_requests_running": true, "vllm:num_requests_waiting": true}
	recorded := Names{BalanceScoreName(BalanceScore{"running_waiting", measure.ScoreCV}): true}
	for k := range held {
		recorded[k] = true
	}
	q := func(score string, group query.Group, endpoint, model string, labels map[string]string) query.Query {
		q := query.Query{QueryType: query.TypeDPBalance, Measure: "running_waiting", Score: score, GroupBy: group, Endpoint: endpoint, Model: model, Labels: labels}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		return q
	}
	for _, c := range []struct {
		name  string
		q     query.Query
		names Names
		want  string // "" for computed
	}{
		{"per endpoint", q(measure.ScoreCV, query.GroupEndpoint, ".*", ".*", nil), recorded, `max by (instance) (inferscope:dp_balance:running_waiting:cv_endpoint)`},
		{"some endpoints", q(measure.ScoreCV, query.GroupEndpoint, "a|b", "", nil), recorded, `max by (instance) (inferscope:dp_balance:running_waiting:cv_endpoint{instance=~"a|b"})`},
		{"not recorded", q(measure.ScoreCV, query.GroupEndpoint, "", "", nil), held, ""},
		{"another score", q(measure.ScoreMaxOverMean, query.GroupEndpoint, "", "", nil), recorded, ""},
		{"per model", q(measure.ScoreCV, query.GroupModel, "", "", nil), recorded, ""},
		{"one model", q(measure.ScoreCV, query.GroupEndpoint, "", "m", nil), recorded, ""},
		{"a label", q(measure.ScoreCV, query.GroupEndpoint, "", "", map[string]string{"pid": "1"}), recorded, ""},
		{"the load", q("", query.GroupEndpoint, "", "", nil), recorded, ""},
	} {
		var cv *Expr
		exprs, err := Generate(c.q, c.names, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range exprs {
			if exprs[i].Measure == c.q.Score || c.q.Score == "" && exprs[i].Measure == "load" {
				cv = &exprs[i]
			}
		}
		if cv == nil {
			t.Fatalf("%s: no %q expression in %v", c.name, c.q.Score, exprs)
		}
		reads := strings.Contains(cv.PromQL, RecordedPrefix)
		if c.want != "" && cv.PromQL != c.want || c.want == "" && (reads || !strings.Contains(cv.PromQL, "vllm:num_requests_running")) {
			t.Errorf("%s: %s, want %q", c.name, cv.PromQL, c.want)
		}
	}
}

// TestRecordedBalanceScoresCoverTheDashboards: every DP-balance score the shipped dashboards and the diagnosis ask
// per endpoint, of a measure whose rank load reads gauges only, is recorded; every recorded one is asked; and no
// recorded score's load reads rates (one rule could not answer every window).
func TestRecordedBalanceScoresCoverTheDashboards(t *testing.T) {
	qs, from := shippedQueries(t)
	asked := map[BalanceScore]bool{}
	for i, q := range qs {
		if q.QueryType != query.TypeDPBalance || q.GroupBy != query.GroupEndpoint || q.Score == "" || measure.ReadsRates(q.Outputs()) {
			continue
		}
		b := BalanceScore{q.Measure, q.Score}
		asked[b] = true
		if !slices.Contains(RecordedBalanceScores, b) {
			t.Errorf("%s asks the %s of %s per endpoint, which the rules do not record", from[i], b.Score, b.Measure)
		}
	}
	for _, b := range RecordedBalanceScores {
		if !asked[b] {
			t.Errorf("the rules record the %s of %s, which no shipped query asks", b.Score, b.Measure)
		}
		if q := balanceScoreQuery(b); q.Validate() != nil || measure.ReadsRates(q.Outputs()) {
			t.Errorf("%s: not a dp_balance measure whose load reads gauges only", b.Measure)
		}
	}
}

// TestEveryRuleGroupEndsWithItsHeartbeat: every group of every rule set ends with EvaluatedName labelled with the
// group's name, so the heartbeat is written after the group's other rules (Horizon).
func TestEveryRuleGroupEndsWithItsHeartbeat(t *testing.T) {
	for _, set := range []RuleSet{AllRules, RateRules, EngineSumRules, DerivedRules} {
		var file struct {
			Groups []struct {
				Name  string
				Rules []struct {
					Record string
					Expr   string
					Labels map[string]string
				}
			}
		}
		if err := yaml.Unmarshal([]byte(RuleGroupsOf(5*time.Second, 0, set)), &file); err != nil {
			t.Fatal(err)
		}
		if len(file.Groups) == 0 {
			t.Fatalf("set %d: no groups", set)
		}
		for _, g := range file.Groups {
			last := g.Rules[len(g.Rules)-1]
			if last.Record != EvaluatedName || last.Expr != "vector(1)" || !reflect.DeepEqual(last.Labels, map[string]string{EvaluatedGroupLabel: g.Name}) {
				t.Errorf("set %d, group %s ends with %+v, want its heartbeat", set, g.Name, last)
			}
			for _, r := range g.Rules[:len(g.Rules)-1] {
				if r.Record == EvaluatedName {
					t.Errorf("set %d, group %s: a heartbeat before the group's last rule", set, g.Name)
				}
			}
		}
	}
}

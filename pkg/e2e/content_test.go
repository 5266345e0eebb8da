package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"go.yaml.in/yaml/v3"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
)

// contentFleet is a data source over simulated deployments, driven through the built executable.
type contentFleet struct {
	p   *harness.Plugin
	pc  *pluginv2.PluginContext
	ctx context.Context
}

// startFleet configures one direct-mode data source over the given endpoints and lets accelerated traffic
// accumulate for a while.
func startFleet(t *testing.T, p *harness.Plugin, uid string, eps []map[string]string) *contentFleet {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pc := harness.DataSourceContext(t, harness.DataSource{UID: uid,
		// Scrapes of seconds with the whole interval as the timeout: at 1 s (and a 1 s timeout) a loaded machine timed
		// scrapes out, so the endpoint-down rule fired everywhere and rules and panels saw no data. The rules' and
		// panels' windows (5 m and more of real time) hold the fleets' whole history at either interval.
		JSONData: map[string]any{"mode": "direct", "endpoints": eps, "scrapeInterval": testScrapeInterval, "scrapeTimeout": testScrapeInterval}}, nil)
	if _, err := p.CheckHealth(ctx, pc); err != nil { // creates the instance, which starts scraping
		t.Fatal(err)
	}
	return &contentFleet{p: p, pc: pc, ctx: ctx}
}

// query sends one query model as Grafana would (time range ending now) and returns the answer. The fleets run 30×
// faster than real time, so queries ask for a 1 s step where Grafana would use 15 s (the data source raises it to
// the scrape interval).
func (f *contentFleet) query(t *testing.T, model map[string]any, rng time.Duration) backend.DataResponse {
	t.Helper()
	now := time.Now()
	resp, err := f.p.QueryData(f.ctx, t, f.pc, harness.Query{RefID: "A", JSON: model, From: now.Add(-rng), To: now, Interval: time.Second, MaxDataPoints: 43200})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Responses["A"]
}

// resource lists a variable's values from the data source, as the dashboard's variable query does.
func (f *contentFleet) resource(t *testing.T, path string) []string {
	t.Helper()
	res, err := f.p.CallResource(f.ctx, f.pc, http.MethodGet, path, nil)
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("GET %s: %v %v", path, res, err)
	}
	var out []string
	if err := json.Unmarshal(res.Body, &out); err != nil {
		var objs []struct{ Name string }
		if err := json.Unmarshal(res.Body, &objs); err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out = append(out, o.Name)
		}
	}
	return out
}

func tripFleet(t *testing.T) []map[string]string {
	ln := stoppedEndpoint(t)
	return []map[string]string{
		// One hot engine takes everything while load ramps up (a quarter of a 40-minute wave in the 10 simulated
		// minutes the test watches): it queues, fills its small KV pool, preempts more and more, and TTFT climbs
		// while the other three ranks idle.
		{"name": "v1-hot", "url": startSim(t, "-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-skew=1", "-qps=15", "-qps-wave-amplitude=0.95", "-qps-wave-period=40m", "-max-model-len=4096", "-num-gpu-blocks=4000",
			"-max-num-seqs=128", "-prompt-tokens-mean=512", "-output-tokens-mean=512", "-spec-tokens=3", "-speed=30", "-seed=31")},
		{"name": "v0-hot", "url": startSim(t, "-flavor=vllm-v0", "-qps=40", "-output-tokens-mean=800", "-max-model-len=4096", "-num-gpu-blocks=300", "-max-num-seqs=64", "-speed=30", "-seed=32")},
		{"name": "ascend", "url": startSim(t, "-flavor=vllm-ascend", "-engines=2", "-qps=12", "-spec-tokens=2", "-speed=30", "-seed=33", "-profiler-config="+profilerConfig(t, 1))},
		{"name": "dynamo", "url": startSim(t, "-flavor=dynamo-worker", "-qps=6", "-speed=30", "-seed=34")},
		// A disaggregated pair: the prefill instance holds each prompt's KV until the decode instance, whose NIXL link
		// is slow and drops a tenth of the transfers, has read it.
		{"name": "prefill", "url": startSim(t, "-flavor=vllm-v1", "-kv-role=prefill", "-kv-transfer-ms=900", "-qps=6", "-speed=30", "-seed=38")},
		{"name": "decode", "url": startSim(t, "-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-ms=900", "-kv-transfer-fail-rate=0.1", "-qps=6", "-speed=30", "-seed=35")},
		// An offloading instance whose CPU memory cannot take every store, with block residency metrics.
		{"name": "offload", "url": startSim(t, "-flavor=vllm-v1", "-kv-offload-gb=8", "-kv-cache-metrics", "-kv-offload-fail-rate=0.2", "-external-prefix-hit-rate=0.3", "-qps=6", "-speed=30", "-seed=36")},
		// LMCache that finds almost nothing.
		{"name": "lmcache", "url": startSim(t, "-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.05", "-qps=6", "-speed=30", "-seed=37")},
		// A model burning both SLO budgets fast: 39 % of its first tokens take over 500 ms (long prompts), 31 % of
		// its requests fail or abort.
		{"name": "slo-fast", "url": startSim(t, "-flavor=vllm-v1", "-model=slo-fast", "-qps=4", "-prompt-tokens-mean=3000", "-error-rate=0.3", "-speed=30", "-seed=61")},
		// Four LoRA adapters, two at a time, MFU metrics on, and a few requests with NaN logits.
		{"name": "lora", "url": startSim(t, "-flavor=vllm-v1", "-lora-adapters=4", "-max-lora=2", "-mfu", "-nan-logits-rate=0.02", "-qps=6", "-speed=30", "-seed=39")},
		// Dynamo's frontend with its KV router's metrics (current names), migrating a few requests.
		{"name": "dynamo-fe", "url": startSim(t, "-flavor=dynamo-frontend", "-engines=2", "-qps=6", "-prefix-hit-rate=0.4", "-migration-rate=0.05", "-speed=30", "-seed=62")},
		// An instance put to sleep and woken every two minutes.
		{"name": "sleepy", "url": startSim(t, "-flavor=vllm-v1", "-sleep-level=1", "-sleep-cycle=2m", "-qps=2", "-speed=30", "-seed=63")},
		{"name": "gone", "url": ln},
	}
}

// slowBurnFleet burns both SLO budgets at 6–14.4×: about 10 % of first tokens over 500 ms and 10 % of requests
// failed or aborted, against 99 % objectives — a ticket, not a page.
func slowBurnFleet(t *testing.T) []map[string]string {
	return []map[string]string{
		{"name": "slo-slow", "url": startSim(t, "-flavor=vllm-v1", "-model=slo-slow", "-qps=4", "-prompt-tokens-mean=2500", "-error-rate=0.09", "-speed=30", "-seed=61")},
	}
}

func healthyFleet(t *testing.T) []map[string]string {
	return []map[string]string{
		{"name": "v1", "url": startSim(t, "-flavor=vllm-v1", "-engines=4", "-qps=2", "-spec-tokens=3", "-speed=30", "-seed=41")},
		{"name": "v0", "url": startSim(t, "-flavor=vllm-v0", "-qps=1", "-speed=30", "-seed=42")},
		{"name": "ascend", "url": startSim(t, "-flavor=vllm-ascend", "-engines=2", "-qps=1", "-speed=30", "-seed=43", "-profiler-config="+profilerConfig(t, 1))},
		{"name": "decode", "url": startSim(t, "-flavor=vllm-v1", "-kv-role=decode", "-qps=1", "-speed=30", "-seed=44")},
		{"name": "offload", "url": startSim(t, "-flavor=vllm-v1", "-kv-offload-gb=40", "-external-prefix-hit-rate=0.3", "-qps=1", "-speed=30", "-seed=45")},
		{"name": "lmcache", "url": startSim(t, "-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.5", "-qps=1", "-speed=30", "-seed=46")},
		// Asleep on purpose: no rule may page for it, the endpoint-down rule least of all.
		{"name": "asleep", "url": startSim(t, "-flavor=vllm-v1", "-sleep-level=1", "-qps=1", "-speed=30", "-seed=47")},
	}
}

func stoppedEndpoint(t *testing.T) string {
	eps := brokenEndpoints(t)
	return eps[0]["url"]
}

// TestDashboardPanelsAndAlertRules sends every dashboard panel's queries and every alert rule's queries through
// the data source executable: each panel gets data, each rule fires in the fleet built to trip it (one hot engine
// behind a skewed router, an overloaded V0 server, a decode instance with a slow and lossy NIXL link, an offloading
// instance short of CPU memory, an LMCache that finds almost nothing, a dead endpoint) and stays quiet in a healthy
// one.
func TestDashboardPanelsAndAlertRules(t *testing.T) {
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	trip := startFleet(t, p, "trip", tripFleet(t))
	healthy := startFleet(t, p, "healthy", healthyFleet(t))
	slow := startFleet(t, p, "slow", slowBurnFleet(t))
	// 10 simulated minutes at 30×: wait until each fleet's history holds 20 s (from its first scrape, however late
	// a loaded machine starts it), bounded by the fleets' contexts.
	for _, f := range []*contentFleet{trip, healthy, slow} {
		poll(f.ctx, func() bool {
			return heldSince(f.query(t, map[string]any{"queryType": "raw", "metric": "up"}, time.Minute), time.Now().Add(-20*time.Second))
		})
	}

	t.Run("dashboards", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(harness.RepoRoot(t), "dashboards", "*.json"))
		if len(files) < 3 {
			t.Fatalf("want the minimal, Ascend and fleet dashboards, have %v", files)
		}
		timers := trip.resource(t, "metrics")
		timer := ""
		for _, m := range timers {
			if strings.HasPrefix(m, "vllm_profiling_") && strings.HasSuffix(m, ":duration") {
				timer = m
				break
			}
		}
		if timer == "" {
			t.Fatalf("no profiler timer among metric names %v", timers)
		}
		// The role variable lists what the fleet's instances show: the pair's two sides and the unified rest.
		if roles := trip.resource(t, "roles"); !slices.Equal(roles, []string{"decode", "prefill", "unified"}) {
			t.Errorf("roles resource: %v, want decode, prefill and unified", roles)
		}
		// An SLO target between bucket bounds is interpolated, and the answer says how to make it exact.
		slo := trip.query(t, map[string]any{"refId": "S", "queryType": "latency", "measure": "slo_attainment", "metric": "ttft", "threshold": 0.3, "endpoint": "v1-hot"}, 10*time.Minute)
		if slo.Error != nil || len(slo.Frames) == 0 || slo.Frames[0].Rows() == 0 {
			t.Fatalf("SLO attainment at 0.3 s: %v", slo.Error)
		}
		var notices []string
		if slo.Frames[0].Meta == nil {
			t.Fatalf("the SLO answer's frame has no meta: %s", frameTable(slo.Frames[0]))
		}
		for _, n := range slo.Frames[0].Meta.Notices {
			notices = append(notices, n.Text)
		}
		if joined := strings.Join(notices, "\n"); !strings.Contains(joined, "interpolated inside the 0.25–0.5 bucket") ||
			!strings.Contains(joined, `--custom-histogram-buckets '{"time_to_first_token": [`) {
			t.Errorf("SLO attainment at 0.3 s: notices %q", notices)
		}
		vars := map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "dp": ".*", "role": ".*", "timer": timer, "datasource": "trip"}
		for _, file := range files {
			panels, err := dashtest.Panels(file, vars)
			if err != nil {
				t.Fatal(err)
			}
			for _, pn := range panels {
				t.Run(filepath.Base(file)+"/"+pn.Title, func(t *testing.T) {
					rows := 0
					for _, model := range pn.Targets {
						r := trip.query(t, model, 10*time.Minute)
						if r.Error != nil {
							t.Fatalf("target %s: %v", model["refId"], r.Error)
						}
						for _, f := range r.Frames {
							rows += f.Rows()
						}
					}
					if rows == 0 {
						t.Fatal("panel got no data")
					}
				})
			}
		}
	})

	t.Run("alert rules", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "provisioning", "alerting", "inferscope-rules.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct{ Rules []alertRule }
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		rules := doc.Groups[0].Rules
		if len(rules) != 16 {
			t.Fatalf("want 16 rules, have %d", len(rules))
		}
		for _, r := range rules {
			t.Run(r.UID, func(t *testing.T) {
				for _, k := range []string{"summary", "description", "knob"} {
					if r.Annotations[k] == "" {
						t.Errorf("annotation %s is empty", k)
					}
				}
				if r.Labels["severity"] == "" || r.Labels["team"] == "" {
					t.Errorf("routing labels missing: %v", r.Labels)
				}
				if firing := r.evaluate(t, trip); len(firing) == 0 {
					t.Error("did not fire in the fleet built to trip it")
				} else {
					t.Logf("fires for %v", firing)
				}
				if firing := r.evaluate(t, healthy); len(firing) > 0 {
					t.Errorf("fires in the healthy fleet for %v", firing)
				}
				// A slow burn opens a ticket and pages nobody (multi-window, multi-burn-rate alerts).
				switch firing := r.evaluate(t, slow); r.Labels["slo_alert"] {
				case "ticket":
					if len(firing) == 0 {
						t.Error("the ticket did not fire for a slow burn")
					}
				case "page":
					if len(firing) > 0 {
						t.Errorf("paged for a slow burn: %v", firing)
					}
				}
			})
		}
	})
}

type alertRule struct {
	UID       string `yaml:"uid"`
	Condition string `yaml:"condition"`
	Data      []struct {
		RefID             string             `yaml:"refId"`
		DatasourceUID     string             `yaml:"datasourceUid"`
		RelativeTimeRange struct{ From int } `yaml:"relativeTimeRange"`
		Model             map[string]any     `yaml:"model"`
	} `yaml:"data"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// evaluate runs the rule's queries through the data source and applies its server-side expressions the way
// Grafana's expression engine does for the subset these rules use (reduce last/mean, threshold gt/lt, and the two
// math expressions), per series label set; it returns the label sets for which the condition holds.
func (r alertRule) evaluate(t *testing.T, f *contentFleet) []string {
	t.Helper()
	values := map[string]map[string]float64{} // refId -> series key -> value
	series := map[string]map[string][]float64{}
	for _, d := range r.Data {
		switch {
		case d.DatasourceUID == "inferscope-direct":
			resp := f.query(t, d.Model, time.Duration(d.RelativeTimeRange.From)*time.Second)
			if resp.Error != nil {
				t.Fatalf("query %s: %v", d.RefID, resp.Error)
			}
			series[d.RefID] = map[string][]float64{}
			for _, fr := range resp.Frames {
				if len(fr.Fields) < 2 {
					continue
				}
				v := fr.Fields[1]
				k := seriesKey(v.Labels)
				for i := 0; i < v.Len(); i++ {
					series[d.RefID][k] = append(series[d.RefID][k], v.At(i).(float64))
				}
			}
		case d.Model["type"] == "reduce":
			src := series[d.Model["expression"].(string)]
			values[d.RefID] = map[string]float64{}
			for k, vs := range src {
				if len(vs) == 0 {
					continue
				}
				switch d.Model["reducer"] {
				case "last":
					values[d.RefID][k] = vs[len(vs)-1]
				case "mean":
					s := 0.0
					for _, v := range vs {
						s += v
					}
					values[d.RefID][k] = s / float64(len(vs))
				default:
					t.Fatalf("reducer %v not emulated", d.Model["reducer"])
				}
			}
		case d.Model["type"] == "threshold":
			src := values[d.Model["expression"].(string)]
			cond := d.Model["conditions"].([]any)[0].(map[string]any)["evaluator"].(map[string]any)
			limit := toFloat(cond["params"].([]any)[0])
			values[d.RefID] = map[string]float64{}
			for k, v := range src {
				hit := (cond["type"] == "gt" && v > limit) || (cond["type"] == "lt" && v < limit)
				values[d.RefID][k] = map[bool]float64{true: 1}[hit]
			}
		case d.Model["type"] == "math":
			values[d.RefID] = mathExpr(t, d.Model["expression"].(string), values)
		default:
			t.Fatalf("expression %v not emulated", d.Model)
		}
	}
	if os.Getenv("INFERSCOPE_DEBUG_ALERTS") != "" {
		t.Logf("%s values: %v", r.UID, values)
	}
	var firing []string
	for k, v := range values[r.Condition] {
		if v != 0 && !math.IsNaN(v) {
			firing = append(firing, k)
		}
	}
	sort.Strings(firing)
	return firing
}

// mathExpr evaluates the math expressions the rules use, joining series on equal label sets as Grafana does.
func mathExpr(t *testing.T, e string, v map[string]map[string]float64) map[string]float64 {
	out := map[string]float64{}
	switch e {
	case "$B > 0.05 && $B > 1.5 * $C":
		for k, b := range v["B"] {
			c, ok := v["C"][k]
			out[k] = map[bool]float64{true: 1}[ok && b > 0.05 && b > 1.5*c]
		}
	case "$C > 2 && $D > 0":
		for k, c := range v["C"] {
			d, ok := v["D"][k]
			out[k] = map[bool]float64{true: 1}[ok && c > 2 && d > 0]
		}
	default:
		// Burn-rate rules: both windows past the same limit, "$C < 0.856 && $D < 0.856".
		m := burnRate.FindStringSubmatch(e)
		if m == nil || m[1] != m[3] || m[2] != m[4] {
			t.Fatalf("math expression %q not emulated: add it here with its meaning", e)
		}
		limit, _ := strconv.ParseFloat(m[2], 64)
		for k, c := range v["C"] {
			d, ok := v["D"][k]
			below := m[1] == "<"
			out[k] = map[bool]float64{true: 1}[ok && (below && c < limit && d < limit || !below && c > limit && d > limit)]
		}
	}
	return out
}

// burnRate reads a burn-rate rule's condition: $C and $D on the same side of the same limit.
var burnRate = regexp.MustCompile(`^\$C ([<>]) ([0-9.]+) && \$D ([<>]) ([0-9.]+)$`)

// toFloat reads a YAML number, which decodes as int or float64.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func seriesKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k+"="+l[k])
	}
	sort.Strings(keys)
	return "{" + strings.Join(keys, ",") + "}"
}

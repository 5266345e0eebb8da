package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/simtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	inferrules "github.com/inferscope/inferscope-vllm/pkg/rules"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// addrOf is the host:port of the endpoint named name, as Prometheus labels it.
func addrOf(eps []map[string]string, name string) string {
	for _, e := range eps {
		if e["name"] == name {
			return hostPort(e["url"])
		}
	}
	return ""
}

// hostPort is a simulator's /metrics URL as a scrape target's address (Prometheus's instance label).
func hostPort(metricsURL string) string {
	return strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics")
}

// contentFleet is a data source over simulated deployments, driven through the built executable.
type contentFleet struct {
	p   *harness.Plugin
	pc  *pluginv2.PluginContext
	ctx context.Context
	// prom is the Prometheus a Prometheus-mode fleet queries; nil in direct mode.
	prom *promtest.Server
}

// contentTimeout bounds everything a content fleet is asked, for the whole test: alone it takes under a minute, but
// under the race detector beside other packages' tests on a loaded 2-core machine it took 192 s once, past the
// 3 minutes this was.
const contentTimeout = 10 * time.Minute

// startFleet configures one direct-mode data source over the given endpoints and lets accelerated traffic
// accumulate for a while.
func startFleet(t *testing.T, p *harness.Plugin, uid string, eps []map[string]string) *contentFleet {
	ctx, cancel := context.WithTimeout(context.Background(), contentTimeout)
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

// startPromFleet is startFleet's Prometheus-mode twin: a Prometheus scraping the same endpoints at the direct-mode
// fleets' interval, with the whole interval as the timeout (at 1 s a loaded machine timed out the busiest simulators'
// scrapes, and a rule reading their last value saw none), and a Prometheus-mode data source on it, so every panel
// and rule is also answered by the generated PromQL.
func startPromFleet(t *testing.T, p *harness.Plugin, uid string, eps []map[string]string) *contentFleet {
	var targets []promtest.Target
	for _, e := range eps {
		// One scrape job for the fleet, as deployments have: raw up answers for the jobs that scrape vLLM, so an
		// endpoint down since before its first scrape is found through its job.
		targets = append(targets, promtest.Target{Job: "vllm", Addr: hostPort(e["url"])})
	}
	interval, err := time.ParseDuration(testScrapeInterval)
	if err != nil {
		t.Fatal(err)
	}
	prom := promtest.Start(t, promtest.Options{Targets: targets, ScrapeInterval: interval})
	ctx, cancel := context.WithTimeout(context.Background(), contentTimeout)
	t.Cleanup(cancel)
	pc := harness.DataSourceContext(t, harness.DataSource{UID: uid, URL: prom.URL,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": testScrapeInterval}}, nil)
	if _, err := p.CheckHealth(ctx, pc); err != nil {
		t.Fatal(err)
	}
	return &contentFleet{p: p, pc: pc, ctx: ctx, prom: prom}
}

// held says what the fleet's Prometheus holds for an instance (its up, its vLLM series, the target's health), for
// a timeout's trail; "" in direct mode. It asks under a context of its own: the fleet's may be the one that ran out.
func (f *contentFleet) held(instance string) string {
	if f.prom == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	for _, expr := range []string{`up{instance="` + instance + `"}`, `count({__name__=~"vllm:.+", instance="` + instance + `"})`,
		`count_over_time(vllm:request_success_total{instance="` + instance + `"}[1m])`} {
		v, err := f.prom.Query(ctx, expr, time.Now())
		fmt.Fprintf(&b, "; %s = %v (%v)", expr, v, err)
	}
	// Prometheus's own word on the target: a scrape it failed (a timeout, a body its parser refused) says why here.
	targets, err := f.prom.Targets(ctx)
	if err != nil {
		return b.String() + "; targets: " + err.Error()
	}
	for _, at := range targets {
		if at.Labels["instance"] == instance {
			fmt.Fprintf(&b, "; target %s, last scrape %.3f s, last error %q", at.Health, at.LastScrapeDuration, at.LastError)
		}
	}
	return b.String()
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

// tripFleet returns the fleet built to trip every rule, and stop, which takes one endpoint of model "parked" down
// once its history has begun: that model's other endpoint sleeps, so no engine serves it.
func tripFleet(t *testing.T) ([]map[string]string, func()) {
	ln := stoppedEndpoint(t)
	parkedURL, stopParked := simtest.StartStoppable(t, "-flavor=vllm-v1", "-model=parked", "-qps=2", "-speed=30", "-seed=67")
	// Model parked: one endpoint asleep (tripSims), the other taken down (stop) after the warm-up.
	eps := []map[string]string{{"name": "parked-gone", "url": parkedURL}}
	for _, s := range tripSims(t) {
		eps = append(eps, map[string]string{"name": s.name, "url": startSim(t, s.args...)})
	}
	return append(eps, map[string]string{"name": "gone", "url": ln}), stopParked
}

// tripSim is one simulated endpoint of the fleet built to trip every rule.
type tripSim struct {
	name string
	args []string
}

// tripSims are the simulated endpoints of the fleet built to trip every rule (tripFleet adds one it stops and one
// that refuses connections).
func tripSims(t *testing.T) []tripSim {
	return []tripSim{
		// Model parked's endpoint that sleeps (tripFleet takes its other one down).
		{"parked-asleep", []string{"-flavor=vllm-v1", "-model=parked", "-sleep-level=1", "-qps=1", "-speed=30", "-seed=68"}},
		// Model pd-skew: a prefill instance of eight engines short of capacity for long prompts beside a decode instance that
		// runs a short generation or two at a time, so a prefill instance runs many times the requests a decode instance does.
		{"pd-skew-prefill", []string{"-flavor=vllm-v1", "-model=pd-skew", "-kv-role=prefill", "-engines=8", "-qps=30", "-prompt-tokens-mean=6000", "-max-model-len=16384", "-max-num-batched-tokens=2048", "-speed=30", "-seed=69"}},
		{"pd-skew-decode", []string{"-flavor=vllm-v1", "-model=pd-skew", "-kv-role=decode", "-qps=1", "-prompt-tokens-mean=200", "-output-tokens-mean=20", "-speed=30", "-seed=70"}},
		// One hot engine takes everything while load ramps up (a quarter of a 40-minute wave in the first 10 simulated
		// minutes): it queues, fills its small KV pool, preempts more and more, and TTFT climbs while the other three
		// ranks idle. Its queue drains for a few minutes of every 40 the run goes on, so it is not what the
		// DP-imbalance rule relies on.
		{"v1-hot", []string{"-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-skew=1", "-qps=15", "-qps-wave-amplitude=0.95", "-qps-wave-period=40m", "-max-model-len=4096", "-num-gpu-blocks=4000",
			"-max-num-seqs=128", "-prompt-tokens-mean=512", "-output-tokens-mean=512", "-spec-tokens=3", "-speed=30", "-seed=31"}},
		// Model dp-skew: a router that sends everything to one of four engines, at several times what its four running
		// sequences get through: that rank queues at every moment while the other three idle, however late a slow run
		// evaluates the rules (TestTripFleetQueuesBesideAnIdleRankThroughout).
		{"dp-skew", []string{"-flavor=vllm-v1", "-model=dp-skew", "-engines=4", "-routing=skewed", "-skew=1", "-qps=6", "-max-num-seqs=4", "-speed=30", "-seed=71"}},
		{"v0-hot", []string{"-flavor=vllm-v0", "-qps=40", "-output-tokens-mean=800", "-max-model-len=4096", "-num-gpu-blocks=300", "-max-num-seqs=64", "-speed=30", "-seed=32"}},
		// Its drafts are mostly rejected: acceptance has collapsed.
		{"ascend", []string{"-flavor=vllm-ascend", "-engines=2", "-qps=12", "-spec-tokens=2", "-spec-acceptance=0.2,0.1", "-speed=30", "-seed=33", "-profiler-config=" + profilerConfig(t, 1)}},
		{"dynamo", []string{"-flavor=dynamo-worker", "-qps=6", "-speed=30", "-seed=34"}},
		// A disaggregated pair: the prefill instance holds each prompt's KV until the decode instance, whose NIXL link
		// is slow and drops a tenth of the transfers, has read it.
		{"prefill", []string{"-flavor=vllm-v1", "-kv-role=prefill", "-kv-transfer-ms=900", "-qps=6", "-speed=30", "-seed=38"}},
		{"decode", []string{"-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-ms=900", "-kv-transfer-fail-rate=0.1", "-qps=6", "-speed=30", "-seed=35"}},
		// A second pair, out of balance: a prefill instance that cannot keep up with long prompts, and a decode
		// instance whose small KV pool the long outputs fill.
		{"prefill-busy", []string{"-flavor=vllm-v1", "-kv-role=prefill", "-qps=30", "-prompt-tokens-mean=6000", "-max-model-len=16384", "-max-num-seqs=4", "-max-num-batched-tokens=2048", "-speed=30", "-seed=64"}},
		{"decode-full", []string{"-flavor=vllm-v1", "-kv-role=decode", "-qps=30", "-prompt-tokens-mean=200", "-output-tokens-mean=300", "-max-model-len=2048", "-num-gpu-blocks=1500", "-max-num-seqs=256", "-speed=30", "-seed=65"}},
		// An offloading instance whose CPU memory cannot take every store, with block residency metrics.
		{"offload", []string{"-flavor=vllm-v1", "-kv-offload-gb=8", "-kv-cache-metrics", "-kv-offload-fail-rate=0.2", "-external-prefix-hit-rate=0.3", "-qps=6", "-speed=30", "-seed=36"}},
		// LMCache that finds almost nothing.
		{"lmcache", []string{"-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.05", "-qps=6", "-speed=30", "-seed=37"}},
		// A model burning both SLO budgets fast: 39 % of its first tokens take over 500 ms (long prompts), 31 % of
		// its requests fail or abort.
		{"slo-fast", []string{"-flavor=vllm-v1", "-model=slo-fast", "-qps=4", "-prompt-tokens-mean=3000", "-error-rate=0.3", "-speed=30", "-seed=61"}},
		// Four LoRA adapters, two at a time, MFU metrics on, a few requests with NaN logits, and prompts that share
		// almost no prefix.
		{"lora", []string{"-flavor=vllm-v1", "-lora-adapters=4", "-max-lora=2", "-mfu", "-nan-logits-rate=0.02", "-prefix-hit-rate=0.02", "-qps=6", "-speed=30", "-seed=39"}},
		// Dynamo's frontend with its KV router's metrics (current names), migrating a few requests.
		{"dynamo-fe", []string{"-flavor=dynamo-frontend", "-engines=2", "-qps=6", "-prefix-hit-rate=0.4", "-migration-rate=0.05", "-speed=30", "-seed=62"}},
		// A Dynamo frontend whose one worker cannot keep up: requests queue before their first response.
		{"dynamo-fe-busy", []string{"-flavor=dynamo-frontend", "-engines=1", "-qps=30", "-max-num-seqs=8", "-prompt-tokens-mean=2000", "-speed=30", "-seed=66"}},
		// An instance put to sleep and woken every two minutes.
		{"sleepy", []string{"-flavor=vllm-v1", "-sleep-level=1", "-sleep-cycle=2m", "-qps=2", "-speed=30", "-seed=63"}},
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
		// Its prefill side, which keeps up: a prefill instance runs fewer requests than the decode instance.
		{"name": "prefill", "url": startSim(t, "-flavor=vllm-v1", "-kv-role=prefill", "-qps=1", "-speed=30", "-seed=48")},
		{"name": "offload", "url": startSim(t, "-flavor=vllm-v1", "-kv-offload-gb=40", "-external-prefix-hit-rate=0.3", "-qps=1", "-speed=30", "-seed=45")},
		{"name": "lmcache", "url": startSim(t, "-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.5", "-qps=1", "-speed=30", "-seed=46")},
		// Asleep on purpose: no rule may page for it, the endpoint-down rule least of all.
		{"name": "asleep", "url": startSim(t, "-flavor=vllm-v1", "-sleep-level=1", "-qps=1", "-speed=30", "-seed=47")},
	}
}

// stoppedEndpoint is the /metrics URL of an endpoint that refuses connections for the whole test.
func stoppedEndpoint(t *testing.T) string {
	return "http://" + refusedAddr(t) + "/metrics"
}

// TestDashboardPanelsAndAlertRules sends every dashboard panel's queries and every alert rule's queries through
// the data source executable: each panel gets data, each rule fires in the fleet built to trip it (one hot engine
// behind a skewed router, an overloaded V0 server, a decode instance with a slow and lossy NIXL link, an offloading
// instance short of CPU memory, an LMCache that finds almost nothing, a dead endpoint) and stays quiet in a healthy
// one — in both modes: each fleet is also scraped by a Prometheus that a Prometheus-mode data source queries.
func TestDashboardPanelsAndAlertRules(t *testing.T) {
	t.Parallel() // see doc.go
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	tripEps, stopParked := tripFleet(t)
	healthyEps, slowEps := healthyFleet(t), slowBurnFleet(t)
	trip := startFleet(t, p, "trip", tripEps)
	healthy := startFleet(t, p, "healthy", healthyEps)
	slow := startFleet(t, p, "slow", slowEps)
	promTrip := startPromFleet(t, p, "prom-trip", tripEps)
	promHealthy := startPromFleet(t, p, "prom-healthy", healthyEps)
	promSlow := startPromFleet(t, p, "prom-slow", slowEps)
	// 10 simulated minutes at 30×: wait until each fleet's history holds 20 s (from its first scrape, however late
	// a loaded machine starts it), bounded by the fleets' contexts.
	for _, f := range []*contentFleet{trip, healthy, slow, promTrip, promHealthy, promSlow} {
		poll(f.ctx, func() bool {
			return heldSince(f.query(t, map[string]any{"queryType": "raw", "metric": "up"}, time.Minute), time.Now().Add(-20*time.Second))
		})
	}
	// Model parked loses its one awake endpoint; both modes see its scrapes fail before the rules are evaluated.
	stopParked()
	parkedAddr := addrOf(tripEps, "parked-gone")
	for f, ep := range map[*contentFleet]string{trip: "parked-gone", promTrip: regexp.QuoteMeta(parkedAddr)} {
		poll(f.ctx, func() bool {
			return lastUp(f.query(t, map[string]any{"queryType": "raw", "metric": "up", "endpoint": ep}, time.Minute)) == 0
		})
	}
	// Roles come from the evidence at 15 s steps: a fleet of seconds may show its decode instance's first transfers
	// at no step yet (and its prompts make it look like prefill), so the role-aware rules wait until both modes tell
	// the instances they trip on apart: the full decode instance, and both sides of the skewed pair.
	for _, inst := range []struct{ name, role string }{{"decode-full", "decode"}, {"pd-skew-decode", "decode"}, {"pd-skew-prefill", "prefill"}} {
		addr := addrOf(tripEps, inst.name)
		for f, ep := range map[*contentFleet]string{trip: inst.name, promTrip: regexp.QuoteMeta(addr)} {
			said := ""
			poll(f.ctx, func() bool {
				r := f.query(t, map[string]any{"queryType": "kv_cache_usage", "role": inst.role, "endpoint": ep}, time.Minute)
				if r.Error == nil && len(r.Frames) > 0 && r.Frames[0].Rows() > 0 {
					return true
				}
				// What the answer says instead, each time it changes: the trail a timeout leaves.
				if now := fmt.Sprintf("error %v, notices %q", r.Error, noticeText(r.Frames)); now != said {
					said = now
					t.Logf("%s not yet a %s instance: %s%s", ep, inst.role, said, f.held(addr))
				}
				return false
			})
			if f.ctx.Err() != nil {
				t.Logf("%s still not a %s instance when the wait ran out: %s%s", ep, inst.role, said, f.held(addr))
			}
		}
	}
	decodeFull := addrOf(tripEps, "decode-full")
	// The trail's own reading of Prometheus works: it finds the decode instance among the targets.
	if trail := promTrip.held(decodeFull); !strings.Contains(trail, "; target ") {
		t.Errorf("the trail of Prometheus's view does not name the target %s: %s", decodeFull, trail)
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
		vars := map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "dp": ".*", "role": ".*", "timer": timer, "datasource": "trip",
			"ttft_target": "0.5", "tpot_target": "0.05"}
		for _, file := range files {
			panels, err := dashtest.Panels(file, vars)
			if err != nil {
				t.Fatal(err)
			}
			for _, pn := range panels {
				for _, m := range []struct {
					name  string
					fleet *contentFleet
				}{{"direct", trip}, {"prometheus", promTrip}} {
					t.Run(m.name+"/"+filepath.Base(file)+"/"+pn.Title, func(t *testing.T) {
						rows := 0
						for _, model := range pn.Targets {
							r := m.fleet.query(t, model, 10*time.Minute)
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
		if len(rules) != len(inferrules.Alerts) {
			t.Fatalf("want the %d rules of pkg/rules, have %d", len(inferrules.Alerts), len(rules))
		}
		for _, r := range rules {
			for _, m := range []struct {
				name                string
				trip, healthy, slow *contentFleet
			}{{"direct", trip, healthy, slow}, {"prometheus", promTrip, promHealthy, promSlow}} {
				t.Run(m.name+"/"+r.UID, func(t *testing.T) {
					trip, healthy, slow := m.trip, m.healthy, m.slow
					for _, k := range []string{"summary", "description", "knob", "runbook_url"} {
						if r.Annotations[k] == "" {
							t.Errorf("annotation %s is empty", k)
						}
					}
					if r.Labels["severity"] == "" || r.Labels["team"] == "" {
						t.Errorf("routing labels missing: %v", r.Labels)
					}
					if firing := r.evaluateUntilFiring(t, trip); len(firing) == 0 {
						t.Errorf("did not fire in the fleet built to trip it, asked for %s", tripGrace)
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

// tripGrace is how long a rule is asked again before it counts as quiet in the fleet built to trip it: that fleet
// holds each rule over its threshold almost always, not at every instant (decode-full's KV pool dips below 95 % for
// a step now and then, when requests finish together), and Grafana evaluates a rule every minute too. At 30×, 20 s
// are 10 simulated minutes.
const tripGrace = 20 * time.Second

// evaluateUntilFiring evaluates the rule until it fires in f, for at most tripGrace.
func (r alertRule) evaluateUntilFiring(t *testing.T, f *contentFleet) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, tripGrace)
	defer cancel()
	var firing []string
	asked := 0
	poll(ctx, func() bool {
		asked++
		firing = r.evaluate(t, f)
		return len(firing) > 0
	})
	if asked > 1 && len(firing) > 0 {
		t.Logf("fired at evaluation %d", asked)
	}
	return firing
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
				case "min":
					values[d.RefID][k] = slices.Min(vs)
				case "max":
					values[d.RefID][k] = slices.Max(vs)
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

// mathTerm is one comparison of a rule's math expression: $X > 0.05, $X > 1.5 * $Y, $X < $Y.
var mathTerm = regexp.MustCompile(`^\$([A-Z]) ([<>]) (?:([0-9.]+) \* )?(?:\$([A-Z])|([0-9.]+))$`)

// mathExpr evaluates the math expressions the rules use — comparisons of reductions with numbers or scaled
// reductions, all joined by && or all by || — per series, joining on equal label sets as Grafana does (a side
// with a single series joins every series of the other).
func mathExpr(t *testing.T, e string, v map[string]map[string]float64) map[string]float64 {
	op := "&&"
	if strings.Contains(e, "||") {
		op = "||"
	}
	type term struct {
		x, y       string
		less       bool
		scale, num float64
		hasY       bool
	}
	var terms []term
	for _, part := range strings.Split(e, " "+op+" ") {
		m := mathTerm.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			t.Fatalf("math expression %q not emulated: add its form here with its meaning", e)
		}
		tm := term{x: m[1], less: m[2] == "<", scale: 1, y: m[4], hasY: m[4] != ""}
		if m[3] != "" {
			tm.scale, _ = strconv.ParseFloat(m[3], 64)
		}
		if m[5] != "" {
			tm.num, _ = strconv.ParseFloat(m[5], 64)
		}
		terms = append(terms, tm)
	}
	lookup := func(ref, k string) (float64, bool) {
		if x, ok := v[ref][k]; ok {
			return x, true
		}
		if len(v[ref]) == 1 {
			for _, x := range v[ref] {
				return x, true
			}
		}
		return 0, false
	}
	out := map[string]float64{}
	for k := range v[terms[0].x] {
		hit := op == "&&"
		for _, tm := range terms {
			x, ok := lookup(tm.x, k)
			bound := tm.num
			if tm.hasY {
				y, oky := lookup(tm.y, k)
				ok = ok && oky
				bound = tm.scale * y
			}
			holds := ok && (tm.less && x < bound || !tm.less && x > bound)
			if op == "&&" {
				hit = hit && holds
			} else {
				hit = hit || holds
			}
		}
		out[k] = map[bool]float64{true: 1}[hit]
	}
	return out
}

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

// lastUp is the newest value of a raw up answer's series (-1 without one).
func lastUp(r backend.DataResponse) float64 {
	for _, fr := range r.Frames {
		if len(fr.Fields) < 2 || fr.Fields[1].Len() == 0 {
			continue
		}
		if v, ok := fr.Fields[1].At(fr.Fields[1].Len() - 1).(float64); ok {
			return v
		}
	}
	return -1
}

// TestTripFleetQueuesBesideAnIdleRankThroughout holds the fleet built to trip the DP-imbalance rule to the rule's own
// queries, answered by direct mode's engine at every simulated minute a run may evaluate it: the rule's subtests come
// after the dashboards', which a slow machine stretches over minutes (30 simulated minutes each), until
// contentTimeout ends the fleets. The simulators run in process.
func TestTripFleetQueuesBesideAnIdleRankThroughout(t *testing.T) {
	t.Parallel() // see doc.go
	var rule *inferrules.Alert
	for i := range inferrules.Alerts {
		if inferrules.Alerts[i].UID == "inferscope-dp-imbalance" {
			rule = &inferrules.Alerts[i]
		}
	}
	if rule == nil || len(rule.Queries) != 2 {
		t.Fatalf("want the DP-imbalance rule's two queries (max/mean, idle ranks while others wait): %+v", rule)
	}
	flavors := map[string][]string{}
	var horizon time.Duration // what the fleets simulate in contentTimeout
	for _, s := range tripSims(t) {
		cfg, err := sim.ParseArgs(s.args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		// The endpoints behind a skewed router are the fleet's DP imbalance by construction; a least-loaded router's
		// ranks (pd-skew-prefill's) idle beside a queue now and then, not by design.
		if cfg.Engines < 2 || cfg.Routing != "skewed" {
			continue
		}
		horizon = max(horizon, time.Duration(float64(contentTimeout)*cfg.Speed))
		flavors[s.name] = s.args
	}
	run := newSimRunFrom(t, flavors, time.Now().Add(-horizon).Truncate(time.Minute), horizon, time.Minute)
	eng := &query.Engine{Source: query.HistorySource{Store: run.store}, ScrapeInterval: time.Minute}
	req := query.Request{From: run.start.Add(10 * time.Minute), To: run.end, Interval: time.Minute}
	// scores[i][step][endpoint] is the rule's query i at a step.
	var scores [2]map[int64]map[string]float64
	for i, rq := range rule.Queries {
		b, err := json.Marshal(rq.Provisioned())
		if err != nil {
			t.Fatal(err)
		}
		var q query.Query
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		res, err := eng.Eval(context.Background(), q, req)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		scores[i] = map[int64]map[string]float64{}
		for _, o := range res.Outputs {
			for _, p := range o.Points {
				if scores[i][p.T] == nil {
					scores[i][p.T] = map[string]float64{}
				}
				scores[i][p.T][o.Labels["endpoint"]] = p.V
			}
		}
	}
	var missed []int
	for at := req.From; !at.After(req.To); at = at.Add(req.Interval) {
		tripped := false
		for ep, ratio := range scores[0][at.UnixMilli()] {
			tripped = tripped || (ratio > inferrules.DPImbalance.Value && scores[1][at.UnixMilli()][ep] > 0)
		}
		if !tripped {
			missed = append(missed, int(at.Sub(run.start).Minutes()))
		}
	}
	if len(missed) > 0 {
		t.Errorf("no endpoint queues on one rank beside an idle one (max/mean above %v) at simulated minutes %v",
			inferrules.DPImbalance.Value, missed)
	}
}

package e2e

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// The fleet benchmark's scale. CI runs it once with the defaults (every size, half a minute of history) so it cannot
// rot; the README's figures come from a longer history and warm phase (-fleet.history=10m or 60m, -fleet.warm=1m).
var (
	fleetSizes       = flag.String("fleet.sizes", "1,256", "comma-separated fleet sizes (endpoints) BenchmarkFleetDashboard runs (the README's figures add 64)")
	fleetHistory     = flag.Duration("fleet.history", 30*time.Second, "how long BenchmarkFleetDashboard scrapes before its first refresh")
	fleetWarm        = flag.Duration("fleet.warm", 20*time.Second, "how long BenchmarkFleetDashboard refreshes warm, every 5 s, after the cold refresh (at least a 15 s step; longer averages more refreshes that add a step)")
	fleetOverlap     = flag.Duration("fleet.overlap", 0, "Prometheus modes' incrementalQueryOverlapWindow (0: the data source's default); at a short -fleet.history the default's steps hold no data yet")
	fleetIncremental = flag.Bool("fleet.incremental", true, "Prometheus modes' incrementalQuerying (false: every refresh asks for every step, as before the results cache)")
	fleetQueries     = flag.Bool("fleet.queries", false, "after the refreshes, time every panel query alone (in Prometheus modes cold, without the results cache) and log the slowest with their PromQL (where Prometheus mode's time goes)")
	fleetQueryLog    = flag.Bool("fleet.querylog", false, "in Prometheus modes, log the server's own time per query (its query log) over the cold refreshes (-fleet.colds) and over the warm refreshes that add a step, the costliest first (where their wall time goes)")
	fleetPanels      = flag.Bool("fleet.panels", false, "log each cold refresh's panels with when each began and ended, in ms from the refresh's start, the last to end first (what a cold refresh's wall time waits on)")
	fleetColds       = flag.Int("fleet.colds", 1, "in Prometheus modes, how many cold refreshes BenchmarkFleetDashboard takes: the first, then each of the others on a new data source instance after the warm refreshes, 6.1 s apart so that they fall at different points of the server's scrapes and rule evaluations (which move a single cold figure by half)")
	fleetCPUProfile  = flag.String("fleet.cpuprofile", "", "write a CPU profile of the plugin over the warm refreshes to this file, the sub-benchmark's name added before its extension (where the plugin's time goes)")
)

// fleetScrape is the scrape interval of the benchmark fleet, as vLLM deployments commonly use and the default.
const fleetScrape = 5 * time.Second

// fleetKinds is the mix of deployments the benchmark fleet cycles through: mostly single-engine servers, some
// data-parallel ones up to DP8 (two engines per endpoint on average), with speculative decoding, errors and
// prefix caching, as a production fleet of one model family looks.
var fleetKinds = func() [][]string {
	common := []string{"-flavor=vllm-v1", "-qps=6", "-spec-tokens=3", "-error-rate=0.01", "-prefix-hit-rate=0.3"}
	var out [][]string
	for i, engines := range []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 4, 4, 8} {
		out = append(out, append([]string{"-engines=" + strconv.Itoa(engines), "-seed=" + strconv.Itoa(i+1)}, common...))
	}
	return out
}()

// benchFleet serves n simulated endpoints, each on a loopback port of its own (Prometheus names a target by its
// address), endpoint i behaving as fleetKinds[i mod 16]. A kind's body is rendered once a second and shared by its
// endpoints, so the benchmark's own CPU goes to the plugin, not to simulating 256 servers.
type benchFleet struct {
	urls    []string
	targets []promtest.Target
	engines int
}

// renderedBody is one kind's latest /metrics answer, gzip or plain.
type renderedBody struct {
	at          time.Time
	plain, gzip *httptest.ResponseRecorder
}

func startBenchFleet(b *testing.B, n int) *benchFleet {
	b.Helper()
	f := &benchFleet{}
	handlers := make([]http.Handler, len(fleetKinds))
	for k, args := range fleetKinds {
		cfg, err := sim.ParseArgs(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		srv, err := sim.NewServer(cfg, log.New(io.Discard, "", 0))
		if err != nil {
			b.Fatal(err)
		}
		inner := srv.Handler()
		var mu sync.Mutex
		var last renderedBody
		handlers[k] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				inner.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			if time.Since(last.at) > time.Second {
				last = renderedBody{at: time.Now(), plain: httptest.NewRecorder(), gzip: httptest.NewRecorder()}
				req := r.Clone(r.Context())
				req.Header = http.Header{}
				inner.ServeHTTP(last.plain, req)
				req.Header.Set("Accept-Encoding", "gzip")
				inner.ServeHTTP(last.gzip, req)
			}
			rec := last.plain
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				rec = last.gzip
			}
			mu.Unlock()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			_, _ = w.Write(rec.Body.Bytes())
		})
	}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		s := &http.Server{Handler: handlers[i%len(handlers)], ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.Serve(ln) }()
		b.Cleanup(func() { _ = s.Close() })
		f.urls = append(f.urls, "http://"+ln.Addr().String()+"/metrics")
		f.targets = append(f.targets, promtest.Target{Job: "vllm", Addr: ln.Addr().String()})
		engines, _ := strconv.Atoi(strings.TrimPrefix(fleetKinds[i%len(fleetKinds)][0], "-engines="))
		f.engines += engines
	}
	return f
}

// acceptsGzip reports whether an Accept-Encoding header asks for gzip.
func acceptsGzip(h string) bool { return strings.Contains(h, "gzip") }

// fleetRefresh is what one dashboard refresh cost the plugin.
type fleetRefresh struct {
	at        time.Time // when it began
	wall, cpu time.Duration
	frames    int
	newStep   bool // the refresh's last step is one the previous refresh did not have
	// asked is how many range queries the Prometheus modes' server answered meanwhile (0 in direct mode).
	asked float64
	// server is the CPU time the Prometheus modes' server used meanwhile, its scraping and rules included (0 in
	// direct mode): on a machine of few cores a cold refresh waits on it more than on the plugin.
	server time.Duration
	// panels is when each panel's request was sent and answered, from at: the refresh's timeline.
	panels []panelSpan
}

// panelSpan is one panel request's place in a refresh's timeline.
type panelSpan struct {
	title      string
	sent, done time.Duration
}

// dashboardClient sends the shipped fleet overview's panel requests to one data source as Grafana does on a
// refresh: one QueryData request per panel, six at a time (a browser's connections per host), the last hour at a
// 15 s step.
type dashboardClient struct {
	p      *harness.Plugin
	pc     *pluginv2.PluginContext
	panels []dashtest.Panel
	last   int64 // the previous refresh's end, in steps
}

const (
	dashboardRange = time.Hour
	dashboardStep  = 15 * time.Second
)

func (d *dashboardClient) refresh(b *testing.B) fleetRefresh {
	b.Helper()
	end := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		mu     sync.Mutex
		frames int
		errs   []string
		wg     sync.WaitGroup
		slots  = make(chan struct{}, 6)
		spans  []panelSpan
	)
	cpu0, t0 := d.p.CPUTime(), time.Now()
	for _, panel := range d.panels {
		wg.Add(1)
		slots <- struct{}{}
		sent := time.Since(t0)
		go func() {
			defer func() { <-slots; wg.Done() }()
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				spans = append(spans, panelSpan{panel.Title, sent, time.Since(t0)})
			}()
			var qs []harness.Query
			for _, t := range panel.Targets {
				qs = append(qs, harness.Query{RefID: fmt.Sprint(t["refId"]), QueryType: fmt.Sprint(t["queryType"]), JSON: t,
					From: end.Add(-dashboardRange), To: end, Interval: dashboardStep, MaxDataPoints: 1000})
			}
			resp, err := d.p.QueryData(ctx, b, d.pc, qs...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, panel.Title+": "+err.Error())
				return
			}
			for ref, r := range resp.Responses {
				if r.Error != nil {
					errs = append(errs, fmt.Sprintf("%s %s: %v", panel.Title, ref, r.Error))
				}
				frames += len(r.Frames)
			}
		}()
	}
	wg.Wait()
	r := fleetRefresh{at: t0, wall: time.Since(t0), cpu: d.p.CPUTime() - cpu0, frames: frames, panels: spans}
	if len(errs) > 0 {
		b.Fatalf("refresh failed:\n%s", strings.Join(errs, "\n"))
	}
	steps := end.UnixMilli() / dashboardStep.Milliseconds()
	r.newStep, d.last = steps != d.last, steps
	return r
}

// logQueryTimes sends every panel query alone, one after the other, and logs the slowest with the query the data
// source ran for it (in Prometheus mode, the generated PromQL): alone, a query's wall time is its own, not its
// neighbours'.
func (d *dashboardClient) logQueryTimes(b *testing.B) {
	b.Helper()
	type timed struct {
		name, executed string
		wall           time.Duration
	}
	var all []timed
	var total time.Duration
	end := time.Now()
	for _, panel := range d.panels {
		for _, t := range panel.Targets {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			t0 := time.Now()
			resp, err := d.p.QueryData(ctx, b, d.pc, harness.Query{RefID: fmt.Sprint(t["refId"]), QueryType: fmt.Sprint(t["queryType"]), JSON: t,
				From: end.Add(-dashboardRange), To: end, Interval: dashboardStep, MaxDataPoints: 1000})
			wall := time.Since(t0)
			cancel()
			if err != nil {
				b.Fatalf("%s: %v", panel.Title, err)
			}
			executed := ""
			for _, r := range resp.Responses {
				for _, f := range r.Frames {
					if f.Meta != nil && f.Meta.ExecutedQueryString != "" {
						executed = f.Meta.ExecutedQueryString
						break
					}
				}
			}
			all = append(all, timed{panel.Title + " " + fmt.Sprint(t["refId"]), executed, wall})
			total += wall
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].wall > all[j].wall })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d queries alone, %v in all; slowest first:\n", len(all), total.Round(time.Millisecond))
	for i, q := range all {
		fmt.Fprintf(&sb, "%7.0f ms  %s\n", ms(q.wall), q.name)
		if i < 12 && q.executed != "" {
			fmt.Fprintf(&sb, "           %s\n", strings.ReplaceAll(q.executed, "\n", "\n           "))
		}
	}
	logLong(b, sb.String())
}

// plainPromQL is what an operator would write by hand for the fleet overview's panels on a vLLM V1 fleet, by panel
// title: the same grouping and windows, none of the plugin's generality (other flavors' names, their `or`, the
// clean-up of mixed bucket layouts, division guards). Panels without an entry (the diagnosis, capacity, and what
// the benchmark fleet does not expose) are left out of the comparison on both sides.
var plainPromQL = map[string][]string{
	"Endpoint scrapes: the 20 least often up":       {`up{job="vllm"}`},
	"TTFT SLO attainment (≤ 500 ms)":                {`sum by (model_name) (rate(vllm:time_to_first_token_seconds_bucket{le="0.5"}[5m])) / sum by (model_name) (rate(vllm:time_to_first_token_seconds_bucket{le="+Inf"}[5m]))`},
	"Inter-token latency SLO attainment (≤ 100 ms)": {`sum by (model_name) (rate(vllm:inter_token_latency_seconds_bucket{le="0.1"}[5m])) / sum by (model_name) (rate(vllm:inter_token_latency_seconds_bucket{le="+Inf"}[5m]))`},
	"Failed and aborted requests": {
		`sum by (model_name) (rate(vllm:request_success_total{finished_reason=~"abort|error"}[5m]))`,
		`sum by (model_name) (rate(vllm:request_success_total{finished_reason=~"abort|error"}[5m])) / sum by (model_name) (rate(vllm:request_success_total[5m]))`,
	},
	"KV usage %: per model, and the 10 fullest endpoints":            {`avg by (model_name) (vllm:kv_cache_usage_perc) * 100`, `avg by (instance, model_name) (vllm:kv_cache_usage_perc) * 100`},
	"Preemptions/s: per model, and the 10 endpoints preempting most": {`sum by (model_name) (rate(vllm:num_preemptions_total[5m]))`, `sum by (instance, model_name) (rate(vllm:num_preemptions_total[5m]))`},
	"Running + waiting": {`sum by (model_name) (vllm:num_requests_running)`, `sum by (model_name) (vllm:num_requests_waiting)`},
	"DP balance: the 10 most imbalanced endpoints (max/mean of running + waiting)": {
		`max by (instance) (vllm:num_requests_running + vllm:num_requests_waiting) / avg by (instance) (vllm:num_requests_running + vllm:num_requests_waiting)`,
		`stddev by (instance) (vllm:num_requests_running + vllm:num_requests_waiting) / avg by (instance) (vllm:num_requests_running + vllm:num_requests_waiting)`,
	},
	"Generated tokens/s": {`sum by (model_name) (rate(vllm:generation_tokens_total[20s]))`, `sum by (model_name) (rate(vllm:prompt_tokens_total[20s]))`},
	"TTFT p50 / p95 / p99 per model": {
		`histogram_quantile(0.5, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`,
		`histogram_quantile(0.95, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`,
		`histogram_quantile(0.99, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`,
	},
	"Slowest endpoints: TTFT p95 (top 10)": {`histogram_quantile(0.95, sum by (instance, model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`},
	"Inter-token latency (TPOT) p50 / p95 / p99 per model": {
		`histogram_quantile(0.5, sum by (model_name, le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))`,
		`histogram_quantile(0.95, sum by (model_name, le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))`,
		`histogram_quantile(0.99, sum by (model_name, le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))`,
	},
	"Slowest endpoints: Inter-token latency p95 (top 10)": {`histogram_quantile(0.95, sum by (instance, model_name, le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))`},
	"End-to-end and queue time p95": {
		`histogram_quantile(0.95, sum by (model_name, le) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))`,
		`histogram_quantile(0.95, sum by (model_name, le) (rate(vllm:request_queue_time_seconds_bucket[5m])))`,
	},
	"Prefix-cache hit rate: per model, and the 10 lowest endpoints": {
		`sum by (model_name) (rate(vllm:prefix_cache_hits_total[5m])) / sum by (model_name) (rate(vllm:prefix_cache_queries_total[5m]))`,
		`sum by (instance, model_name) (rate(vllm:prefix_cache_hits_total[5m])) / sum by (instance, model_name) (rate(vllm:prefix_cache_queries_total[5m]))`,
	},
	"Spec-decode acceptance rate": {`sum by (model_name) (rate(vllm:spec_decode_num_accepted_tokens_total[5m])) / sum by (model_name) (rate(vllm:spec_decode_num_draft_tokens_total[5m]))`},
	"Mean acceptance length":      {`1 + sum by (model_name) (rate(vllm:spec_decode_num_accepted_tokens_total[5m])) / sum by (model_name) (rate(vllm:spec_decode_num_drafts_total[5m]))`},
}

// BenchmarkFleetDashboard measures what users pay for the shipped fleet overview dashboard: the built data source
// executable, driven over gRPC as Grafana drives it, refreshing every panel over the last hour at a 15 s step for
// fleets of simulated endpoints (-fleet.sizes: 1 and 256 unless told) scraped every 5 s, in direct mode and in Prometheus mode against
// Prometheus 3 scraping the same endpoints, without and with the generated recording rules. Cold is the first refresh of a data source (empty results cache); warm
// is the mean of the refreshes that follow every 5 s for -fleet.warm (20 s: a full 15 s step and more), reported apart for
// refreshes that add a step and those that do not. CPU is the plugin process's (from /proc), so scraping runs in
// it too: scrape-cores is its CPU per second while idle before the first refresh, and the -net figures subtract it.
// In Prometheus modes server-idle-cores is the server's CPU per second over the same time: its scraping, and the
// recording rules' evaluation where loaded; server-queries-newstep and -samestep are the range queries a warm
// refresh sent it (its own prometheus_http_requests_total), which the results cache and its horizon keep down.
func BenchmarkFleetDashboard(b *testing.B) {
	panels, err := dashtest.Panels(filepath.Join(harness.RepoRoot(b), "dashboards", "vllm-fleet.json"),
		map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*"})
	if err != nil {
		b.Fatal(err)
	}
	exe := harness.Executable(b, harness.DatasourceExecutable)
	if *fleetWarm < dashboardStep+fleetScrape {
		b.Fatalf("-fleet.warm %s: a warm figure spans at least a step and a scrape (%s)", *fleetWarm, dashboardStep+fleetScrape)
	}
	var sizes []int
	for _, s := range strings.Split(*fleetSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("-fleet.sizes: %q is not a fleet size", s)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			fleet := startBenchFleet(b, n)
			b.Run("mode=direct", func(b *testing.B) {
				var eps []map[string]string
				for i, u := range fleet.urls {
					eps = append(eps, map[string]string{"url": u, "name": fmt.Sprintf("vllm-%03d", i)})
				}
				benchDashboard(b, exe, panels, fleet, map[string]any{"mode": "direct", "endpoints": eps,
					"scrapeInterval": fleetScrape.String(), "scrapeTimeout": "4s"}, "", "")
			})
			b.Run("mode=prometheus3", func(b *testing.B) {
				engines := promtest.EnginesOf(b, promtest.Prometheus3)
				qlog := queryLog(b)
				prom := promtest.Start(b, promtest.Options{Engine: engines[0], Targets: fleet.targets, ScrapeInterval: fleetScrape, QueryLog: qlog})
				benchDashboard(b, exe, panels, fleet, promJSON(), prom.URL, qlog)
				benchPlainPromQL(b, exe, panels, prom.URL)
			})
			b.Run("mode=prometheus3-recorded", func(b *testing.B) {
				// The same server evaluating the generated recording rules (provisioning/prometheus) every scrape.
				engines := promtest.EnginesOf(b, promtest.Prometheus3)
				qlog := queryLog(b)
				prom := promtest.Start(b, promtest.Options{Engine: engines[0], Targets: fleet.targets, ScrapeInterval: fleetScrape,
					Rules: promapi.RuleGroups(fleetScrape, 0), QueryLog: qlog})
				benchDashboard(b, exe, panels, fleet, promJSON(), prom.URL, qlog)
			})
		})
	}
}

// promJSON is the Prometheus modes' data source settings, incremental querying on (the default) unless
// -fleet.incremental=false.
func promJSON() map[string]any {
	js := map[string]any{"mode": "prometheus", "scrapeInterval": fleetScrape.String()}
	if !*fleetIncremental {
		js["incrementalQuerying"] = false
	}
	if *fleetOverlap > 0 {
		js["incrementalQueryOverlapWindow"] = fleetOverlap.String()
	}
	return js
}

// benchPlainPromQL compares, on the panels plainPromQL covers, the plugin's Prometheus mode with the hand-written
// PromQL sent straight to the same server, each as a refresh (six requests at a time) over the same hour and step.
func benchPlainPromQL(b *testing.B, exe string, panels []dashtest.Panel, url string) {
	var covered []dashtest.Panel
	var plain []string
	for _, p := range panels {
		if exprs, ok := plainPromQL[p.Title]; ok {
			covered = append(covered, p)
			plain = append(plain, exprs...)
		}
	}
	if len(covered) != len(plainPromQL) {
		b.Fatalf("plainPromQL names %d panels, the dashboard has %d of them", len(plainPromQL), len(covered))
	}
	p := harness.Start(b, exe)
	// Incremental querying off: each refresh asks for every step, as the hand-written PromQL below does.
	pc := harness.DataSourceContext(b, harness.DataSource{UID: "fleet-bench-plain", URL: url,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": fleetScrape.String(), "incrementalQuerying": false}}, nil)
	d := &dashboardClient{p: p, pc: pc, panels: covered}
	d.refresh(b) // the data source's name discovery, as a running dashboard has it
	ours := d.refresh(b)
	client := &promapi.Client{BaseURL: url, HTTP: &http.Client{Timeout: 5 * time.Minute}}
	end := time.Now()
	start := end.Add(-dashboardRange)
	t0 := time.Now()
	var wg sync.WaitGroup
	slots := make(chan struct{}, 6)
	errs := make([]error, len(plain))
	for i, e := range plain {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			_, _, errs[i] = client.QueryRange(context.Background(), e, start.Truncate(dashboardStep), end.Truncate(dashboardStep), dashboardStep)
		}()
	}
	wg.Wait()
	plainWall := time.Since(t0)
	for i, err := range errs {
		if err != nil {
			b.Fatalf("%s: %v", plain[i], err)
		}
	}
	b.ReportMetric(ms(ours.wall), "ms-covered-panels-wall")
	b.ReportMetric(ms(plainWall), "ms-plain-promql-wall")
	b.ReportMetric(float64(ours.wall)/float64(plainWall), "ours/plain")
}

// serverCPU is the CPU seconds the Prometheus at url has used (its own process_cpu_seconds_total): while no one
// queries it, its scraping and its rules' evaluation. 0 without a server.
func serverCPU(b *testing.B, url string) float64 {
	return serverMetric(b, url, "process_cpu_seconds_total", "")
}

// serverRangeQueries is how many range queries the Prometheus at url has answered (its own
// prometheus_http_requests_total, every code): what a refresh asked of it. 0 without a server.
func serverRangeQueries(b *testing.B, url string) float64 {
	return serverMetric(b, url, "prometheus_http_requests_total", `handler="/api/v1/query_range"`)
}

// serverMetric sums the samples of the Prometheus at url's own metric name whose labels contain labels.
func serverMetric(b *testing.B, url, name, labels string) float64 {
	if url == "" {
		return 0
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		b.Fatal(err)
	}
	sum, found := 0.0, false
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '{' || !strings.Contains(rest, labels) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(rest[strings.LastIndexByte(rest, ' ')+1:]), 64)
		if err != nil {
			b.Fatalf("%s/metrics: %q", url, line)
		}
		sum, found = sum+f, true
	}
	if !found && labels == "" {
		b.Fatalf("%s/metrics has no %s", url, name)
	}
	return sum
}

// waitPhase sleeps until the wall clock is off into a period of d (at most d).
func waitPhase(d, off time.Duration) {
	now := time.Now()
	at := now.Truncate(d).Add(off)
	if !at.After(now) {
		at = at.Add(d)
	}
	time.Sleep(time.Until(at))
}

// benchDashboard starts one data source over the fleet, lets it (or its Prometheus) scrape for -fleet.history, then
// refreshes the dashboard cold and warm and reports the figures; queryLog is the server's query log, if it keeps one.
func benchDashboard(b *testing.B, exe string, panels []dashtest.Panel, fleet *benchFleet, jsonData map[string]any, url, queryLog string) {
	for b.Loop() {
		var prof *pluginProfiler
		var env []string
		if *fleetCPUProfile != "" {
			prof, env = newPluginProfiler(b)
		}
		p := harness.Start(b, exe, env...)
		pc := harness.DataSourceContext(b, harness.DataSource{UID: "fleet-bench", URL: url, JSONData: jsonData}, nil)
		// Direct mode's scrape rounds run every 5 s from the instance's creation: create it 3.5 s into a step, so
		// rounds come 3.5, 8.5 and 13.5 s into each, and refresh half an interval after a round (1, 6 and 11 s into
		// each step), where a viewer's refresh, not timed to the scrapes, lands on average. The refresh 1 s into a
		// step then ends in a step that no round has reached yet, as about half the steps of a real refresh do.
		// (Prometheus scrapes on its own schedule.)
		if jsonData["mode"] == "direct" {
			waitPhase(dashboardStep, 3500*time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		created := time.Now()
		if _, err := p.CheckHealth(ctx, pc); err != nil { // creates the instance, which starts scraping
			cancel()
			b.Fatal(err)
		}
		cancel()
		idleFrom := time.Now()
		idleCPU := p.CPUTime()
		serverFrom := serverCPU(b, url)
		time.Sleep(time.Until(created.Add(*fleetHistory + fleetScrape/2)))
		scrapeCores := (p.CPUTime() - idleCPU).Seconds() / time.Since(idleFrom).Seconds()
		serverCores := (serverCPU(b, url) - serverFrom) / time.Since(idleFrom).Seconds()

		// coldRefresh is d's refresh with the server's CPU time meanwhile.
		coldRefresh := func(d *dashboardClient) fleetRefresh {
			before := serverCPU(b, url)
			r := d.refresh(b)
			r.server = time.Duration((serverCPU(b, url) - before) * float64(time.Second))
			return r
		}
		d := &dashboardClient{p: p, pc: pc, panels: panels}
		coldAt := time.Now()
		cold := coldRefresh(d)
		profiled := make(chan error, 1)
		if prof != nil {
			// The warm refreshes start every 5 s up to -fleet.warm after the cold one: half an interval more ends
			// the profile after the last.
			go func() {
				profiled <- prof.cpu(context.Background(), *fleetWarm+fleetScrape/2, profileFile(*fleetCPUProfile, b.Name()))
			}()
		}
		var warm, stepped, still []fleetRefresh
		var logged [][2]time.Time // the warm refreshes that add a step, while the server logs its queries
		// Refreshes keep their phase (every 5 s from the cold one), as Grafana's auto-refresh does; one that found
		// the previous still running starts when it ends.
		for k := 1; time.Duration(k)*fleetScrape <= *fleetWarm; k++ {
			time.Sleep(time.Until(coldAt.Add(time.Duration(k) * fleetScrape)))
			asked := serverRangeQueries(b, url)
			r := d.refresh(b)
			r.asked = serverRangeQueries(b, url) - asked
			warm = append(warm, r)
			if r.newStep && queryLog != "" {
				logged = append(logged, [2]time.Time{r.at, r.at.Add(r.wall)})
			}
			if r.newStep {
				stepped = append(stepped, r)
			} else {
				still = append(still, r)
			}
		}
		if prof != nil {
			if err := <-profiled; err != nil { // bounded: the fetch's own timeout
				b.Error(err)
			}
		}
		colds := []fleetRefresh{cold}
		if url != "" {
			// More cold refreshes, each on an instance of its own (nothing looked up or kept), 6.1 s apart: every
			// 5 s the server evaluates the recording rules in a burst, and where a cold refresh falls against it moves
			// its wall time by half. The instances are created by their first query, without a health check, whose
			// lookups would leave them warm.
			for i := 1; i < *fleetColds; i++ {
				time.Sleep(time.Until(colds[len(colds)-1].at.Add(fleetScrape + 1100*time.Millisecond)))
				pc := harness.DataSourceContext(b, harness.DataSource{UID: fmt.Sprintf("fleet-bench-cold-%d", i), URL: url, JSONData: jsonData}, nil)
				colds = append(colds, coldRefresh(&dashboardClient{p: p, pc: pc, panels: panels}))
			}
		}
		if *fleetPanels {
			for i, c := range colds {
				logPanels(b, fmt.Sprintf("cold refresh %d", i+1), c)
			}
		}
		if queryLog != "" {
			var windows [][2]time.Time
			for _, c := range colds {
				windows = append(windows, [2]time.Time{c.at, c.at.Add(c.wall)})
			}
			logServerTimes(b, queryLog, "cold refreshes", windows)
			logServerTimes(b, queryLog, "warm refreshes that add a step", logged)
		}
		if *fleetQueries {
			q := d
			if url != "" {
				// Prometheus modes: a second instance without the results cache, so each query costs what it does
				// cold; its name discovery is warmed by one refresh first, as a running dashboard has it.
				cold := maps.Clone(jsonData)
				cold["incrementalQuerying"] = false
				q = &dashboardClient{p: p, pc: harness.DataSourceContext(b, harness.DataSource{UID: "fleet-bench-cold", URL: url, JSONData: cold}, nil), panels: panels}
				q.refresh(b)
			}
			q.logQueryTimes(b)
		}
		net := func(r fleetRefresh) time.Duration {
			return max(0, r.cpu-time.Duration(scrapeCores*float64(r.wall)))
		}
		mean := func(rs []fleetRefresh, f func(fleetRefresh) time.Duration) float64 {
			if len(rs) == 0 {
				return 0
			}
			var sum time.Duration
			for _, r := range rs {
				sum += f(r)
			}
			return ms(sum) / float64(len(rs))
		}
		cpu := func(r fleetRefresh) time.Duration { return r.cpu }
		wall := func(r fleetRefresh) time.Duration { return r.wall }
		b.ReportMetric(float64(fleet.engines), "engines")
		b.ReportMetric(ms(cold.wall), "ms-cold-wall")
		b.ReportMetric(ms(cold.cpu), "ms-cold-cpu")
		if len(colds) > 1 {
			b.ReportMetric(mean(colds, wall), "ms-colds-wall-mean")
			b.ReportMetric(mean(colds, cpu), "ms-colds-cpu-mean")
			b.ReportMetric(ms(slices.MaxFunc(colds, func(a, b fleetRefresh) int { return cmp.Compare(a.wall, b.wall) }).wall), "ms-colds-wall-max")
			b.ReportMetric(ms(slices.MinFunc(colds, func(a, b fleetRefresh) int { return cmp.Compare(a.wall, b.wall) }).wall), "ms-colds-wall-min")
		}
		if url != "" {
			// What the cold refreshes cost the server: its CPU time during each, and that time less what it spends
			// idle (scraping, the rules) over as long.
			b.ReportMetric(mean(colds, func(r fleetRefresh) time.Duration { return r.server }), "ms-colds-server-cpu-mean")
			b.ReportMetric(mean(colds, func(r fleetRefresh) time.Duration {
				return r.server - time.Duration(serverCores*float64(r.wall))
			}), "ms-colds-server-cpu-net-mean")
		}
		b.ReportMetric(mean(warm, wall), "ms-warm-wall")
		b.ReportMetric(mean(warm, cpu), "ms-warm-cpu")
		b.ReportMetric(mean(warm, net), "ms-warm-cpu-net")
		b.ReportMetric(mean(stepped, wall), "ms-warm-newstep-wall")
		b.ReportMetric(mean(still, wall), "ms-warm-samestep-wall")
		b.ReportMetric(mean(stepped, cpu), "ms-warm-newstep-cpu")
		b.ReportMetric(mean(still, cpu), "ms-warm-samestep-cpu")
		b.ReportMetric(mean(warm, cpu)/ms(cold.cpu), "warm/cold-cpu")
		b.ReportMetric(scrapeCores, "scrape-cores")
		if url != "" {
			b.ReportMetric(serverCores, "server-idle-cores")
			asked := func(rs []fleetRefresh) float64 {
				sum := 0.0
				for _, r := range rs {
					sum += r.asked
				}
				return sum / float64(max(len(rs), 1))
			}
			b.ReportMetric(asked(stepped), "server-queries-newstep")
			b.ReportMetric(asked(still), "server-queries-samestep")
		}
		b.ReportMetric(float64(cold.frames), "frames")
		b.ReportMetric(float64(p.PeakRSS())/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(p.RSS())/(1<<20), "RSS-MiB")
	}
}

// logLong writes a report of many lines under the benchmark's name and the time, on stderr: a benchmark's own log
// keeps only its first lines.
func logLong(b *testing.B, text string) {
	fmt.Fprintf(os.Stderr, "%s (%s):\n%s", b.Name(), time.Now().UTC().Format(time.TimeOnly), text)
}

// ms is d in milliseconds, as the benchmark reports times.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// logPanels logs a refresh's panel requests, the last to be answered first, with when each was sent and answered.
func logPanels(b *testing.B, what string, r fleetRefresh) {
	spans := slices.Clone(r.panels)
	slices.SortFunc(spans, func(x, y panelSpan) int { return cmp.Compare(y.done, x.done) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %.0f ms: the panels, the last answered first (sent → answered, ms):\n", what, ms(r.wall))
	for _, s := range spans {
		fmt.Fprintf(&sb, "  %6.0f → %6.0f (%5.0f)  %s\n", ms(s.sent), ms(s.done), ms(s.done-s.sent), s.title)
	}
	logLong(b, sb.String())
}

// queryLog is a query log file for the benchmark's Prometheus when -fleet.querylog asks for one, else empty.
func queryLog(b *testing.B) string {
	if !*fleetQueryLog {
		return ""
	}
	return filepath.Join(b.TempDir(), "queries.log")
}

// logServerTimes reads the server's query log and logs, for the queries it answered within the given refreshes (what
// names them), the time it spent on each query (execTotalTime: queued and evaluated), per refresh, the costliest first.
func logServerTimes(b *testing.B, path, what string, within [][2]time.Time) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	type entry struct {
		Time time.Time `json:"time"` // Prometheus 3 (slog)
		TS   time.Time `json:"ts"`   // Prometheus 2
		// RuleGroup marks a rule's evaluation, which the query log holds too: counted apart, as what the
		// refreshes competed with.
		RuleGroup *struct {
			Name string `json:"name"`
		} `json:"ruleGroup"`
		Params struct {
			Query string  `json:"query"`
			Start string  `json:"start"`
			End   string  `json:"end"`
			Step  float64 `json:"step"`
		} `json:"params"`
		Stats struct {
			Timings struct {
				Exec  float64 `json:"execTotalTime"`
				Queue float64 `json:"execQueueTime"`
			} `json:"timings"`
		} `json:"stats"`
	}
	type cost struct {
		exec, queue float64
		n, steps    int // steps: summed over the n asks; an instant query is one
	}
	costs := map[string]*cost{}
	var total, queued, ruleTime float64
	n, rules := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		at := e.Time
		if at.IsZero() {
			at = e.TS
		}
		in := false
		for _, w := range within {
			in = in || !at.Before(w[0]) && !at.After(w[1])
		}
		if !in {
			continue
		}
		if e.RuleGroup != nil {
			rules, ruleTime = rules+1, ruleTime+e.Stats.Timings.Exec
			continue
		}
		c := costs[e.Params.Query]
		if c == nil {
			c = &cost{}
			costs[e.Params.Query] = c
		}
		c.exec, c.queue, c.n = c.exec+e.Stats.Timings.Exec, c.queue+e.Stats.Timings.Queue, c.n+1
		c.steps++
		if from, to, err := parseLogTimes(e.Params.Start, e.Params.End); err == nil && e.Params.Step > 0 {
			c.steps += int(to.Sub(from).Seconds() / e.Params.Step)
		}
		total, queued, n = total+e.Stats.Timings.Exec, queued+e.Stats.Timings.Queue, n+1
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	queries := slices.Collect(maps.Keys(costs))
	sort.Slice(queries, func(i, j int) bool { return costs[queries[i]].exec > costs[queries[j]].exec })
	var sb strings.Builder
	refreshes := float64(max(len(within), 1))
	fmt.Fprintf(&sb, "%s (%d): %.1f queries and %.0f ms of server time each (%.0f ms of it queued); meanwhile %.1f rule evaluations and %.0f ms; costliest first, per refresh:\n",
		what, len(within), float64(n)/refreshes, total*1000/refreshes, queued*1000/refreshes, float64(rules)/refreshes, ruleTime*1000/refreshes)
	for i, q := range queries {
		if i == 15 {
			break
		}
		c := costs[q]
		if len(q) > 300 {
			q = q[:300] + "…"
		}
		fmt.Fprintf(&sb, "%7.1f ms  (%.1f×, %.0f steps)  %s\n", c.exec*1000/refreshes, float64(c.n)/refreshes, float64(c.steps)/float64(c.n), q)
	}
	logLong(b, sb.String())
}

// parseLogTimes reads a query log entry's start and end (RFC 3339).
func parseLogTimes(start, end string) (from, to time.Time, err error) {
	if from, err = time.Parse(time.RFC3339Nano, start); err != nil {
		return
	}
	to, err = time.Parse(time.RFC3339Nano, end)
	return
}

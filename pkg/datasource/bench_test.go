package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/proctest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/role"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// simHour returns one hour of 5 s scrapes of a single-engine vLLM V1 server, parsed.
func simHour(b testing.TB, start time.Time) []*exposition.Scrape {
	b.Helper()
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-qps=4", "-seed=7"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	fleet, err := sim.NewFleet(cfg, start)
	if err != nil {
		b.Fatal(err)
	}
	var out []*exposition.Scrape
	for el := time.Duration(0); el < time.Hour; el += 5 * time.Second {
		fleet.AdvanceTo(el)
		var buf bytes.Buffer
		if err := fleet.WriteExposition(&buf); err != nil {
			b.Fatal(err)
		}
		sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{Keep: func(n string) bool { return len(n) > 4 && n[:4] == "vllm" }})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, sc)
	}
	return out
}

// BenchmarkQueryData measures a dashboard panel query answered from one hour of history: TTFT p95 per engine
// plus KV usage, over the last hour at a 15 s step, with 1, 64 and 256 endpoints held.
func BenchmarkQueryData(b *testing.B) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	scrapes := simHour(b, start)
	for _, n := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			store := history.New(history.Options{Retention: 2 * time.Hour, MaxBytes: 8 << 30})
			for e := 0; e < n; e++ {
				ep := fmt.Sprintf("vllm-%03d", e)
				for i, sc := range scrapes {
					store.Append(ep, start.Add(time.Duration(i)*5*time.Second).UnixMilli(), sc)
				}
			}
			d := &Datasource{uid: "bench", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(5 * time.Second)},
				mode: &direct{store: store, scraper: scraper.New(nil, store, scraper.Options{Interval: time.Second}),
					engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: 5 * time.Second}}}
			ttft, _ := json.Marshal(map[string]any{"queryType": "latency", "metric": "ttft", "quantiles": []float64{0.95}})
			kv, _ := json.Marshal(map[string]any{"queryType": "kv_cache_usage"})
			end := start.Add(time.Hour)
			req := &backend.QueryDataRequest{Queries: []backend.DataQuery{
				{RefID: "A", JSON: ttft, TimeRange: backend.TimeRange{From: start, To: end}, Interval: 15 * time.Second, MaxDataPoints: 1000},
				{RefID: "B", JSON: kv, TimeRange: backend.TimeRange{From: start, To: end}, Interval: 15 * time.Second, MaxDataPoints: 1000},
			}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := d.QueryData(context.Background(), req)
				if err != nil || resp.Responses["A"].Error != nil || len(resp.Responses["A"].Frames) < n {
					b.Fatalf("bad answer: %v %v", err, resp.Responses["A"].Error)
				}
			}
			b.ReportMetric(float64(store.Bytes())/(1<<20), "history-MiB")
		})
	}
}

// refreshFleet is a direct-mode data source holding an hour of n identical simulated endpoints (vLLM V1, two
// engines, speculative decoding, errors), and the simulator that keeps producing their next scrape.
type refreshFleet struct {
	d     *Datasource
	store *history.Store
	sim   *sim.Fleet
	start time.Time
	el    time.Duration // since start, of the newest scrape
	n     int
	// lag is how long after the newest scrape a refresh comes (refreshLag unless a test sets it).
	lag time.Duration
}

// refreshLag is when a refresh comes between two scrapes: a viewer's refresh is not timed to the scrapes, so half
// an interval after the newest on average. With the fleet's phase, the refresh that adds a step ends in it before
// any scrape has: what the scraper's watermark (scraper.Scraper.Settle) is for.
const refreshLag = 2500 * time.Millisecond

// timeOnly is the fleet's scraper's recorder: the fleet's clock is simulated, so the fleet gives the store the
// watermark itself, at each refresh's end, as the scraper does between rounds on the wall clock.
type timeOnly struct{ *history.Store }

// AdvanceWatermark ignores the wall clock's watermark.
func (timeOnly) AdvanceWatermark(int64) {}

func newRefreshFleet(b testing.TB, n int) *refreshFleet {
	b.Helper()
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-engines=2", "-qps=8", "-spec-tokens=3", "-error-rate=0.02", "-seed=7"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	// The scrapes come a second before each 15 s step begins (time.Truncate counts from a multiple of 15 s before
	// the Unix epoch), so a refresh more than a second after one ends in a step that no scrape has reached yet.
	f := &refreshFleet{start: time.Now().Add(-time.Hour - RetentionMargin).Truncate(15 * time.Second).Add(-time.Second), n: n, lag: refreshLag}
	if f.sim, err = sim.NewFleet(cfg, f.start); err != nil {
		b.Fatal(err)
	}
	st := Settings{ScrapeInterval: Duration(5 * time.Second), MaxMemoryMB: 2048}
	st.Retention = Duration(time.Hour)
	f.store = history.New(history.Options{Retention: st.HistoryRetention(), MaxBytes: st.HistoryBytes()})
	f.d = &Datasource{uid: "bench", streams: newStreamRegistry(), settings: st,
		mode: &direct{store: f.store, scraper: scraper.New(nil, timeOnly{f.store}, scraper.Options{Interval: time.Second}),
			engine: &query.Engine{Source: query.HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: query.NewCache(st.CacheBytes())}}}
	for f.el < time.Hour+RetentionMargin { // a steady state: the oldest scrapes are being dropped
		f.scrape(b)
	}
	return f
}

// scrape records the fleet's next scrape, 5 s after the previous one, on every endpoint.
func (f *refreshFleet) scrape(b testing.TB) {
	f.el += 5 * time.Second
	f.sim.AdvanceTo(f.el)
	var buf bytes.Buffer
	if err := f.sim.WriteExposition(&buf); err != nil {
		b.Fatal(err)
	}
	sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{NormalizeFloatLabels: true,
		Keep: func(n string) bool { return len(n) > 4 && n[:4] == "vllm" }})
	if err != nil {
		b.Fatal(err)
	}
	for e := range f.n {
		f.store.Append(fmt.Sprintf("vllm-%03d", e), f.start.Add(f.el).UnixMilli(), sc)
	}
	// As the scraper does once history has it: the collector the refreshes run beside is then paced as the plugin's is.
	sc.Release()
}

// end is when the next refresh comes: lag after the newest scrape.
func (f *refreshFleet) end() time.Time { return f.start.Add(f.el + f.lag) }

// request is a panel's request as Grafana sends it on a refresh: its queries over the last hour ending now (end),
// after the scraper, between rounds, gave the watermark.
func (f *refreshFleet) request(p dashtest.Panel) *backend.QueryDataRequest {
	end := f.end()
	f.store.AdvanceWatermark(end.UnixMilli() - 1)
	req := &backend.QueryDataRequest{}
	for _, t := range p.Targets {
		j, _ := json.Marshal(t)
		req.Queries = append(req.Queries, backend.DataQuery{RefID: fmt.Sprint(t["refId"]), QueryType: fmt.Sprint(t["queryType"]), JSON: j,
			TimeRange: backend.TimeRange{From: end.Add(-time.Hour), To: end}, Interval: 15 * time.Second, MaxDataPoints: 1000})
	}
	return req
}

// refresh sends every panel of the dashboard as Grafana does on a refresh: one request per panel (request).
func (f *refreshFleet) refresh(b testing.TB, panels []dashtest.Panel) {
	for _, p := range panels {
		resp, err := f.d.QueryData(context.Background(), f.request(p))
		if err != nil {
			b.Fatal(err)
		}
		for ref, r := range resp.Responses {
			if r.Error != nil {
				b.Fatalf("%s %s: %v", p.Title, ref, r.Error)
			}
		}
	}
}

// BenchmarkDashboardRefresh refreshes every panel of the fleet overview dashboard over the last hour at a 15 s step
// for 1, 64 and 256 endpoints: cold (an empty results cache) and warm, the same data source refreshed after each of
// the next three scrapes (5 s apart: one full 15 s step, so one refresh in three adds a step), each refresh
// refreshLag after its scrape, measured in the same run. The warm figure is the mean over those refreshes;
// ms-warm-newstep and ms-warm-samestep split it by whether the refresh's range ends in a step the previous one did
// not reach, MiB-alloc-newstep is what a refresh that adds a step allocates, and cursor-MiB what the history's rate
// cursors hold at the end (within their bound, every new step's rate reads are a cursor's). They run under the memory
// limit of a data source with the default maxMemoryMB, as the plugin's refreshes do.
func BenchmarkDashboardRefresh(b *testing.B) {
	panels, err := dashtest.Panels("../../dashboards/vllm-fleet.json", map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "datasource": "bench"})
	if err != nil {
		b.Fatal(err)
	}
	const step = 15 * time.Second
	for _, n := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			f := newRefreshFleet(b, n)
			eng := f.d.mode.(*direct).engine
			cache := eng.Cache
			// The refreshes run under the runtime memory limit a data source with the default maxMemoryMB sets (whose
			// history holds this fleet's hour), as the plugin's do: near it, what a refresh allocates costs collections.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(Settings{MaxMemoryMB: DefaultMaxMemoryMB}.MaxMemoryBytes() + memOverhead))
			f.refresh(b, panels) // the viewer opened the dashboard
			opened := cache.Stats()
			var cold, warm, newStep, sameStep, coldCPU, warmCPU time.Duration
			var refreshes, newSteps int
			var newStepAlloc uint64
			b.ResetTimer()
			for b.Loop() {
				for range step / (5 * time.Second) {
					b.StopTimer()
					before := f.end().UnixMilli() / step.Milliseconds()
					f.scrape(b)
					added := f.end().UnixMilli()/step.Milliseconds() != before
					a0 := proctest.HeapAllocated()
					b.StartTimer()
					t0, c0 := time.Now(), proctest.CPUTime(b)
					f.refresh(b, panels)
					took := time.Since(t0)
					warm += took
					warmCPU += proctest.CPUTime(b) - c0
					refreshes++
					if added {
						newStep += took
						newSteps++
						newStepAlloc += proctest.HeapAllocated() - a0
					} else {
						sameStep += took
					}
				}
				eng.Cache = query.NewCache(f.d.settings.CacheBytes()) // another viewer's first load
				t0, c0 := time.Now(), proctest.CPUTime(b)
				f.refresh(b, panels)
				cold += time.Since(t0)
				coldCPU += proctest.CPUTime(b) - c0
				eng.Cache = cache
			}
			b.StopTimer()
			six := f.coldSixAtATime(b, panels)
			ms := func(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(max(n, 1)) }
			b.ReportMetric(ms(six.cpu, 1), "ms-cold6-cpu")
			b.ReportMetric(float64(six.peak)/(1<<20), "cold6-peak-MiB")
			b.ReportMetric(ms(cold, b.N), "ms-cold")
			b.ReportMetric(ms(warm, refreshes), "ms-warm")
			b.ReportMetric(ms(newStep, newSteps), "ms-warm-newstep")
			b.ReportMetric(ms(sameStep, refreshes-newSteps), "ms-warm-samestep")
			b.ReportMetric(float64(newStepAlloc)/float64(max(newSteps, 1))/(1<<20), "MiB-alloc-newstep")
			b.ReportMetric(float64(warm)/float64(refreshes)/(float64(cold)/float64(b.N)), "warm/cold")
			b.ReportMetric(ms(coldCPU, b.N), "ms-cold-cpu")
			b.ReportMetric(ms(warmCPU, refreshes), "ms-warm-cpu")
			st := cache.Stats()
			b.ReportMetric(float64(st.Bytes)/(1<<20), "cache-MiB")
			computed, reused := st.Computed-opened.Computed, st.Reused-opened.Reused
			b.ReportMetric(float64(computed)/float64(computed+reused), "warm-steps-computed-share")
			b.ReportMetric(float64(f.store.Bytes())/(1<<20), "history-MiB")
			b.ReportMetric(float64(f.store.CursorBytes())/(1<<20), "cursor-MiB")
		})
	}
}

// sixLoad is what a cold load six panel requests at a time cost.
type sixLoad struct {
	cpu  time.Duration
	peak uint64 // the most memory the Go runtime held meanwhile (not released to the system), heap and the rest
}

// coldSixAtATime loads the dashboard cold (an empty results cache) as Grafana does, six panel requests at a time,
// under the runtime memory limit a data source with the default maxMemoryMB sets (memlimit.go), and samples the
// memory the runtime holds: what the query working set adds to history. It comes after a scrape, as a viewer's
// first load does: each endpoint's write drops what earlier refreshes' reads left in the history's memo.
func (f *refreshFleet) coldSixAtATime(b *testing.B, panels []dashtest.Panel) sixLoad {
	f.scrape(b)
	eng := f.d.mode.(*direct).engine
	cache := eng.Cache
	defer func() { eng.Cache = cache }()
	eng.Cache = query.NewCache(f.d.settings.CacheBytes())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(Settings{MaxMemoryMB: DefaultMaxMemoryMB}.MaxMemoryBytes() + memOverhead))
	debug.FreeOSMemory() // what the benchmark's earlier phases left mapped does not count
	// All the runtime has mapped but what it released to the operating system: about what the process's RSS holds.
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var peak atomic.Uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64() - sample[1].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	c0 := proctest.CPUTime(b)
	work := make(chan dashtest.Panel)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				f.refresh(b, []dashtest.Panel{p})
			}
		}()
	}
	for _, p := range panels {
		work <- p
	}
	close(work)
	wg.Wait()
	cpu := proctest.CPUTime(b) - c0
	close(stop)
	<-sampled
	return sixLoad{cpu: cpu, peak: peak.Load()}
}

// BenchmarkRoleOverhead measures what a role filter adds to a panel query over 64 endpoints and an hour of history:
// the five evidence queries of pkg/role besides the query itself, with the results cache as in production (warm,
// the way a dashboard refresh finds it) and without it (cold), and with the role cache (a refresh within
// role.CacheTTL of the last, as in production).
func BenchmarkRoleOverhead(b *testing.B) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	scrapes := simHour(b, start)
	store := history.New(history.Options{Retention: 2 * time.Hour, MaxBytes: 8 << 30})
	for e := 0; e < 64; e++ {
		for i, sc := range scrapes {
			store.Append(fmt.Sprintf("vllm-%03d", e), start.Add(time.Duration(i)*5*time.Second).UnixMilli(), sc)
		}
	}
	end := start.Add(time.Hour)
	for _, c := range []struct {
		name      string
		model     map[string]any
		cache     bool
		roleCache bool
	}{
		{"plain/cold", map[string]any{"queryType": "queue", "measure": "running", "groupBy": "endpoint"}, false, false},
		{"role/cold", map[string]any{"queryType": "queue", "measure": "running", "groupBy": "endpoint", "role": ".*"}, false, false},
		{"plain/warm", map[string]any{"queryType": "queue", "measure": "running", "groupBy": "endpoint"}, true, false},
		{"role/warm", map[string]any{"queryType": "queue", "measure": "running", "groupBy": "endpoint", "role": ".*"}, true, false},
		{"role/warm+roles", map[string]any{"queryType": "queue", "measure": "running", "groupBy": "endpoint", "role": ".*"}, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			eng := &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: 5 * time.Second}
			if c.cache {
				eng.Cache = query.NewCache(64 << 20)
			}
			d := &Datasource{uid: "bench", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(5 * time.Second)},
				mode: &direct{store: store, scraper: scraper.New(nil, store, scraper.Options{Interval: time.Second}), engine: eng}}
			if c.roleCache {
				d.roleCache = role.NewCache()
			}
			js, _ := json.Marshal(c.model)
			req := &backend.QueryDataRequest{Queries: []backend.DataQuery{
				{RefID: "A", JSON: js, TimeRange: backend.TimeRange{From: start, To: end}, Interval: 15 * time.Second, MaxDataPoints: 1000},
			}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := d.QueryData(context.Background(), req)
				if err != nil || resp.Responses["A"].Error != nil || len(resp.Responses["A"].Frames) != 64 {
					b.Fatalf("bad answer: %v %v", err, resp.Responses["A"].Error)
				}
			}
		})
	}
}

package query

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// cacheFleet is one simulator per flavor, with what the catalog's measures need switched on.
var cacheFleet = map[string][]string{
	"v1":       {"-flavor=vllm-v1", "-engines=2", "-qps=20", "-spec-tokens=3", "-error-rate=0.05", "-seed=31", "-external-prefix-hit-rate=0.3", "-mm-items=2", "-mm-hit-rate=0.5"},
	"v1-0.10":  {"-flavor=vllm-v1-0.10", "-engines=2", "-qps=10", "-spec-tokens=2", "-seed=32"},
	"v0":       {"-flavor=vllm-v0", "-qps=8", "-spec-tokens=2", "-seed=33"},
	"ascend":   {"-flavor=vllm-ascend", "-engines=2", "-qps=10", "-spec-tokens=2", "-error-rate=0.05", "-seed=34"},
	"dynamo":   {"-flavor=dynamo-worker", "-engines=2", "-qps=8", "-spec-tokens=2", "-seed=35"},
	"frontend": {"-flavor=dynamo-frontend", "-qps=8", "-seed=36"},
	"decode":   {"-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-fail-rate=0.05", "-engines=2", "-qps=10", "-seed=37"},
	"offload":  {"-flavor=vllm-v1", "-kv-offload-gb=20", "-kv-offload-fail-rate=0.05", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=38"},
	"lmcache":  {"-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.4", "-qps=10", "-seed=39"},
}

// liveFleet appends simulated scrapes to a history store as a scraper would, with the disturbances the cache must
// notice: failed scrapes, trimming, and samples written into the past.
type liveFleet struct {
	t     *testing.T
	store *history.Store
	sims  map[string]*sim.Fleet
	names []string
	start time.Time
	el    time.Duration // elapsed simulated time of the newest scrape
	rng   *rand.Rand    // for the late samples' labels
	// downs and late count the failed scrapes and the samples written into the past.
	downs, late int
}

func newLiveFleet(t *testing.T, retention time.Duration) *liveFleet {
	return newLiveFleetOf(t, retention, cacheFleet)
}

// newLiveFleetOf is newLiveFleet with simulator flags by endpoint.
func newLiveFleetOf(t *testing.T, retention time.Duration, flavors map[string][]string) *liveFleet {
	t.Helper()
	// Scrapes fall between steps, as they do in practice, so a range can end on a step after the newest scrape.
	f := &liveFleet{t: t, store: history.New(history.Options{Retention: retention}), sims: map[string]*sim.Fleet{},
		start: time.UnixMilli(1_700_000_002_500), rng: rand.New(rand.NewPCG(16, 17))}
	for name, args := range flavors {
		cfg, err := sim.ParseArgs(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sim.NewFleet(cfg, f.start)
		if err != nil {
			t.Fatal(err)
		}
		s.SetProfilingEnabled(true)
		f.sims[name] = s
		f.names = append(f.names, name)
	}
	slices.Sort(f.names) // the disturbances pick endpoints by index: the same ones every run
	return f
}

// scrape advances every simulator by 5 s and records each endpoint's exposition, except that endpoint down fails
// its scrape and endpoint late also writes a sample carrying its own timestamp a minute in the past.
func (f *liveFleet) scrape(down, late string) {
	f.el += 5 * time.Second
	ts := f.start.Add(f.el).UnixMilli()
	for _, name := range f.names {
		s := f.sims[name]
		s.AdvanceTo(f.el)
		var buf bytes.Buffer
		if err := s.WriteExposition(&buf); err != nil {
			f.t.Fatal(err)
		}
		sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{NormalizeFloatLabels: true})
		if err != nil {
			f.t.Fatal(err)
		}
		switch name {
		case down:
			sc = &exposition.Scrape{} // every series gets a staleness marker
			f.downs++
		case late:
			f.late++
			rank := fmt.Sprint(10 + f.rng.IntN(1000))
			sc.Add(exposition.Family{Name: "vllm:num_requests_running", Type: exposition.TypeGauge, Samples: []exposition.Sample{{
				Name: "vllm:num_requests_running", Labels: exposition.Labels{{Name: "engine", Value: rank}, {Name: "model_name", Value: "late"}},
				Value: 3, TimestampMs: ts - 60_000, HasTimestamp: true}}})
		}
		f.store.Append(name, ts, sc)
	}
}

// engines returns an engine over the fleet's history with cache, and one that caches nothing and reads points
// (fullReads), whose answers the first's must equal.
func (f *liveFleet) engines(cache *Cache) (cached, plain *Engine) {
	return &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: cache},
		&Engine{Source: fullReads{HistorySource{Store: f.store}}, ScrapeInterval: 5 * time.Second}
}

// cacheQueries is every catalog formula (balance scores and latency families included) with a random grouping.
func cacheQueries(rng *rand.Rand) []Query {
	groups := []Group{GroupEngine, GroupEndpoint, GroupModel, GroupFleet}
	var qs []Query
	for _, e := range measure.Catalog {
		if probe := (Query{QueryType: e.Type, Measure: e.Name}); e.Type == TypeDiagnosis || e.Type == TypePromQL || probe.Composed() {
			continue // not formulas, or composed by the data source (pkg/role, pkg/lora)
		}
		q := Query{QueryType: e.Type, Measure: e.Name, GroupBy: groups[rng.IntN(len(groups))]}
		switch e.Type {
		case TypeLatency:
			q.Metric = []string{"ttft", "itl", "e2e"}[rng.IntN(3)]
			threshold := []float64{0.3, 0.5, 20}[rng.IntN(3)] // between bounds, at one, past the last
			q.Threshold = &threshold
		case TypeRaw:
			q.Metric = "vllm:num_requests_running"
			qs = append(qs, Query{QueryType: TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: HistogramQuantiles, GroupBy: q.GroupBy})
		case TypeDPBalance:
			for _, s := range BalanceScores {
				qs = append(qs, Query{QueryType: e.Type, Measure: e.Name, Score: s, GroupBy: q.GroupBy})
			}
		}
		if rng.IntN(4) == 0 {
			q.Endpoint = "v1|ascend"
		}
		qs = append(qs, q)
	}
	return qs
}

// TestCacheMatchesUncached refreshes every catalog entry (and the diagnosis) over a live simulated fleet at random
// moments, ranges and steps, and requires the cached engine's answers to be identical to an uncached engine's on the
// same history: values bit for bit, series, labels, order and notices. The history's retention is shorter than the
// longest range, so trimming moves under the cache, and some scrapes fail or write into the past, or land before a
// watermark given at every other refresh (history.Store.AdvanceWatermark). The uncached
// engine reads every point of a gauge's lookback (fullReads), the cached one only the newest before its first step
// (LatestSource), so the test holds both shortcuts to the plain evaluation.
func TestCacheMatchesUncached(t *testing.T) {
	f := newLiveFleet(t, 20*time.Minute)
	for range 25 * 12 { // 25 minutes of history: the retention already trims
		f.scrape("", "")
	}
	cache := NewCache(256 << 20)
	cached, plain := f.engines(cache)
	ctx := context.Background()
	compared := 0
	queries := cacheQueries(rand.New(rand.NewPCG(3, 4))) // a dashboard: the same queries refreshed
	// The refresh schedule draws from its own source, so a catalog entry added does not reshuffle it.
	rng := rand.New(rand.NewPCG(5, 6))
	for refresh := range 16 {
		for i := range 1 + rng.IntN(4) { // at least one scrape, so every other refresh fails one or writes into the past
			switch {
			case i == 0 && refresh%4 == 1:
				f.scrape(f.names[rng.IntN(len(f.names))], "")
			case i == 0 && refresh%4 == 3:
				f.scrape("", f.names[rng.IntN(len(f.names))])
			default:
				f.scrape("", "")
			}
		}
		now := f.start.Add(f.el + time.Duration(rng.IntN(10_000))*time.Millisecond) // up to two scrapes not yet recorded
		if refresh%2 == 0 {
			// The writer's word that nothing more comes before now, as the scraper gives it between rounds; the
			// scrapes still to come before now break it, which must change their endpoints' revisions.
			f.store.AdvanceWatermark(now.UnixMilli() - 1)
		}
		span := []time.Duration{10 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute}[rng.IntN(4)]
		r := Request{From: now.Add(-span), To: now, Interval: []time.Duration{5 * time.Second, 15 * time.Second}[rng.IntN(2)], MaxDataPoints: 1000}
		for _, q := range queries {
			want, werr := plain.Eval(ctx, q, r)
			got, gerr := cached.Eval(ctx, q, r)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("refresh %d %+v: error %v, uncached %v", refresh, q, gerr, werr)
			}
			if werr == nil {
				if diff := resultDiff(want, got); diff != "" {
					t.Fatalf("refresh %d %+v over %s at %s: %s", refresh, q, span, r.Interval, diff)
				}
				compared++
			}
		}
		base := Query{QueryType: TypeDiagnosis}
		wantF, _, werr := Diagnose(ctx, base, func(ctx context.Context, q Query) ([]Output, error) {
			res, err := plain.Eval(ctx, q, Request{From: now.Add(-DiagnosisWindow), To: now, Interval: r.Interval})
			if err != nil {
				return nil, err
			}
			return res.Outputs, nil
		})
		gotF, _, gerr := Diagnose(ctx, base, func(ctx context.Context, q Query) ([]Output, error) {
			res, err := cached.Eval(ctx, q, Request{From: now.Add(-DiagnosisWindow), To: now, Interval: r.Interval})
			if err != nil {
				return nil, err
			}
			return res.Outputs, nil
		})
		if werr != nil || gerr != nil || !reflect.DeepEqual(wantF, gotF) {
			t.Fatalf("refresh %d: diagnosis differs: %v %v\n%+v\n%+v", refresh, werr, gerr, gotF, wantF)
		}
	}
	st := cache.Stats()
	t.Logf("%d answers compared; steps reused %d, computed %d; %d entries, %d bytes; %d failed scrapes, %d samples into the past",
		compared, st.Reused, st.Computed, st.Entries, st.Bytes, f.downs, f.late)
	if f.downs == 0 || f.late == 0 {
		t.Errorf("the fleet should have failed scrapes (%d) and samples written into the past (%d)", f.downs, f.late)
	}
	// Each span and step's first refresh and each late sample start cold, and a 30-minute range over 20 minutes of
	// history recomputes the steps whose history was trimmed since: a fifth reused shows the cache at work.
	if st.Computed == 0 || 4*st.Reused < st.Computed {
		t.Errorf("the refreshes should reuse steps: reused %d, computed %d", st.Reused, st.Computed)
	}
}

// fullReads is a Source without SelectLatest: instant values read from every point of the lookback.
type fullReads struct{ Source }

// resultDiff describes the first difference between two answers; floats are compared bit for bit.
func resultDiff(want, got *Result) string {
	if want.Step != got.Step || want.Window != got.Window {
		return fmt.Sprintf("step/window %s/%s, want %s/%s", got.Step, got.Window, want.Step, want.Window)
	}
	if !reflect.DeepEqual(want.Notices, got.Notices) {
		return fmt.Sprintf("notices %q, want %q", got.Notices, want.Notices)
	}
	if len(want.Outputs) != len(got.Outputs) {
		return fmt.Sprintf("%d series, want %d", len(got.Outputs), len(want.Outputs))
	}
	for i, w := range want.Outputs {
		g := got.Outputs[i]
		if w.Measure != g.Measure || w.Unit != g.Unit || !reflect.DeepEqual(w.Labels, g.Labels) {
			return fmt.Sprintf("series %d is %s %v %s, want %s %v %s", i, g.Measure, g.Labels, g.Unit, w.Measure, w.Labels, w.Unit)
		}
		if len(w.Points) != len(g.Points) {
			return fmt.Sprintf("series %d (%s %v): %d points, want %d", i, w.Measure, w.Labels, len(g.Points), len(w.Points))
		}
		for j, p := range w.Points {
			if q := g.Points[j]; p.T != q.T || math.Float64bits(p.V) != math.Float64bits(q.V) {
				return fmt.Sprintf("series %d (%s %v) point %d: %d=%v, want %d=%v", i, w.Measure, w.Labels, j, q.T, q.V, p.T, p.V)
			}
		}
	}
	return ""
}

// TestCacheEvaluatesOnlyOpenSteps: after one scrape a refresh of the same range computes only the new step, and
// identical queries arriving together (panels sharing a query, a stream's subscribers) compute it once.
func TestCacheEvaluatesOnlyOpenSteps(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 10 * 12 {
		f.scrape("", "")
	}
	cache := NewCache(64 << 20)
	eng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: cache}
	q := Query{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}}
	at := func() Request {
		now := f.start.Add(f.el)
		return Request{From: now.Add(-5 * time.Minute), To: now, Interval: 5 * time.Second}
	}
	if _, err := eng.Eval(context.Background(), q, at()); err != nil {
		t.Fatal(err)
	}
	cold := cache.Stats()
	if cold.Computed != 61 || cold.Reused != 0 {
		t.Fatalf("cold: computed %d, reused %d; want 61 and 0", cold.Computed, cold.Reused)
	}
	f.scrape("", "")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := eng.Eval(context.Background(), q, at()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	warm := cache.Stats()
	if d := warm.Computed - cold.Computed; d != 1 {
		t.Errorf("8 identical refreshes after one scrape computed %d steps, want 1", d)
	}
	if d := warm.Reused - cold.Reused; d != 60+7*61 { // the first shifts the range by one step, the others repeat it
		t.Errorf("reused %d steps, want %d", d, 60+7*61)
	}
}

// TestCacheRedoesStepsABrokenWatermarkReaches: steps after an endpoint's newest scrape, final on the writer's
// watermark, are evaluated again once a scrape lands at or before it after all (the wall clock stepped back), and
// answer as if never cached.
func TestCacheRedoesStepsABrokenWatermarkReaches(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 10 * 12 {
		f.scrape("", "")
	}
	cached, plain := f.engines(NewCache(64 << 20))
	now := f.start.Add(f.el + 9*time.Second)
	f.store.AdvanceWatermark(now.UnixMilli() - 1)
	r := Request{From: now.Add(-2 * time.Minute), To: now, Interval: time.Second}
	ctx := context.Background()
	eval := func(e *Engine, q Query) *Result {
		t.Helper()
		res, err := e.Eval(ctx, q, r)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return res
	}
	queries := []Query{{QueryType: TypeKVCacheUsage}, {QueryType: TypeThroughput, Measure: "generation_tokens"}}
	var earlier []*Result
	for _, q := range queries {
		eval(cached, q)
		earlier = append(earlier, eval(plain, q))
	}
	f.scrape("", "") // stamped 5 s after the newest: before the watermark
	changed := false
	for i, q := range queries {
		want := eval(plain, q)
		if diff := resultDiff(want, eval(cached, q)); diff != "" {
			t.Errorf("%+v after a scrape before the watermark: %s", q, diff)
		}
		changed = changed || resultDiff(earlier[i], want) != ""
	}
	if !changed {
		t.Fatal("the late scrape changed no answer: the test shows nothing")
	}
}

// TestCacheMemoryIsBounded: the counted bytes never exceed the budget, however many distinct queries arrive, and an
// answer larger than a quarter of it is not kept.
func TestCacheMemoryIsBounded(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 10 * 12 {
		f.scrape("", "")
	}
	const budget = 256 << 10
	cache := NewCache(budget)
	eng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: cache}
	now := f.start.Add(f.el)
	for i, q := range cacheQueries(rand.New(rand.NewPCG(1, 2))) {
		r := Request{From: now.Add(-time.Duration(5+i%5) * time.Minute), To: now, Interval: 5 * time.Second}
		if _, err := eng.Eval(context.Background(), q, r); err != nil {
			t.Fatal(err)
		}
		if st := cache.Stats(); st.Bytes > budget {
			t.Fatalf("after %d queries the cache counts %d bytes, over its %d", i+1, st.Bytes, budget)
		}
	}
	st := cache.Stats()
	if st.Entries == 0 {
		t.Error("nothing was kept")
	}
	big := NewCache(4 << 10)
	bigEng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: big}
	if _, err := bigEng.Eval(context.Background(), Query{QueryType: TypeKVCacheUsage}, Request{From: now.Add(-time.Hour), To: now, Interval: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if st := big.Stats(); st.Entries != 0 {
		t.Errorf("an answer over a quarter of the budget was kept: %+v", st)
	}
}

// TestCacheCountsWhatItHolds: the bytes the cache counts are the heap its entries hold, within a factor of two — the
// budget is a real bound, not a guess.
func TestCacheCountsWhatItHolds(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 30 * 12 {
		f.scrape("", "")
	}
	plain := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	queries := cacheQueries(rand.New(rand.NewPCG(3, 4)))
	r := Request{From: now.Add(-30 * time.Minute), To: now, Interval: 5 * time.Second}
	for _, q := range queries { // warm what evaluation itself allocates for good (regexps, interned strings)
		if _, err := plain.Eval(context.Background(), q, r); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cache := NewCache(1 << 30)
	eng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: cache}
	for _, q := range queries {
		if _, err := eng.Eval(context.Background(), q, r); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	counted := cache.Stats().Bytes
	t.Logf("%d entries: counted %d bytes, the heap grew by %d", cache.Stats().Entries, counted, held)
	if counted < held/2 || counted > 2*held {
		t.Errorf("the cache counts %d bytes but holds %d", counted, held)
	}
	runtime.KeepAlive(eng)
}

// TestCacheWaitIsCancellable: a query waiting for an identical one in progress stops waiting when it is cancelled.
func TestCacheWaitIsCancellable(t *testing.T) {
	k := NewCache(1 << 20)
	release, err := k.enter(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := k.enter(ctx, "q"); err == nil {
		t.Fatal("a cancelled wait went on")
	}
	release()
	again, err := k.enter(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(k.flights) != 0 {
		t.Errorf("%d flights left behind", len(k.flights))
	}
}

// TestCacheSharesLabelMaps: two queries of a refresh answer an engine's series with one label map, which the cache
// counts, and it keeps at most maxLabelMaps of them, its count back to zero once they are dropped.
func TestCacheSharesLabelMaps(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 12 {
		f.scrape("", "")
	}
	cache := NewCache(64 << 20)
	eng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second, Cache: cache}
	now := f.start.Add(f.el)
	r := Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second}
	byEngine := map[string]map[string]string{}
	shared := 0
	for _, q := range []Query{{QueryType: TypeKVCacheUsage, GroupBy: GroupEngine}, {QueryType: TypeQueue, Measure: "running", GroupBy: GroupEngine}} {
		res, err := eng.Eval(context.Background(), q, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Outputs {
			k := LabelKey(o.Labels)
			if m, ok := byEngine[k]; ok && reflect.ValueOf(m).Pointer() == reflect.ValueOf(o.Labels).Pointer() {
				shared++
			}
			byEngine[k] = o.Labels
		}
	}
	if shared == 0 {
		t.Errorf("no engine's series of the second query shares the first's label map (%d engines)", len(byEngine))
	}

	k := NewCache(1 << 30)
	for i := range maxLabelMaps + 10 {
		key := labelMapKey{endpoint: fmt.Sprint("ep-", i), model: "m"}
		k.labelMap(key, func() map[string]string { return map[string]string{"endpoint": key.endpoint, "model_name": "m"} })
		if len(k.labels) > maxLabelMaps {
			t.Fatalf("%d label maps kept, over %d", len(k.labels), maxLabelMaps)
		}
	}
	k.mu.Lock()
	k.dropLabelMaps()
	k.mu.Unlock()
	if st := k.Stats(); st.Bytes != 0 {
		t.Errorf("with every label map dropped the cache counts %d bytes", st.Bytes)
	}
}

// TestSharedSelectionsFollowFilters evaluates, between two scrapes, the same rate and gauge measures under different
// model, engine and label filters one after another, so each read finds the others' selections shared (history's
// SelectRatesShared and SelectLatestShared), and requires every answer to equal an engine's that shares nothing and reads points
// (fullReads): a filter the selection's name left out would hand one filter's series to another.
func TestSharedSelectionsFollowFilters(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 12 * 6 {
		f.scrape("", "")
	}
	shared := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	plain := &Engine{Source: fullReads{HistorySource{Store: f.store}}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	r := Request{From: now.Add(-2 * time.Minute), To: now, Interval: 15 * time.Second}
	var qs []Query
	for _, filter := range []struct{ model, engine string }{{"", ""}, {"nothing", ""}, {"", "0"}, {".*", ".*"}, {"", "1"}} {
		for _, q := range []Query{
			{QueryType: TypeLatency, Measure: "quantiles", Metric: "ttft", Quantiles: []float64{0.5, 0.95}},
			{QueryType: TypeThroughput, Measure: "finish_share"},
			{QueryType: TypeThroughput, Measure: "errors"},
			{QueryType: TypeThroughput, Measure: "requests"},
			{QueryType: TypeRaw, Metric: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "stop"}},
			{QueryType: TypeRaw, Metric: "vllm:request_success_total", Labels: map[string]string{"finished_reason": "length"}},
			{QueryType: TypeKVCacheUsage},
			{QueryType: TypeQueue, Measure: "running"},
			{QueryType: TypeRaw, Metric: "vllm:num_requests_running"},
		} {
			q.Model, q.Engine, q.GroupBy = filter.model, filter.engine, GroupEngine
			qs = append(qs, q)
		}
	}
	answered := 0
	for _, q := range qs {
		want, werr := plain.Eval(context.Background(), q, r)
		got, gerr := shared.Eval(context.Background(), q, r)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%+v: errors differ: %v, %v", q, werr, gerr)
		}
		if werr != nil {
			continue
		}
		if d := resultDiff(want, got); d != "" {
			t.Fatalf("%+v: %s", q, d)
		}
		answered += len(got.Outputs)
	}
	if answered == 0 {
		t.Fatal("no series answered")
	}
}

// TestFilterNamesAreDistinct: queries whose filters differ get different selection filter names, however their
// regular expressions are spelled (quotes, NUL bytes, spaces, the words the name is built of), so no query can
// take another's shared selection; the same filters spelled as Grafana's All get the same name.
func TestFilterNamesAreDistinct(t *testing.T) {
	eng := &Engine{Source: HistorySource{Store: history.New(history.Options{})}}
	name := func(q Query, m ...measure.Matcher) string {
		return eng.newEvalCtx(context.Background(), q, Range{From: time.UnixMilli(0), To: time.UnixMilli(60_000), Step: 15 * time.Second}, 0).filterOf(m)
	}
	queries := []Query{
		{QueryType: TypeKVCacheUsage},
		{QueryType: TypeKVCacheUsage, Model: "a", Engine: "b"},
		{QueryType: TypeKVCacheUsage, Model: "b", Engine: "a"},
		{QueryType: TypeKVCacheUsage, Model: "a\x00b"},
		{QueryType: TypeKVCacheUsage, Model: "a", Engine: "\x00b"},
		{QueryType: TypeKVCacheUsage, Model: `a" "b`},
		{QueryType: TypeKVCacheUsage, Model: `a catalog "x"="y"`},
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running"},
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running", Labels: map[string]string{"x": "y"}},
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running", Labels: map[string]string{"x": "y", "z": "w"}},
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running", Labels: map[string]string{`x"="y`: "z"}},
		// The anchored model filter of one, spelled into the other's model filter with NUL bytes around a label's.
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running", Model: "m", Labels: map[string]string{"x": "y"}},
		{QueryType: TypeRaw, Metric: "vllm:num_requests_running", Model: "m)$\x00x\x00^(?:y"},
	}
	seen := map[string]int{}
	for i, q := range queries {
		for j, m := range [][]measure.Matcher{nil, {measure.Match("x", "y")}, {measure.Match("x", "y"), measure.Match("z", "w")}} {
			n := name(q, m...)
			if k, ok := seen[n]; ok {
				t.Errorf("query %d with matchers %d has the filter name of %d: %q", i, j, k, n)
			}
			seen[n] = i
		}
	}
	if all, none := name(Query{QueryType: TypeKVCacheUsage, Model: ".*", Engine: ".*"}), name(queries[0]); all != none {
		t.Errorf("Grafana's All filters are named %q, no filters %q", all, none)
	}
}

// TestCacheAppendsNewStepsInPlace: a refresh that adds a step appends its points into the room the cache left past
// each series' points instead of copying the series' range; no answer handed out earlier ever sees a point change
// (the room past an answer's points is the cache's alone, also when a step after the newest scrape was answered
// but not kept), and every answer equals an uncached engine's.
func TestCacheAppendsNewStepsInPlace(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 6 * 12 {
		f.scrape("", "")
	}
	cached, plain := f.engines(NewCache(64 << 20))
	q := Query{QueryType: TypeThroughput, Measure: "generation_tokens", GroupBy: GroupEngine}
	type held struct {
		pts  []derive.Point
		copy []derive.Point
	}
	var answers []held
	var prev []Output
	inPlace, moved := 0, 0
	rng := rand.New(rand.NewPCG(7, 8))
	var last time.Time
	for refresh := range 40 {
		f.scrape("", "")
		// Every third refresh asks for steps after the newest scrape, which are answered but not kept; the last of
		// them comes after the next scrape, and the next refresh asks for them again (its clock does not go back),
		// with that scrape's points.
		now := f.start.Add(f.el)
		if now.Before(last) {
			now = last
		}
		if refresh%3 == 2 {
			now = now.Add(time.Duration(7500+rng.IntN(2000)) * time.Millisecond)
		}
		last = now
		r := Request{From: now.Add(-5 * time.Minute), To: now, Interval: 5 * time.Second}
		got, err := cached.Eval(context.Background(), q, r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Eval(context.Background(), q, r)
		if err != nil {
			t.Fatal(err)
		}
		if diff := resultDiff(want, got); diff != "" {
			t.Fatalf("refresh %d: %s", refresh, diff)
		}
		for _, o := range got.Outputs {
			if cap(o.Points) != len(o.Points) {
				t.Fatalf("refresh %d: an answer's points leave room (%d of %d) a reader's append would write into", refresh, len(o.Points), cap(o.Points))
			}
			answers = append(answers, held{o.Points, slices.Clone(o.Points)})
		}
		// Where the range moved by k steps, a series appended in place starts at its previous answer's k+1-th point.
		// The first refresh after the cold one copies: a whole evaluation leaves no room.
		if refresh > 1 && len(prev) == len(got.Outputs) && len(prev) > 0 && len(got.Outputs[0].Points) > 0 {
			if k := int((got.Outputs[0].Points[0].T - prev[0].Points[0].T) / 5000); k > 0 && k < len(prev[0].Points) {
				moved++
				if &prev[0].Points[k] == &got.Outputs[0].Points[0] {
					inPlace++
				}
			}
		}
		prev = got.Outputs
	}
	for i, a := range answers {
		if !slices.Equal(a.pts, a.copy) {
			t.Fatalf("answer %d changed after it was handed out", i)
		}
	}
	// Every refresh that moved the range appends in place; the two after a refresh whose newest steps were not kept
	// ask for the same range and copy.
	if moved < 12 || inPlace != moved {
		t.Errorf("%d of %d refreshes appended the new step in place; want all, and at least 12", inPlace, moved)
	}
	t.Logf("%d of %d refreshes appended in place; %d answers held unchanged", inPlace, moved, len(answers))
}

// TestCacheSharesNameSets: endpoints exposing the same names share one name set and id, so a query resolves each
// signal once per distinct set; other names, or an endpoint whose names change, get their own.
func TestCacheSharesNameSets(t *testing.T) {
	k := NewCache(64 << 20)
	lists := map[string][]string{
		"a": {"vllm:kv_cache_usage_perc", "vllm:num_requests_running"},
		"b": {"vllm:kv_cache_usage_perc", "vllm:num_requests_running"},
		"c": {"vllm:gpu_cache_usage_perc", "vllm:num_requests_running"},
		"d": {"vllm:kv_cache_usage_perc"},
	}
	names := func(ep string) []string { return lists[ep] }
	setA, idA := k.nameSet("a", 1, names)
	setB, idB := k.nameSet("b", 2, names)
	_, idC := k.nameSet("c", 3, names)
	_, idD := k.nameSet("d", 4, names)
	if idA == 0 || idA != idB || reflect.ValueOf(setA).Pointer() != reflect.ValueOf(setB).Pointer() {
		t.Errorf("endpoints with the same names: ids %d and %d, one set %v", idA, idB, reflect.ValueOf(setA).Pointer() == reflect.ValueOf(setB).Pointer())
	}
	if idC == idA || idD == idA || idC == idD {
		t.Errorf("other names share an id: a %d, c %d, d %d", idA, idC, idD)
	}
	lists["b"] = lists["c"] // b was upgraded: a new revision, c's names
	setB, idB = k.nameSet("b", 5, names)
	if idB != idC || !setB["vllm:gpu_cache_usage_perc"] || setB["vllm:kv_cache_usage_perc"] {
		t.Errorf("b's new names: id %d (c's %d), set %v", idB, idC, setB)
	}
	// Resolving through the shared ids answers as probing every endpoint would.
	c := &evalCtx{}
	for _, ep := range []string{"a", "b", "c", "d"} {
		set, id := k.nameSet(ep, map[string]uint64{"a": 1, "b": 5, "c": 3, "d": 4}[ep], names)
		c.endpoints = append(c.endpoints, endpointNames{name: ep, names: set, namesID: id})
	}
	var m nameMemo
	for _, ep := range c.endpoints {
		got, ok := m.resolve(ep, vllm.KVUsage)
		want, wok := vllm.KVUsage.Name(func(n string) bool { return slices.Contains(lists[ep.name], n) })
		if got != want || ok != wok {
			t.Errorf("%s: KV usage resolves to %q %v, want %q %v", ep.name, got, ok, want, wok)
		}
	}
}

// TestCacheEntriesAreSizedOnce: an entry holds each output's series in an array of their number, placed once, not
// grown series by series (at 256 endpoints, a new step's entries were copied ten times over).
func TestCacheEntriesAreSizedOnce(t *testing.T) {
	f := newLiveFleet(t, time.Hour)
	for range 12 {
		f.scrape("", "")
	}
	cached, _ := f.engines(NewCache(64 << 20))
	now := f.start.Add(f.el)
	for _, q := range []Query{
		{QueryType: TypeThroughput, Measure: "generation_tokens", GroupBy: GroupEngine},
		{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.95}, GroupBy: GroupEngine},
	} {
		if _, err := cached.Eval(context.Background(), q, Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	k := cached.Cache
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.entries) == 0 {
		t.Fatal("nothing cached")
	}
	for key, el := range k.entries {
		e := el.Value.(*cacheEntry)
		for i := range e.groups {
			if len(e.groups[i]) < 2 || cap(e.groups[i]) != len(e.groups[i]) || cap(e.keys[i]) != len(e.keys[i]) {
				t.Errorf("%s: output %d holds %d series in an array of %d, %d keys in one of %d", key, i,
					len(e.groups[i]), cap(e.groups[i]), len(e.keys[i]), cap(e.keys[i]))
			}
		}
	}
}

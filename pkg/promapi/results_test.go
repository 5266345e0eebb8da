package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// rangeServer answers range queries like Prometheus from a fixed function of time, so any two answers for one step
// agree: series a and b at every step, late only from lateFrom on, gone only up to goneTo; an expression
// containing "warn" comes with a warning. It records each request's steps.
type rangeServer struct {
	lateFrom, goneTo int64 // seconds

	mu   sync.Mutex
	asks [][2]int64 // start, end in seconds
}

func (f *rangeServer) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		_ = r.ParseForm()
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		expr := r.Form.Get("query")
		f.mu.Lock()
		f.asks = append(f.asks, [2]int64{int64(start), int64(end)})
		f.mu.Unlock()
		type series struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		var out []series
		for _, name := range []string{"a", "b", "gone", "late"} {
			s := series{Metric: map[string]string{"instance": name + ":8000", "expr": strconv.Itoa(len(expr))}}
			for ts := int64(start); ts <= int64(end); ts += int64(step) {
				if name == "late" && ts < f.lateFrom || name == "gone" && ts > f.goneTo {
					continue
				}
				s.Values = append(s.Values, [2]any{ts, strconv.FormatInt(ts%997+int64(len(name)*len(expr)), 10)})
			}
			if len(s.Values) > 0 {
				out = append(out, s)
			}
		}
		body := map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": out}}
		if strings.Contains(expr, "warn") {
			body["warnings"] = []string{"a store was left out"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *rangeServer) take() [][2]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asks
	f.asks = nil
	return a
}

// TestResultsAskOnlyForNewSteps: a dashboard's hour at a 15 s step, refreshed every 5 s for five minutes, asks the
// server for the whole range once, then only for the steps after the last one older than the overlap window, and
// answers every refresh exactly as the server answers the whole range: a series that appears within the range, one
// that stops, and the range's start moving past cached steps included.
func TestResultsAskOnlyForNewSteps(t *testing.T) {
	const step, overlap = 15 * time.Second, time.Minute
	t0 := time.Unix(1_800_000_000, 0)
	fake := &rangeServer{lateFrom: t0.Add(2 * time.Minute).Unix(), goneTo: t0.Add(-10 * time.Minute).Unix()}
	url := fake.serve(t).URL
	now := t0
	res := NewResults(64<<20, overlap, nil)
	res.now = func() time.Time { return now }
	cached := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}, Results: res}
	plain := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}}
	ctx := context.Background()
	const expr = `sum by (instance) (rate(x[5m]))`
	var finalBefore int64 // the last step the previous refresh could keep
	for k := 0; k <= 60; k++ {
		now = t0.Add(time.Duration(k) * 5 * time.Second)
		start, end := now.Add(-time.Hour).Truncate(step), now.Truncate(step)
		got, warns, err := cached.QueryRange(ctx, expr, start, end, step)
		if err != nil || len(warns) > 0 {
			t.Fatalf("refresh %d: %v %q", k, err, warns)
		}
		asks := fake.take()
		want, _, err := plain.QueryRange(ctx, expr, start, end, step)
		if err != nil {
			t.Fatal(err)
		}
		fake.take()
		sortMatrix(got)
		sortMatrix(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("refresh %d: the answer differs from the server's for the whole range: %s", k, matrixDiff(got, want))
		}
		if len(asks) != 1 {
			t.Fatalf("refresh %d: %d requests, want 1", k, len(asks))
		}
		from := asks[0][0]
		switch {
		case k == 0 && from != start.Unix():
			t.Errorf("first refresh asked from %d, want the range's start %d", from, start.Unix())
		case k > 0 && from != max(finalBefore+int64(step.Seconds()), start.Unix()):
			t.Errorf("refresh %d asked from %s, want the step after %s, the last older than the overlap window",
				k, time.Unix(from, 0).UTC(), time.Unix(finalBefore, 0).UTC())
		}
		if asks[0][1] != end.Unix() {
			t.Errorf("refresh %d asked up to %d, want the range's end %d", k, asks[0][1], end.Unix())
		}
		finalBefore = now.Add(-overlap).Truncate(step).Unix()
	}
	st := res.Stats()
	if st.Entries != 1 || st.Reused == 0 || st.Asked >= st.Reused/10 {
		t.Errorf("stats %+v: want one entry, and far more steps reused than asked", st)
	}
}

// TestResultsKeepOnlyWhatIsSafe: an answer that came with a warning is asked again whole; so is an expression whose
// steps depend on the range (@ start()) or read the future (a negative offset); the budget holds, and an answer
// larger than a quarter of it is not kept.
func TestResultsKeepOnlyWhatIsSafe(t *testing.T) {
	const step = 15 * time.Second
	t0 := time.Unix(1_800_000_000, 0)
	fake := &rangeServer{lateFrom: 0, goneTo: 1 << 40}
	url := fake.serve(t).URL
	ctx := context.Background()
	start, end := t0.Add(-time.Hour), t0
	for _, expr := range []string{`warn_me`, `x @ start()`, `rate(x[5m] offset -5m)`, `x OFFSET  -1m`} {
		res := NewResults(64<<20, time.Minute, nil)
		res.now = func() time.Time { return t0.Add(time.Hour) }
		c := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}, Results: res}
		for range 2 {
			if _, _, err := c.QueryRange(ctx, expr, start, end, step); err != nil {
				t.Fatal(err)
			}
		}
		asks := fake.take()
		if len(asks) != 2 || asks[1][0] != start.Unix() {
			t.Errorf("%s: asked %v, want the whole range twice", expr, asks)
		}
		if st := res.Stats(); st.Entries != 0 || st.Bytes != 0 {
			t.Errorf("%s: kept %+v", expr, st)
		}
	}

	// Four series of 241 points: about 16 KB an answer.
	one := NewResults(4<<10*4, time.Minute, nil) // a quarter is 16 KiB: nothing fits
	one.now = func() time.Time { return t0.Add(time.Hour) }
	c := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}, Results: one}
	if _, _, err := c.QueryRange(ctx, "a_long_expression", start, end, step); err != nil {
		t.Fatal(err)
	}
	if st := one.Stats(); st.Entries != 0 {
		t.Errorf("an answer over a quarter of the budget was kept: %+v", st)
	}
	small := NewResults(200<<10, time.Minute, nil)
	small.now = one.now
	c.Results = small
	for i := range 40 {
		if _, _, err := c.QueryRange(ctx, fmt.Sprintf("q%d", i), start, end, step); err != nil {
			t.Fatal(err)
		}
		if st := small.Stats(); st.Bytes > 200<<10 || st.Entries == 0 {
			t.Fatalf("after %d answers: %+v, over the 200 KiB budget or empty", i+1, st)
		}
	}
	fake.take()
	if _, _, err := c.QueryRange(ctx, "q39", start, end, step); err != nil { // the most recent is still held
		t.Fatal(err)
	}
	if _, _, err := c.QueryRange(ctx, "q0", start, end, step); err != nil { // the oldest went first
		t.Fatal(err)
	}
	if asks := fake.take(); len(asks) != 1 || asks[0][0] != start.Unix() {
		t.Errorf("asked %v: want q39 from the cache and q0, evicted, asked whole", asks)
	}
}

// TestResultsAnswerAsUncached: on real engines (Prometheus 2 and 3, VictoriaMetrics, Thanos over an HA pair) holding
// three hours of backfilled history, the evaluator's measure queries and the user's PromQL, refreshed as the range
// slides forward step by step, answer exactly as without the cache, while asking the server only for the newest
// steps.
func TestResultsAnswerAsUncached(t *testing.T) {
	now := time.Now().Truncate(time.Minute)
	from := now.Add(-3 * time.Hour)
	om := history(from, int(now.Add(-time.Minute).Sub(from)/time.Minute))
	const step = time.Minute
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus2, promtest.Prometheus3, promtest.VictoriaMetrics151, promtest.ThanosHA) {
		t.Run(eng.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: om})
			res := NewResults(64<<20, 10*time.Minute, nil)
			var clock time.Time
			res.now = func() time.Time { return clock }
			plain := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}
			cachedCounter := &counting{}
			cached := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute, Transport: cachedCounter}, Results: res}
			evs := [2]*Evaluator{}
			for i, c := range []*Client{cached, plain} {
				evs[i] = &Evaluator{Client: c, Discovery: &Discovery{Client: c}, ScrapeInterval: time.Minute}
			}
			ctx := context.Background()
			queries := []query.Query{
				{QueryType: query.TypeQueue, Measure: "running"},
				{QueryType: query.TypeThroughput, Measure: "generation_tokens"},
				{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.95}},
				{QueryType: query.TypePromQL, Expr: `histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[10m])))`},
			}
			for k := range 6 {
				end := now.Add(-90*time.Minute + time.Duration(k)*step)
				clock = end.Add(5 * time.Minute) // the newest steps are within the overlap window
				r := query.Request{From: end.Add(-time.Hour), To: end, Interval: step, MaxDataPoints: 2000}
				for _, q := range queries {
					eval := func(ev *Evaluator) (*Answer, error) {
						if q.QueryType == query.TypePromQL {
							return ev.EvalPromQL(ctx, q, r)
						}
						return ev.Eval(ctx, q, r)
					}
					got, err := eval(evs[0])
					if err != nil {
						t.Fatalf("%s cached: %v", q.QueryType, err)
					}
					want, err := eval(evs[1])
					if err != nil {
						t.Fatalf("%s: %v", q.QueryType, err)
					}
					if len(want.Result.Outputs) == 0 || len(want.Result.Outputs[0].Points) < 50 {
						t.Fatalf("%s: the answer is nearly empty (notices %q)", q.QueryType, want.Result.Notices)
					}
					if !reflect.DeepEqual(got.Result, want.Result) {
						t.Errorf("refresh %d, %s: the cached answer differs from the uncached one", k, q.QueryType)
					}
				}
			}
			st := res.Stats()
			// Each refresh after the first asks about 11 steps (the overlap window and one new step) of each query's 61.
			if st.Reused < 3*st.Asked/2 {
				t.Errorf("stats %+v: the refreshes after the first should take most steps from the cache", st)
			}
		})
	}
}

// fleetHistory is OpenMetrics text of n endpoints from from on, a sample every 15 s: a TTFT histogram of 12 buckets
// and a token counter per endpoint, for a dashboard-sized query.
func fleetHistory(n int, from time.Time, samples int) string {
	var b strings.Builder
	b.WriteString("# TYPE vllm:generation_tokens counter\n# TYPE vllm:time_to_first_token_seconds histogram\n")
	bounds := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "1", "+Inf"}
	for e := range n {
		labels := fmt.Sprintf(`instance="e%03d:8000",engine="0",model_name="m"`, e)
		for i := range samples {
			ts := from.Add(time.Duration(i) * 15 * time.Second).Unix()
			fmt.Fprintf(&b, "vllm:generation_tokens_total{%s} %d %d\n", labels, i*(e%7+3)*40, ts)
			for j, le := range bounds {
				fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{%s,le=%q} %d %d\n", labels, le, i*(j+1+e%3), ts)
			}
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_sum{%s} %g %d\n", labels, float64(i)*0.3, ts)
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{%s} %d %d\n", labels, i*(12+e%3), ts)
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// BenchmarkResultsRefresh measures a dashboard refresh's range queries (an hour at a 15 s step, refreshed once a
// step) against Prometheus 3 holding two hours of 64 endpoints, with the results cache at its default overlap window
// and without it: per refresh, the wall time of three queries (a quantile per endpoint, a rate per endpoint, a fleet
// sum) and the steps asked of the server. The first, cold refresh of each is left out.
func BenchmarkResultsRefresh(b *testing.B) {
	now := time.Now().Truncate(time.Minute)
	from := now.Add(-2 * time.Hour)
	srv := promtest.Start(b, promtest.Options{Engine: promtest.EnginesOf(b, promtest.Prometheus3)[0],
		OpenMetrics: fleetHistory(64, from, int(2*time.Hour/(15*time.Second))-4)})
	exprs := []string{
		`histogram_quantile(0.95, sum by (instance, le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))`,
		`sum by (instance) (rate(vllm:generation_tokens_total[1m]))`,
		`sum(rate(vllm:time_to_first_token_seconds_count[5m]))`,
	}
	const step = 15 * time.Second
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached=%t", cached), func(b *testing.B) {
			var clock time.Time
			c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}
			if cached {
				c.Results = NewResults(256<<20, 10*time.Minute, nil)
				c.Results.now = func() time.Time { return clock }
			}
			refresh := func(k int) {
				end := now.Add(-50*time.Minute + time.Duration(k%120)*step)
				clock = end.Add(5 * time.Second)
				for _, e := range exprs {
					if _, _, err := c.QueryRange(context.Background(), e, end.Add(-time.Hour), end, step); err != nil {
						b.Fatal(err)
					}
				}
			}
			refresh(0)
			var before ResultsStats
			if cached {
				before = c.Results.Stats()
			}
			k := 1
			for b.Loop() {
				refresh(k)
				k++
			}
			if cached {
				st := c.Results.Stats()
				asked, reused := st.Asked-before.Asked, st.Reused-before.Reused
				b.ReportMetric(float64(asked)/float64(asked+reused), "asked/steps")
			}
		})
	}
}

// TestResultsShareQueriesInFlight: identical range queries arriving while one is being answered (viewers of one
// dashboard refreshing together) wait for its answer, and the server is asked once; a waiter whose own request is
// cancelled stops waiting.
func TestResultsShareQueriesInFlight(t *testing.T) {
	asked := make(chan struct{}, 8)
	release := make(chan struct{})
	fake := &rangeServer{lateFrom: 0, goneTo: 1 << 40}
	inner := fake.serve(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-release
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	res := NewResults(64<<20, time.Minute, nil)
	c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}, Results: res}
	end := time.Unix(1_800_000_000, 0)
	start, step := end.Add(-time.Hour), 15*time.Second
	const n = 5
	answers := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ask := func(i int, ctx context.Context) {
		defer wg.Done()
		m, _, err := c.QueryRange(ctx, "x", start, end, step)
		answers[i], errs[i] = points(m), err
	}
	wg.Add(1)
	go ask(0, context.Background())
	<-asked
	cancelled, cancel := context.WithCancel(context.Background())
	for i := 1; i < n; i++ {
		wg.Add(1)
		ctx := context.Background()
		if i == n-1 {
			ctx = cancelled
		}
		go ask(i, ctx)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res.mu.Lock()
		waiting := 0
		for _, f := range res.flights {
			waiting += f.waiters
		}
		res.mu.Unlock()
		if waiting == n-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d queries wait for the one in flight", waiting, n-1)
		}
	}
	cancel()
	close(release)
	wg.Wait()
	if len(asked) != 0 {
		t.Errorf("the server was asked %d more times", len(asked))
	}
	for i := range n - 1 {
		if errs[i] != nil || answers[i] != answers[0] || answers[0] == 0 {
			t.Errorf("query %d: %d points, %v; the first had %d", i, answers[i], errs[i], answers[0])
		}
	}
	if !errors.Is(errs[n-1], context.Canceled) {
		t.Errorf("the cancelled waiter: %v, want context.Canceled", errs[n-1])
	}
}

// BenchmarkResultsWithinAStep is a refresh within a step on an hour of 1 000 kept series: every step is taken from
// the cache and nothing is asked.
func BenchmarkResultsWithinAStep(b *testing.B) {
	const step = 15 * time.Second
	t0 := time.Unix(1_800_000_000, 0)
	var m model.Matrix
	for i := range 1000 {
		v := make([]model.SamplePair, 241)
		for k := range v {
			v[k] = model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(k) * step).UnixNano()), Value: 1}
		}
		m = append(m, &model.SampleStream{Metric: model.Metric{"instance": model.LabelValue(fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250)),
			"engine": model.LabelValue(strconv.Itoa(i % 8))}, Values: v})
	}
	end := t0.Add(240 * step)
	res := NewResults(256<<20, 10*time.Minute, &finalAt{final: end})
	res.now = func() time.Time { return end }
	key := resultsKey("x", t0.UnixMilli(), step.Milliseconds())
	res.store(key, t0.UnixMilli(), end.UnixMilli(), m)
	fetch := func(context.Context, time.Time, time.Time) (model.Matrix, []string, error) {
		b.Fatal("a refresh within a step asked the server")
		return nil, nil, nil
	}
	for b.Loop() {
		got, _, err := res.answer(context.Background(), key, t0.UnixMilli(), end.UnixMilli(), step.Milliseconds(), t0, end, fetch)
		if err != nil || len(got) != 1000 || len(got[0].Values) != 241 {
			b.Fatal(len(got), err)
		}
	}
}

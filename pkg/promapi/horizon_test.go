package promapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// horizonServer answers buildinfo, flags, the targets and rules APIs and the horizon query as a server of one kind
// would: jobs vllm and vllm.decode, scraped every 5 and 10 s, and the rule group inferscope-rates-5m, every 5 s.
type horizonServer struct {
	version string            // buildinfo's version; empty: no buildinfo (404)
	flags   map[string]string // nil: no flags endpoint (404)
	// up is the newest scrape of job vllm's targets, in seconds (0: no up series); vllm.decode's is 2 s older.
	up float64
	// rules is the newest heartbeat of group inferscope-rates-5m (0: none).
	rules float64
	// noIntervals leaves the targets and rules APIs out (404).
	noIntervals bool
	// silentGroup is a generated group the rules API lists without a heartbeat (an older rules file).
	silentGroup string
	queries     atomic.Int32
	exprs       []string
	mu          sync.Mutex
}

func (f *horizonServer) serve(t *testing.T) *Client {
	t.Helper()
	return apiServer(t, func(r *http.Request) (any, bool) {
		var data any
		switch r.URL.Path {
		case "/api/v1/status/buildinfo":
			if f.version == "" {
				return nil, false
			}
			data = map[string]string{"version": f.version}
		case "/api/v1/status/flags":
			if f.flags == nil {
				return nil, false
			}
			data = f.flags
		case "/api/v1/targets":
			if f.noIntervals {
				return nil, false
			}
			target := func(job, interval string) map[string]any {
				return map[string]any{"labels": map[string]string{"job": job, "instance": job + ":8000"}, "scrapeInterval": interval}
			}
			data = map[string]any{"activeTargets": []any{target("vllm", "5s"), target("vllm", "15s"), target("vllm.decode", "10s")}}
		case "/api/v1/rules":
			if f.noIntervals {
				return nil, false
			}
			groups := []any{map[string]any{"name": "inferscope-rates-5m", "interval": 5}, map[string]any{"name": "other", "interval": 60}}
			if f.silentGroup != "" {
				groups = append(groups, map[string]any{"name": f.silentGroup, "interval": 5})
			}
			data = map[string]any{"groups": groups}
		case "/api/v1/query":
			_ = r.ParseForm()
			f.queries.Add(1)
			f.mu.Lock()
			f.exprs = append(f.exprs, r.Form.Get("query"))
			f.mu.Unlock()
			var result []map[string]any
			sample := func(ts float64, labels ...string) {
				m := map[string]string{}
				for i := 0; i < len(labels); i += 2 {
					m[labels[i]] = labels[i+1]
				}
				result = append(result, map[string]any{"metric": m, "value": []any{1, ftoa(ts)}})
			}
			if f.up > 0 {
				sample(f.up, "h", "up", "job", "vllm")
				sample(f.up-2, "h", "up", "job", "vllm.decode")
			}
			if f.rules > 0 {
				sample(f.rules, "h", "rules", EvaluatedGroupLabel, "inferscope-rates-5m")
			}
			data = map[string]any{"resultType": "vector", "result": result}
		default:
			return nil, false
		}
		return data, true
	})
}

// apiServer is a Client of a server answering the Prometheus HTTP API's success envelope around answer's data, or
// 404 where answer has none.
func apiServer(t *testing.T, answer func(r *http.Request) (data any, ok bool)) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := answer(r)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}))
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}
}

func ftoa(v float64) string { return model.SampleValue(v).String() }

// prometheusFlags are a Prometheus 3's flags as /api/v1/status/flags lists them, trimmed to those Horizon reads.
func prometheusFlags(extra map[string]string) map[string]string {
	f := map[string]string{"web.enable-remote-write-receiver": "false", "web.enable-otlp-receiver": "false", "agent": "false",
		"enable-feature": "", "storage.tsdb.path": "data/"}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// TestHorizonAnswersOnlyForAScrapingPrometheus: the horizon is the oldest of each job's newest scrape plus 0.8 of its
// shortest interval and each generated group's newest evaluation plus its interval, on a Prometheus that takes
// samples only from its scrapes; without the intervals, the newest scrape and evaluation themselves; any other
// server, or one that takes remote write or OTLP, leaves the overlap window to decide alone.
func TestHorizonAnswersOnlyForAScrapingPrometheus(t *testing.T) {
	const up, rules = 1_800_000_100.5, 1_800_000_099.25
	at := func(s float64) time.Time { return time.UnixMilli(int64(s * 1000)) }
	// vllm: 0.8 of 5 s after up; vllm.decode: 0.8 of 10 s after up - 2 s; the group: 5 s after its heartbeat.
	scraped := at(up + 4)
	for _, tc := range []struct {
		name     string
		server   *horizonServer
		recorded bool
		want     time.Time // zero: not known
	}{
		{"prometheus 3", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up}, false, scraped},
		{"prometheus 2 (Debian's)", &horizonServer{version: "2.42.0+ds", flags: prometheusFlags(nil), up: up}, false, scraped},
		{"no intervals: the newest scrape itself", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, noIntervals: true}, false, at(up - 2)},
		{"recorded: the older of the two", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, rules: rules - 3}, true, at(rules + 2).Add(-time.Millisecond)},
		{"recorded, the scrapes older", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, rules: up}, true, scraped},
		{"recorded, no intervals", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, rules: rules, noIntervals: true}, true, at(up - 2)},
		{"recorded, a generated group without its heartbeat", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, rules: up, silentGroup: "inferscope-rates-1m"}, true, time.Time{}},
		{"recorded, without the heartbeat", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up}, true, time.Time{}},
		{"not recorded: the rules do not hold it back", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: up, rules: rules - 600}, false, scraped},
		{"no up series", &horizonServer{version: "3.16.0", flags: prometheusFlags(nil)}, false, time.Time{}},
		{"remote-write receiver", &horizonServer{version: "3.16.0", flags: prometheusFlags(map[string]string{"web.enable-remote-write-receiver": "true"}), up: up}, false, time.Time{}},
		{"OTLP receiver", &horizonServer{version: "3.16.0", flags: prometheusFlags(map[string]string{"web.enable-otlp-receiver": "true"}), up: up}, false, time.Time{}},
		{"remote-write receiver, as a 2.x feature", &horizonServer{version: "2.30.0", flags: prometheusFlags(map[string]string{"enable-feature": "exemplar-storage, remote-write-receiver"}), up: up}, false, time.Time{}},
		{"agent", &horizonServer{version: "3.16.0", flags: prometheusFlags(map[string]string{"agent": "true"}), up: up}, false, time.Time{}},
		{"concurrent rule evaluation, scrapes only", &horizonServer{version: "3.16.0", flags: prometheusFlags(map[string]string{"enable-feature": "concurrent-rule-eval"}), up: up, rules: rules}, false, scraped},
		{"concurrent rule evaluation, recorded", &horizonServer{version: "3.16.0", flags: prometheusFlags(map[string]string{"enable-feature": "concurrent-rule-eval"}), up: up, rules: rules}, true, time.Time{}},
		{"thanos query", &horizonServer{version: "0.42.5", flags: prometheusFlags(nil), up: up}, false, time.Time{}},
		{"cortex", &horizonServer{version: "1.21.1", flags: prometheusFlags(nil), up: up}, false, time.Time{}},
		{"mimir: buildinfo, no flags", &horizonServer{version: "2.17.0", up: up}, false, time.Time{}},
		{"victoriametrics: no buildinfo", &horizonServer{flags: prometheusFlags(nil), up: up}, false, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.server.serve(t)
			h := &Horizon{Client: c, Jobs: func(context.Context) ([]string, error) { return []string{"vllm", "vllm.decode"}, nil },
				Recorded: func(context.Context) (bool, error) { return tc.recorded, nil }}
			got, known := h.Final(context.Background(), at(up+1))
			if known != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Errorf("Final = %v, %v; want %v, %v", got, known, tc.want, !tc.want.IsZero())
			}
			if tc.server.queries.Load() > 0 {
				if e := tc.server.exprs[0]; !strings.Contains(e, `up{job=~"vllm|vllm\\.decode"}`) || !strings.Contains(e, EvaluatedName) {
					t.Errorf("horizon query %s: want the jobs' up and the heartbeat", e)
				}
			}
		})
	}
}

// TestHorizonIsReadOncePerRefresh: the panels of a refresh share one read; a second later it is read again, and
// the server's kind is asked once per horizonServerTTL.
func TestHorizonIsReadOncePerRefresh(t *testing.T) {
	f := &horizonServer{version: "3.16.0", flags: prometheusFlags(nil), up: 1_800_000_000}
	h := &Horizon{Client: f.serve(t), Jobs: func(context.Context) ([]string, error) { return []string{"vllm"}, nil }}
	now := time.Unix(1_800_000_001, 0)
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, known := h.Final(context.Background(), now); !known {
				t.Error("not known")
			}
		}()
	}
	wg.Wait()
	if n := f.queries.Load(); n != 1 {
		t.Errorf("30 panels at once read the horizon %d times, want 1", n)
	}
	h.Final(context.Background(), now.Add(HorizonTTL))
	if n := f.queries.Load(); n != 2 {
		t.Errorf("a refresh %s later: %d reads in all, want 2", HorizonTTL, n)
	}

	// A read that fails serves its TTL too (unknown), or each panel would ask the failing server in turn; one whose
	// own request was cancelled does not: the next asks again.
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	failing := &Horizon{Client: &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}},
		Jobs: func(context.Context) ([]string, error) { return []string{"vllm"}, nil }}
	for range 5 {
		if _, known := failing.Final(context.Background(), now); known {
			t.Error("a failing server's horizon is known")
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("five reads within the TTL asked a failing server %d times, want 1", n)
	}
	cancelled := &Horizon{Client: failing.Client, Jobs: failing.Jobs}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled.Final(ctx, now)
	cancelled.Final(context.Background(), now)
	if n := asked.Load(); n != 2 {
		t.Errorf("after a cancelled read the next asked %d times in all, want 2 (the cancelled one asks nothing)", n)
	}
}

// finalAt is a Finality at a fixed time that records when it was read, against the fetches of the answer.
type finalAt struct {
	final  time.Time
	mu     sync.Mutex
	events []string
}

func (f *finalAt) Final(context.Context, time.Time) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "horizon")
	return f.final, !f.final.IsZero()
}

// TestResultsKeepStepsUpToTheHorizon: steps inside the overlap window at or before the horizon are kept and not asked
// again, so a refresh within a step whose steps are all final asks nothing, not even the horizon (a round trip that
// every panel of the refresh would wait behind); otherwise the horizon is read once per answer and before the server
// is asked (an answer asked first may lack a sample the horizon then vouches for); without it the overlap window
// decides as before. Every answer is the server's own for the whole range.
func TestResultsKeepStepsUpToTheHorizon(t *testing.T) {
	const step, overlap = 15 * time.Second, 10 * time.Minute
	t0 := time.Unix(1_800_000_000, 0) // a multiple of the step
	fake := &rangeServer{goneTo: t0.Add(time.Hour).Unix()}
	url := fake.serve(t).URL
	horizon := &finalAt{}
	now := t0
	res := NewResults(64<<20, overlap, horizon)
	res.now = func() time.Time { return now }
	c := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}, Results: res}
	plain := &Client{BaseURL: url, HTTP: &http.Client{Timeout: time.Minute}}
	const expr = `sum by (instance) (rate(x[5m]))`
	const none = time.Duration(-1)
	for k, tc := range []struct {
		now, horizon time.Duration // after t0; horizon none: not known
		from         time.Duration // the first step asked, after t0 (none: nothing asked); the first refresh asks all
	}{
		{now: 0, horizon: 0, from: -time.Hour},                                     // cold, every target scraped at or after the last step
		{now: 5 * time.Second, horizon: 2 * time.Second, from: none},               // within the step: every step final, nothing asked
		{now: 16 * time.Second, horizon: 3 * time.Second, from: 15 * time.Second},  // a new step, not yet final
		{now: 21 * time.Second, horizon: 17 * time.Second, from: 15 * time.Second}, // asked again, final now
		{now: 26 * time.Second, horizon: 22 * time.Second, from: none},
		{now: 31 * time.Second, horizon: none, from: 30 * time.Second},                          // unknown: the overlap window keeps less
		{now: 36 * time.Second, horizon: none, from: 30*time.Second - overlap + 15*time.Second}, // and asks it again
	} {
		now = t0.Add(tc.now)
		horizon.final = time.Time{}
		if tc.horizon != none {
			horizon.final = t0.Add(tc.horizon)
		}
		horizon.events = nil
		start, end := now.Add(-time.Hour).Truncate(step), now.Truncate(step)
		got, _, err := c.QueryRange(context.Background(), expr, start, end, step)
		if err != nil {
			t.Fatal(err)
		}
		asks := fake.take()
		want, _, _ := plain.QueryRange(context.Background(), expr, start, end, step)
		fake.take()
		sortMatrix(got)
		sortMatrix(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("refresh %d: the answer differs from the server's: %s", k, matrixDiff(got, want))
		}
		if reads := len(horizon.events); tc.from == none && reads != 0 {
			t.Errorf("refresh %d, every step kept, read the horizon %d times, want none", k, reads)
		} else if tc.from != none && reads != 1 {
			t.Errorf("refresh %d read the horizon %d times, want once", k, reads)
		}
		switch {
		case tc.from == none && len(asks) > 0:
			t.Errorf("refresh %d asked %v, want nothing", k, asks)
		case tc.from != none && len(asks) != 1:
			t.Errorf("refresh %d asked %v, want one request", k, asks)
		case tc.from != none:
			want := t0.Add(tc.from)
			if k == 0 {
				want = start
			}
			if from := time.Unix(asks[0][0], 0); !from.Equal(want) || asks[0][1] != end.Unix() {
				t.Errorf("refresh %d asked %s to %s, want %s to %s", k, from.UTC(), time.Unix(asks[0][1], 0).UTC(), want.UTC(), end.UTC())
			}
		}
	}
}

// orderedFinality records, against a server's requests, when it was read.
type orderedFinality struct {
	final  time.Time
	events *[]string
	mu     *sync.Mutex
}

func (f orderedFinality) Final(context.Context, time.Time) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.events = append(*f.events, "horizon")
	return f.final, true
}

// TestResultsReadTheHorizonBeforeAsking: were the horizon read after the server answered, a scrape committed in
// between would be vouched for without being in the answer.
func TestResultsReadTheHorizonBeforeAsking(t *testing.T) {
	var mu sync.Mutex
	var events []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		events = append(events, "ask")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	t.Cleanup(srv.Close)
	now := time.Unix(1_800_000_000, 0)
	res := NewResults(1<<20, time.Minute, orderedFinality{final: now, events: &events, mu: &mu})
	res.now = func() time.Time { return now }
	c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}, Results: res}
	if _, _, err := c.QueryRange(context.Background(), "up", now.Add(-time.Hour), now, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(events, []string{"horizon", "ask"}) {
		t.Errorf("events %v, want the horizon read before the server is asked", events)
	}
}

// TestHorizonOnARealPrometheus: Prometheus 2 and 3 scraping two slow counters every second and evaluating the
// generated rules: the horizon stays within a few seconds of now, the results cache then asks each refresh for a few steps of
// a two-minute range that lies wholly inside the overlap window (without the horizon it asks for all of them), and
// every step it keeps is what the server answers for it afterwards, for a rate of the scraped series and for their
// recorded rate.
func TestHorizonOnARealPrometheus(t *testing.T) {
	const scrapeDelay = 600 * time.Millisecond
	var scrapes atomic.Int64
	var targets []promtest.Target
	for _, model := range []string{"a", "b"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			// A slow answer: each scrape is committed well after the time its samples carry, so the newest steps
			// change after they were first answered, and a horizon that ran ahead would keep them.
			time.Sleep(scrapeDelay)
			n := scrapes.Add(1)
			_, _ = fmt.Fprintf(w, "# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{model_name=%q} %d\n", model, n*n%1000)
		}))
		t.Cleanup(srv.Close)
		targets = append(targets, promtest.Target{Job: "vllm", Addr: strings.TrimPrefix(srv.URL, "http://")})
	}
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus2, promtest.Prometheus3) {
		t.Run(eng.String(), func(t *testing.T) {
			rules := RuleGroups(time.Second, 0)
			prom := promtest.Start(t, promtest.Options{Engine: eng, Targets: targets, ScrapeInterval: time.Second, Rules: rules})
			recorded := RecordedName("vllm:generation_tokens_total", time.Minute)
			groups := model.SampleValue(strings.Count(rules, "\n  - name: ")) // every group's heartbeat
			prom.WaitFor(t, `count(`+EvaluatedName+`)`, 2*time.Minute, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == groups })
			prom.WaitFor(t, `count(`+recorded+`)`, 2*time.Minute, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 2 })
			ctx := context.Background()
			hc := &http.Client{Timeout: time.Minute}
			disc := &Discovery{Client: &Client{BaseURL: prom.URL, HTTP: hc}}
			h := &Horizon{Client: &Client{BaseURL: prom.URL, HTTP: hc}, Jobs: disc.Jobs, Recorded: disc.Recorded}
			res := NewResults(64<<20, 10*time.Minute, h)
			cached := &Client{BaseURL: prom.URL, HTTP: hc, Results: res}
			plain := &Client{BaseURL: prom.URL, HTTP: hc}
			exprs := []string{`sum by (model_name) (rate(vllm:generation_tokens_total[5s]))`, `sum by (model_name) (` + recorded + `)`}
			const step = time.Second
			var asked, steps int64
			for k := range 8 {
				now := time.Now()
				final, known := h.Final(ctx, now)
				// The horizon may lie up to 0.8 of an interval past now: the next scrapes are stamped after it.
				if !known || now.Sub(final) > 5*time.Second || final.After(now.Add(800*time.Millisecond)) {
					t.Fatalf("refresh %d: horizon %v (known %v), %s before now; want within 5 s before and 0.8 s after", k, final, known, now.Sub(final))
				}
				if k == 0 { // the intervals as the real targets and rules APIs give them
					if want := map[string]time.Duration{"vllm": time.Second}; !reflect.DeepEqual(h.kind.jobIntervals, want) {
						t.Fatalf("scrape intervals %v, want %v", h.kind.jobIntervals, want)
					}
					generated := 0
					for g, i := range h.kind.groupIntervals {
						if strings.HasPrefix(g, RuleGroupPrefix) {
							generated++
							if want := time.Second; i != want && !(g == layoutsGroup && i == LayoutsInterval) {
								t.Fatalf("group %s: interval %v, want %v (the layouts' %v)", g, i, want, LayoutsInterval)
							}
						}
					}
					if generated == 0 {
						t.Fatalf("no generated rule group among %v", h.kind.groupIntervals)
					}
				}
				start, end := now.Add(-2*time.Minute).Truncate(step), now.Truncate(step)
				before := res.Stats()
				for _, e := range exprs {
					got, warns, err := cached.QueryRange(ctx, e, start, end, step)
					if err != nil || len(warns) > 0 {
						t.Fatalf("%s: %v %v", e, err, warns)
					}
					want, _, err := plain.QueryRange(ctx, e, start, end, step)
					if err != nil {
						t.Fatal(err)
					}
					cut := func(m model.Matrix) model.Matrix {
						var out model.Matrix
						for _, s := range m {
							if v := valuesIn(s.Values, start.UnixMilli(), final.UnixMilli()); len(v) > 0 {
								out = append(out, &model.SampleStream{Metric: s.Metric, Values: v})
							}
						}
						sortMatrix(out)
						return out
					}
					if g, w := cut(got), cut(want); !reflect.DeepEqual(g, w) {
						t.Fatalf("refresh %d, %s: a step at or before the horizon differs from the server's later answer: %s", k, e, matrixDiff(g, w))
					}
				}
				if k > 0 { // the first refresh asks for everything
					st := res.Stats()
					asked, steps = asked+st.Asked-before.Asked, steps+st.Asked-before.Asked+st.Reused-before.Reused
				}
				time.Sleep(700 * time.Millisecond)
			}
			if asked*10 > steps {
				t.Errorf("warm refreshes asked %d of %d steps of a range inside the overlap window, want under a tenth", asked, steps)
			}
			t.Logf("%s: warm refreshes asked %d of %d steps", eng, asked, steps)
		})
	}
}

// TestScrapeIntervalsReadTargetByTarget: the targets API's answer is read one target at a time, keeping only the
// fleet's jobs, whatever else the answer holds before or after them; past maxIntervalEntries targets, or in an answer
// not shaped as the API's, the intervals are unknown.
func TestScrapeIntervalsReadTargetByTarget(t *testing.T) {
	serve := func(t *testing.T, body func(w *strings.Builder)) *Client {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/targets" || r.URL.Query().Get("state") != "active" {
				http.NotFound(w, r)
				return
			}
			var b strings.Builder
			body(&b)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(b.String()))
		}))
		t.Cleanup(srv.Close)
		return &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}
	}
	targets := func(w *strings.Builder, n int, job, interval string) {
		for i := range n {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `{"discoveredLabels":{"__address__":"10.0.%d.%d:8000","__meta_kubernetes_pod_name":"pod-%d"},"labels":{"instance":"10.0.%d.%d:8000","job":%q},"scrapePool":%q,"scrapeInterval":%q,"health":"up"}`,
				i/256, i%256, i, i/256, i%256, job, job, interval)
		}
	}
	keep := map[string]bool{"vllm": true}
	for _, tc := range []struct {
		name string
		body func(w *strings.Builder)
		want map[string]time.Duration
	}{
		{"the fleet's jobs among many others", func(w *strings.Builder) {
			w.WriteString(`{"status":"success","data":{"droppedTargets":[{"discoveredLabels":{"a":"b"}}],"activeTargets":[`)
			targets(w, 50_000, "kubernetes-pods", "30s")
			w.WriteString(",")
			targets(w, 3, "vllm", "5s")
			w.WriteString(`,{"labels":{"job":"vllm"},"scrapeInterval":"15s"}],"droppedTargetCounts":{"kubernetes-pods":7}}}`)
		}, map[string]time.Duration{"vllm": 5 * time.Second}},
		{"one target of a job without an interval", func(w *strings.Builder) {
			w.WriteString(`{"status":"success","data":{"activeTargets":[{"labels":{"job":"vllm"},"scrapeInterval":"5s"},{"labels":{"job":"vllm"}}]}}`)
		}, map[string]time.Duration{}},
		{"more targets than the bound", func(w *strings.Builder) {
			w.WriteString(`{"status":"success","data":{"activeTargets":[`)
			targets(w, maxIntervalEntries+1, "vllm", "5s")
			w.WriteString(`]}}`)
		}, nil},
		{"no active targets", func(w *strings.Builder) {
			w.WriteString(`{"status":"success","data":{"droppedTargets":[]}}`)
		}, nil},
		{"targets not an array", func(w *strings.Builder) {
			w.WriteString(`{"status":"success","data":{"activeTargets":{"vllm":"5s"}}}`)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scrapeIntervals(context.Background(), serve(t, tc.body), keep)
			if !reflect.DeepEqual(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("intervals %v, want %v", got, tc.want)
			}
		})
	}
}

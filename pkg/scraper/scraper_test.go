package scraper

import (
	"github.com/inferscope/inferscope-vllm/pkg/vllm"

	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
)

// recorder keeps what the scraper records, per endpoint.
type recorder struct {
	mu  sync.Mutex
	got map[string][]*exposition.Scrape
}

func (r *recorder) Append(endpoint string, _ int64, sc *exposition.Scrape) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string][]*exposition.Scrape{}
	}
	r.got[endpoint] = append(r.got[endpoint], sc.Clone()) // the scraper releases sc once Append returns
	// Unsure whether the series repeat: the scraper detects every scrape's flavor.
	return false
}

// AdvanceWatermark ignores the watermark: these tests read what was appended.
func (r *recorder) AdvanceWatermark(int64) {}

func (r *recorder) up(endpoint string) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.got[endpoint]
	if len(s) == 0 {
		return 0, false
	}
	for v := range s[len(s)-1].Series(vllm.Up) {
		return v.Value, true
	}
	return 0, false
}

func TestScrapeAllRecordsStatusAndUp(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 3\npython_gc_objects_collected_total 9\n"))
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer bad.Close()
	rec := &recorder{}
	s := New([]Target{{Name: "ok", URL: ok.URL}, {Name: "bad", URL: strings.Replace(bad.URL, "http://", "http://user:pw@", 1)}},
		rec, Options{Interval: time.Second, Timeout: time.Second})

	if st := s.Statuses(); st[0].Error != "not scraped yet" {
		t.Fatalf("before the first scrape: %+v", st[0])
	}
	if down := s.Down(); len(down) != 2 || down[0].Name != "ok" || down[1].Name != "bad" {
		t.Fatalf("down before the first scrape: %+v, want both, in target order", down)
	}
	s.ScrapeAll(context.Background())
	if down := s.Down(); len(down) != 1 || down[0].Name != "bad" || !strings.Contains(down[0].Error, "500") {
		t.Fatalf("down after a scrape: %+v, want bad alone", down)
	}
	st := s.Statuses()
	if !st[0].Up || st[0].Samples != 1 || st[0].Detection == nil || st[0].Detection.Flavor != "vllm-v1" {
		t.Fatalf("ok endpoint status %+v", st[0])
	}
	if st[1].Up || !strings.Contains(st[1].Error, "500") || strings.Contains(st[1].Error+st[1].URL, "pw") {
		t.Fatalf("bad endpoint status %+v", st[1])
	}
	if v, found := rec.up("ok"); !found || v != 1 {
		t.Fatalf("up for ok = %v %v", v, found)
	}
	if v, found := rec.up("bad"); !found || v != 0 {
		t.Fatalf("up for bad = %v %v", v, found)
	}
	if sc := rec.got["ok"][0]; sc.Family("python_gc_objects_collected") != nil || sc.FamilyOf("python_gc_objects_collected_total") != nil {
		t.Fatal("families no query reads were kept")
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	var inflight, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inflight.Add(-1)
		_, _ = w.Write([]byte("vllm:x 1\n"))
	}))
	defer srv.Close()
	var targets []Target
	for i := 0; i < 12; i++ {
		targets = append(targets, Target{Name: string(rune('a' + i)), URL: srv.URL})
	}
	s := New(targets, &recorder{}, Options{Interval: time.Second, Concurrency: 3, Timeout: time.Second})
	s.ScrapeAll(context.Background())
	if p := peak.Load(); p > 3 || p < 1 {
		t.Fatalf("peak concurrent scrapes = %d, want 1..3", p)
	}
}

func TestStartStopAndSubscribe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("vllm:x 1\n")) }))
	defer srv.Close()
	s := New([]Target{{Name: "a", URL: srv.URL}}, &recorder{}, Options{Interval: 50 * time.Millisecond, Timeout: time.Second})
	rounds, unsubscribe := s.Subscribe()
	s.Start()
	for i := 0; i < 2; i++ {
		select {
		case <-rounds:
		case <-time.After(10 * time.Second):
			t.Fatal("no scrape round notified")
		}
	}
	unsubscribe()
	s.Stop()
	s.Stop() // idempotent: Dispose may run more than once
}

// TestScrapeNormalisesLeAndQuantile: Prometheus 3 rewrites the le of histogram buckets and the quantile of summaries
// to OpenMetrics float text when it scrapes ("1" → "1.0"), and Dynamo's exporter writes le="1"; direct mode stores
// what Prometheus 3 stores, so raw bucket series and le matchers are the same in both modes (#12 item 7).
func TestScrapeNormalisesLeAndQuantile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`# TYPE dynamo_component_request_duration_seconds histogram
dynamo_component_request_duration_seconds_bucket{le="0.005"} 1
dynamo_component_request_duration_seconds_bucket{le="1"} 2
dynamo_component_request_duration_seconds_bucket{le="10"} 3
dynamo_component_request_duration_seconds_bucket{le="+Inf"} 3
dynamo_component_request_duration_seconds_sum 4
dynamo_component_request_duration_seconds_count 3
# TYPE vllm:latency summary
vllm:latency{quantile="1"} 0.5
vllm:latency{quantile="0.50"} 0.25
vllm:latency_sum 9
vllm:latency_count 4
# TYPE vllm:requests counter
vllm:requests_total{le="1"} 7
`))
	}))
	defer srv.Close()
	rec := &recorder{}
	New([]Target{{Name: "a", URL: srv.URL}}, rec, Options{Interval: time.Second, Timeout: time.Second}).ScrapeAll(context.Background())
	if len(rec.got["a"]) != 1 {
		t.Fatalf("recorded %d scrapes", len(rec.got["a"]))
	}
	var got []string
	for _, f := range rec.got["a"][0].Families {
		for _, s := range f.Samples {
			for _, l := range s.Labels {
				got = append(got, s.Name+" "+l.Name+"="+l.Value)
			}
		}
	}
	want := []string{
		"dynamo_component_request_duration_seconds_bucket le=0.005",
		"dynamo_component_request_duration_seconds_bucket le=1.0",
		"dynamo_component_request_duration_seconds_bucket le=10.0",
		"dynamo_component_request_duration_seconds_bucket le=+Inf",
		"vllm:latency quantile=1.0",
		"vllm:latency quantile=0.5",
		// A counter's le label is not a bucket bound: Prometheus 3 keeps it as written.
		"vllm:requests_total le=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored labels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A fleet that changes between rounds: a new target is scraped from the next round, a departed one is listed as
// gone (not down), is scraped no more, and its series end with staleness markers instead of up dropping to 0.
func TestSetTargetsFollowsAChangingFleet(t *testing.T) {
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		_, _ = w.Write([]byte("vllm:num_requests_running{engine=\"0\"} 1\n"))
	}))
	defer srv.Close()
	count := func(path string) int64 {
		n, ok := hits.Load(path)
		if !ok {
			return 0
		}
		return n.(*atomic.Int64).Load()
	}
	store := history.New(history.Options{Retention: time.Hour})
	s := New([]Target{{Name: "a", URL: srv.URL + "/a"}, {Name: "b", URL: srv.URL + "/b"}}, store, Options{Interval: time.Hour, Timeout: 5 * time.Second})
	s.ScrapeAll(context.Background())
	time.Sleep(2 * time.Millisecond) // the departure's marker must come after the scrape's millisecond

	s.SetTargets([]Target{{Name: "a", URL: srv.URL + "/a"}, {Name: "c", URL: srv.URL + "/c", Source: "dns #1", Role: "decode"}})
	st := s.Statuses()
	if len(st) != 3 || st[0].Name != "a" || !st[0].Up || st[1].Name != "c" || st[1].Error != "not scraped yet" || st[1].Role != "decode" {
		t.Fatalf("statuses after the change: %+v", st)
	}
	if g := st[2]; g.Name != "b" || !g.Gone || g.Up || g.Error != "" || g.GoneSince == nil {
		t.Fatalf("departed status %+v", g)
	}
	if down := s.Down(); len(down) != 1 || down[0].Name != "c" {
		t.Fatalf("down after the change: %+v, want c (not scraped yet), not the departed b", down)
	}
	s.ScrapePending(context.Background())
	if count("/a") != 1 || count("/c") != 1 {
		t.Errorf("pending round scraped a=%d c=%d, want 1 1 (only the new target)", count("/a"), count("/c"))
	}
	s.ScrapeAll(context.Background())
	if count("/a") != 2 || count("/b") != 1 || count("/c") != 2 {
		t.Errorf("scrapes a=%d b=%d c=%d, want 2 1 2", count("/a"), count("/b"), count("/c"))
	}
	if st := s.Statuses(); !st[1].Up || st[1].Source != "dns #1" || !st[2].Gone {
		t.Errorf("after the next round: %+v", st)
	}
	// b's history stays; its up series ends with a staleness marker, never 0.
	series := store.Select("b", vllm.Up, 0, time.Now().Add(time.Minute).UnixMilli(), nil)
	if len(series) != 1 {
		t.Fatalf("b's up series: %+v", series)
	}
	pts := series[0].Points
	if len(pts) != 2 || pts[0].V != 1 || !derive.IsStale(pts[1].V) {
		t.Errorf("b's up points %+v, want 1 then a staleness marker", pts)
	}

	// A departed target that comes back is scraped again and no longer listed as gone.
	s.SetTargets([]Target{{Name: "b", URL: srv.URL + "/b"}})
	st = s.Statuses()
	if len(st) != 3 || st[0].Name != "b" || st[0].Gone || !st[1].Gone || !st[2].Gone {
		t.Errorf("after b's return: %+v", st)
	}
}

func TestGoneStatusesAreBounded(t *testing.T) {
	s := New(nil, &recorder{}, Options{Interval: time.Hour, Timeout: time.Second})
	for i := range MaxGone + 10 {
		s.SetTargets([]Target{{Name: fmt.Sprint(i), URL: "http://127.0.0.1:1/metrics"}})
	}
	if st := s.Statuses(); len(st) != MaxGone+1 || st[1].Name != "9" {
		t.Errorf("%d statuses, first gone %s", len(st), st[1].Name)
	}
}

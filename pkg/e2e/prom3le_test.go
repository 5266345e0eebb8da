package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// staticTarget serves one fixed exposition body on loopback, so every scraper sees the same samples.
func staticTarget(t *testing.T, body []byte, contentType string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestBucketSeriesMatchPrometheus3: Dynamo's Rust exporter writes le="1", le="10", …; Prometheus 3 stores those as
// "1.0", "10.0" (textparse normalises le at scrape time), and direct mode now stores the same text, so raw bucket
// series and le matchers agree between direct mode and Prometheus 3 scraping the same bodies (#12 item 7). Both
// scrape one frozen simulator body per Dynamo flavor, so the values are identical too (tolerance 0).
func TestBucketSeriesMatchPrometheus3(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus 3")
	}
	promtest.EngineBinary(t, promtest.Prometheus3, "prometheus")
	var targets []promtest.Target
	var direct []scraper.Target
	for _, args := range [][]string{
		{"-flavor=dynamo-worker", "-engines=2", "-qps=8", "-seed=4"},
		{"-flavor=dynamo-frontend", "-qps=8", "-seed=6"},
	} {
		cfg, err := sim.ParseArgs(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		fleet, err := sim.NewFleet(cfg, time.Now().Add(-5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		fleet.AdvanceTo(5 * time.Minute)
		var body bytes.Buffer
		if err := fleet.WriteExposition(&body); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body.Bytes(), []byte(`le="1"`)) {
			t.Fatalf("%v: the simulator no longer writes le=\"1\"; this test would check nothing", args)
		}
		// The content type the simulator's Dynamo flavors send (Prometheus 3 refuses a scrape without one).
		addr := staticTarget(t, body.Bytes(), "text/plain; version=0.0.4")
		targets = append(targets, promtest.Target{Addr: addr})
		direct = append(direct, scraper.Target{Name: addr, URL: "http://" + addr + "/metrics"})
	}

	// Both sides scrape every 2 s with the whole interval as the timeout: the test is about le labels, and on a loaded
	// machine a scrape must not time out.
	const interval = 2 * time.Second
	prom := promtest.Start(t, promtest.Options{Engine: promtest.Prometheus3, Targets: targets, ScrapeInterval: interval})
	store := history.New(history.Options{Retention: time.Hour})
	sc := scraper.New(direct, store, scraper.Options{Interval: interval, Timeout: interval})
	sc.Start()
	t.Cleanup(sc.Stop)
	prom.WaitFor(t, `count(count by (instance) (dynamo_component_request_duration_seconds_bucket or dynamo_frontend_time_to_first_token_seconds_bucket))`,
		time.Minute, func(v model.Vector) bool { return len(v) == 1 && int(v[0].Value) == len(targets) })
	// Both sides now hold samples, so a range starting now has a value on each at its first step; every later step
	// has one once both have scraped every target after the range's end: wait for that (bounded).
	from := time.Now().Truncate(time.Second).Add(interval)
	to := from.Add(2 * interval)
	req := query.Request{From: from, To: to, Interval: interval}
	prom.WaitFor(t, fmt.Sprintf(`min(timestamp(up)) >= %.3f`, float64(to.UnixMilli())/1000), time.Minute,
		func(v model.Vector) bool { return len(v) == 1 })
	src := query.HistorySource{Store: store}
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	waitFor(wctx, t, "a direct scrape of every target after the range", func() bool {
		eps := src.Endpoints()
		for _, ep := range eps {
			if _, newest, held := src.Bounds(ep); !held || newest < to.UnixMilli() {
				return false
			}
		}
		return len(eps) == len(targets)
	})

	eng := &query.Engine{Source: src, ScrapeInterval: interval}
	client := &promapi.Client{BaseURL: prom.URL, HTTP: &http.Client{Timeout: 20 * time.Second}}
	ev := &promapi.Evaluator{Client: client, Discovery: &promapi.Discovery{Client: client, Lookback: time.Hour}, ScrapeInterval: interval}
	for _, tc := range []struct {
		name string
		q    query.Query
		want int // bucket series at least
	}{
		{"worker buckets", query.Query{QueryType: query.TypeRaw, Metric: "dynamo_component_request_duration_seconds", Histogram: "buckets"}, 10},
		{"frontend buckets", query.Query{QueryType: query.TypeRaw, Metric: "dynamo_frontend_time_to_first_token_seconds", Histogram: "buckets"}, 10},
		{"le matcher 1.0", query.Query{QueryType: query.TypeRaw, Metric: "dynamo_component_request_duration_seconds", Histogram: "buckets", Labels: map[string]string{"le": "1.0"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := eng.Eval(ctx, tc.q, req)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ev.Eval(ctx, tc.q, req)
			if err != nil {
				t.Fatalf("%v\n%s", err, ansPromQL(p))
			}
			les := map[string]bool{}
			for _, o := range d.Outputs {
				if le, ok := o.Labels["le"]; ok {
					les[le] = true
				}
			}
			if len(les) < tc.want {
				t.Errorf("direct mode has %d distinct le values, want at least %d", len(les), tc.want)
			}
			if !les["1.0"] || les["1"] {
				t.Errorf("direct mode's le values %v: want 1.0 and not 1", les)
			}
			n := compareOutputs(t, d.Outputs, p.Result.Outputs, 0, nil)
			if n == 0 {
				t.Errorf("nothing compared")
			}
			t.Logf("%d values over %d series agree", n, len(d.Outputs))
			if t.Failed() {
				var keys []string
				for _, o := range d.Outputs {
					keys = append(keys, outputKey(o))
				}
				t.Logf("direct series: %s\nPromQL:\n%s", strings.Join(keys, " "), p.PromQL())
			}
		})
	}
}

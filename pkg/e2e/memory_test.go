package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// churningEndpoint serves n vLLM-named series whose labels change on every scrape, generated as it writes.
func churningEndpoint(t *testing.T, n int) string {
	var scrape atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := scrape.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		bw := bufio.NewWriterSize(w, 1<<16)
		defer bw.Flush()
		_, _ = bw.WriteString("# TYPE vllm:num_requests_running gauge\n")
		for i := 0; i < n; i++ {
			if _, err := fmt.Fprintf(bw, "vllm:num_requests_running{engine=\"%d\",model_name=\"m\",request_id=\"s%d-%d\"} %d\n", i%8, k, i, i%7); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// sampleRSS samples the plugin's resident memory every interval until the returned function, which stops sampling
// (at the latest when the test ends) and reports the peak.
func sampleRSS(t *testing.T, p *harness.Plugin, every time.Duration) func() int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if rss := p.RSS(); rss > peak.Load() {
					peak.Store(rss)
				}
			}
		}
	}()
	var once sync.Once
	end := func() int64 {
		once.Do(func() { close(stop); wg.Wait() })
		return peak.Load()
	}
	t.Cleanup(func() { end() })
	return end
}

// TestMemoryUnderAttack is the hardening issue's memory test: with maxMemoryMB 512, one plugin process serves a
// direct-mode data source holding a healthy endpoint beside a 190,000-series churning endpoint and a 45,000-series
// one, and a Prometheus-mode data source on a server answering a million series, while Viewers send the worst
// queries (a 100-year range at 1e9 points, 10,000 quantiles, raw and queue over everything) for a while. The
// plugin's resident memory stays under 1 GB and the healthy endpoint's history stays whole.
func TestMemoryUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 s")
	}
	healthy := fixtureServer(t, "synthetic_v1_8engines_full.txt", 0)
	eps := []map[string]string{
		{"name": "healthy", "url": healthy},
		{"name": "churn-190k", "url": churningEndpoint(t, 190_000)},
		{"name": "churn-45k", "url": churningEndpoint(t, 45_000)},
	}
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	direct := harness.DataSourceContext(t, harness.DataSource{UID: "memory-direct", JSONData: map[string]any{"mode": "direct",
		"endpoints": eps, "scrapeInterval": "1s", "maxMemoryMB": 512, "maxBodyMB": 32}}, harness.User("Viewer"))
	prom := harness.DataSourceContext(t, harness.DataSource{UID: "memory-prom", URL: hugePrometheus(t, 1_000_000).URL,
		JSONData: map[string]any{"mode": "prometheus"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := p.CheckHealth(ctx, direct); err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	peakRSS := sampleRSS(t, p, 100*time.Millisecond)
	quantiles := make([]float64, 10_000)
	for i := range quantiles {
		quantiles[i] = float64(i) / 10_000
	}
	attacks := []struct {
		pc    any
		query map[string]any
		from  time.Duration
		max   int64
	}{
		{direct, map[string]any{"queryType": "queue"}, 100 * 365 * 24 * time.Hour, 1e9},
		{direct, map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running"}, time.Hour, 1e9},
		{direct, map[string]any{"queryType": "latency", "quantiles": quantiles}, time.Hour, 1000},
		{direct, map[string]any{"queryType": "diagnosis"}, time.Hour, 1000},
		{prom, map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running"}, time.Hour, 1000},
	}
	deadline := time.Now().Add(15 * time.Second)
	var attackers sync.WaitGroup
	for w := 0; w < 3; w++ {
		attackers.Add(1)
		go func(w int) {
			defer attackers.Done()
			for i := w; i < 1000 && time.Now().Before(deadline); i++ {
				a := attacks[i%len(attacks)]
				now := time.Now()
				pc := direct
				if a.pc == prom {
					pc = prom
				}
				qctx, qcancel := context.WithTimeout(ctx, 20*time.Second)
				_, _ = p.QueryData(qctx, t, pc, harness.Query{RefID: "A", JSON: a.query, From: now.Add(-a.from), To: now, Interval: time.Second, MaxDataPoints: a.max})
				qcancel()
				if i%len(attacks) == 0 {
					_, _ = p.CheckHealth(qctx, prom)
				}
			}
		}(w)
	}
	attackers.Wait() // each stops at the deadline or after its share of the 1000 queries
	peak := peakRSS()
	end := time.Now()
	t.Logf("peak plugin RSS %d MB", peak>>20)
	if peak > 1<<30 {
		t.Errorf("plugin RSS peaked at %d MB with maxMemoryMB 512", peak>>20)
	}

	// The healthy endpoint's history is whole: a value at (nearly) every second since the attack began.
	resp, err := p.QueryData(ctx, t, direct, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running", "endpoint": "healthy"},
		From: start, To: end, Interval: time.Second, MaxDataPoints: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	want := int(end.Sub(start)/time.Second) - 3
	for _, f := range r.Frames {
		if f.Rows() < want {
			t.Errorf("healthy series %s has %d points over %s, want at least %d", frameSummary(data.Frames{f}), f.Rows(), end.Sub(start).Round(time.Second), want)
		}
	}
	if len(r.Frames) == 0 {
		t.Error("no healthy series")
	}
}

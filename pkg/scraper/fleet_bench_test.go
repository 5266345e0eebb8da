package scraper

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/httpmetrics"
	"github.com/inferscope/inferscope-vllm/pkg/internal/proctest"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// BenchmarkScrapeFleet scrapes 256 simulated vLLM V1 servers (two engines each, about 100 KB of exposition) on
// loopback every 5 s for a minute into a real history store, through an HTTP client made as the data source makes
// its own (the SDK's middlewares, its request metrics bound once: pkg/httpmetrics). It reports the process's CPU per
// wall second (serving the pre-rendered bodies included), what it allocates per wall second (what paces the
// collector of a data source whose live heap is its history), the heap in use and the history's size, and beside it
// the CPU of only parsing the same bodies as the scraper does, measured in the same run.
func BenchmarkScrapeFleet(b *testing.B) {
	if testing.Short() {
		b.Skip("scrapes for a minute")
	}
	const endpoints, wall = 256, time.Minute
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-engines=2", "-qps=8", "-spec-tokens=3", "-seed=9"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	fleet, err := sim.NewFleet(cfg, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	// Twelve successive scrapes of one server, served in turn by every endpoint, so counters move between scrapes.
	var bodies [][]byte
	for i := 1; i <= 12; i++ {
		fleet.AdvanceTo(time.Duration(i) * 5 * time.Second)
		var buf bytes.Buffer
		if err := fleet.WriteExposition(&buf); err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, buf.Bytes())
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(bodies[int(n/endpoints)%len(bodies)])
	}))
	defer srv.Close()
	targets := make([]Target, endpoints)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("vllm-%03d", i), URL: fmt.Sprintf("%s/%d/metrics", srv.URL, i)}
	}

	client, err := httpclient.New(httpclient.Options{Labels: map[string]string{"datasource_type": "inferscope-vllm-datasource"},
		Middlewares: httpmetrics.WithBoundMetrics(nil)})
	if err != nil {
		b.Fatal(err)
	}

	var scrapeCPU, parseCPU, elapsed time.Duration
	var scrapeAlloc uint64
	var heap, hist int64
	for b.Loop() {
		store := history.New(history.Options{})
		s := New(targets, store, Options{Interval: 5 * time.Second, Timeout: 4 * time.Second, Client: client})
		served.Store(0)
		c0, t0, a0 := proctest.CPUTime(b), time.Now(), proctest.HeapAllocated()
		s.Start()
		time.Sleep(wall)
		s.Stop()
		scrapeCPU += proctest.CPUTime(b) - c0
		scrapeAlloc += proctest.HeapAllocated() - a0
		elapsed += time.Since(t0)
		if up := s.Statuses(); !up[0].Up || !up[endpoints-1].Up {
			b.Fatalf("scrapes failed: %+v", up[0])
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap, hist = int64(m.HeapInuse), store.Bytes()
		runtime.KeepAlive(store)

		// The same number of bodies, only parsed.
		n := int(served.Load())
		c0 = proctest.CPUTime(b)
		for i := range n {
			if _, err := exposition.Parse(bodies[i%len(bodies)], exposition.ParseOptions{Keep: vllm.ReadsFamily, NormalizeFloatLabels: true}); err != nil {
				b.Fatal(err)
			}
		}
		parseCPU += proctest.CPUTime(b) - c0
	}
	b.ReportMetric(scrapeCPU.Seconds()/elapsed.Seconds(), "cores")
	b.ReportMetric(float64(scrapeAlloc)/(1<<20)/elapsed.Seconds(), "alloc-MiB/s")
	b.ReportMetric(parseCPU.Seconds()/elapsed.Seconds(), "parse-only-cores")
	b.ReportMetric(float64(scrapeCPU)/float64(parseCPU), "scrape/parse")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(hist)/(1<<20), "history-MiB")
	b.ReportMetric(float64(len(bodies[0]))/1024, "body-KiB")
}

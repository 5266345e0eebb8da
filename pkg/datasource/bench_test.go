package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// simHour returns one hour of 5 s scrapes of a single-engine vLLM V1 server, parsed.
func simHour(b *testing.B, start time.Time) []*exposition.Scrape {
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

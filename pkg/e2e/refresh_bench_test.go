package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/lora"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// BenchmarkDirectVsPrometheus answers the fleet overview dashboard's panel queries over the same samples — four
// simulated vLLM V1 servers (two engines each) for 70 minutes, scraped every 5 s, and the same samples backfilled
// into a real Prometheus with promtool — in direct mode and in Prometheus mode, refreshing the last hour every 5 s.
// Cold: direct mode with an empty results cache; warm: direct mode's cache after the previous refresh; Prometheus
// has no results cache, so its refresh costs the same every time. The ratios are Prometheus mode's time over
// direct mode's, measured in the same run.
func BenchmarkDirectVsPrometheus(b *testing.B) {
	fleet := map[string][]string{}
	for i, ep := range []string{"a", "b", "c", "d"} {
		fleet[ep] = []string{"-flavor=vllm-v1", "-engines=2", "-qps=8", "-spec-tokens=3", "-error-rate=0.02", "-seed=" + string(rune('1'+i))}
	}
	run := newSimRunAt(b, fleet, 70*time.Minute, 5*time.Second, 0)
	om := strings.ReplaceAll(run.openMetrics(), `{endpoint="`, `{instance="`)
	engines := promtest.EnginesOf(b, promtest.Prometheus2)
	prom := promtest.Start(b, promtest.Options{Engine: engines[0], OpenMetrics: om})
	om = ""

	panels, err := dashtest.Panels(filepath.Join(harness.RepoRoot(b), "dashboards", "vllm-fleet.json"),
		map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*"})
	if err != nil {
		b.Fatal(err)
	}
	var queries []query.Query
	for _, p := range panels {
		for _, t := range p.Targets {
			raw, _ := json.Marshal(t)
			var q query.Query
			if err := json.Unmarshal(raw, &q); err != nil {
				b.Fatal(err)
			}
			queries = append(queries, q)
		}
	}
	client := &promapi.Client{BaseURL: prom.URL, HTTP: &http.Client{Timeout: 60 * time.Second}}
	prometheus := &promapi.Evaluator{Client: client, Discovery: &promapi.Discovery{Client: client, Lookback: 24 * time.Hour}, ScrapeInterval: 5 * time.Second}
	cached := &query.Engine{Source: query.HistorySource{Store: run.store}, ScrapeInterval: 5 * time.Second, Cache: query.NewCache(64 << 20)}
	ctx := context.Background()
	// refresh answers every panel query over the hour ending at end, as the dashboard's one refresh; LoRA queries go
	// through pkg/lora as the data source sends them.
	refresh := func(eval lora.Eval, end time.Time) {
		r := query.Request{From: end.Add(-time.Hour), To: end, Interval: 15 * time.Second, MaxDataPoints: 1000}
		for _, q := range queries {
			var err error
			switch {
			case q.QueryType == query.TypeDiagnosis:
				dr := query.Request{From: end.Add(-query.DiagnosisWindow), To: end, Interval: r.Interval}
				_, _, err = query.Diagnose(ctx, q, func(ctx context.Context, sub query.Query) ([]query.Output, error) {
					res, err := eval(ctx, sub, dr)
					if err != nil {
						return nil, err
					}
					return res.Outputs, nil
				})
			case q.ReadsLoRA():
				_, err = lora.Answer(ctx, eval, q, r)
			default:
				_, err = eval(ctx, q, r)
			}
			if err != nil {
				b.Fatalf("%+v: %v", q, err)
			}
		}
	}
	viaEngine := func(e *query.Engine) lora.Eval {
		return e.Eval
	}
	viaPrometheus := func(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
		ans, err := prometheus.Eval(ctx, q, r)
		if err != nil {
			return nil, err
		}
		return ans.Result, nil
	}
	end := run.start.Add(65 * time.Minute)
	refresh(viaEngine(cached), end)
	refresh(viaPrometheus, end) // Prometheus's series discovery and the OS page cache warmed, as in a running server
	var cold, warm, promTime time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		end = end.Add(5 * time.Second)
		if end.After(run.end) {
			end = run.start.Add(65 * time.Minute)
		}
		t0 := time.Now()
		refresh(viaEngine(cached), end)
		t1 := time.Now()
		refresh(viaEngine(&query.Engine{Source: cached.Source, ScrapeInterval: 5 * time.Second, Cache: query.NewCache(64 << 20)}), end)
		t2 := time.Now()
		refresh(viaPrometheus, end)
		warm, cold, promTime = warm+t1.Sub(t0), cold+t2.Sub(t1), promTime+time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(cold.Microseconds())/n/1000, "ms-direct-cold")
	b.ReportMetric(float64(warm.Microseconds())/n/1000, "ms-direct-warm")
	b.ReportMetric(float64(promTime.Microseconds())/n/1000, "ms-prometheus")
	b.ReportMetric(float64(promTime)/float64(cold), "prometheus/direct-cold")
	b.ReportMetric(float64(promTime)/float64(warm), "prometheus/direct-warm")
}

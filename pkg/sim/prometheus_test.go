package sim

import (
	"io"
	"log"
	"math"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// TestRealPrometheusScrape has Debian's prometheus scrape the simulator on loopback (one
// simulated minute per real second) and checks the seed documents' PromQL on what it stored.
// Windows are in real seconds, since that is how Prometheus timestamps the scrapes.
func TestRealPrometheusScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Prometheus server")
	}
	profCfg := filepath.Join(t.TempDir(), ProfilerConfigName)
	if err := os.WriteFile(profCfg, []byte(`{"enable": 0, "metric_enable": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Two Ascend ranks, routed so that rank 0 is overloaded on a small pool and preempts.
	cfg := testConfig(func(c *Config) {
		c.Flavor, c.Engines, c.QPS, c.Routing, c.Skew = FlavorAscend, 2, 9, "skewed", 0.8
		c.NumGPUBlocks, c.ProfilerConfig = 2300, profCfg
	})
	start := time.Now()
	srv, err := NewServerWithClock(cfg, start, ScaledClock{Start: start, Speed: 60}, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	srv.Profiler().Check()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Listener = ln
	ts.Start()
	defer ts.Close()

	prom := promtest.Start(t, promtest.Options{
		Targets:        []promtest.Target{{Addr: ln.Addr().String()}},
		ScrapeInterval: time.Second,
	})
	const timeout = 40 * time.Second
	perSeries := func(n int, ok func(float64) bool) func(model.Vector) bool {
		return func(v model.Vector) bool {
			if len(v) != n {
				return false
			}
			for _, s := range v {
				f := float64(s.Value)
				if math.IsNaN(f) || math.IsInf(f, 0) || !ok(f) {
					return false
				}
			}
			return true
		}
	}
	cases := []struct {
		expr string
		ok   func(model.Vector) bool
	}{
		// p95 TTFT per engine: finite, between a millisecond and a (simulated) minute of queueing.
		{`histogram_quantile(0.95, rate(vllm:time_to_first_token_seconds_bucket[1m]))`,
			perSeries(2, func(v float64) bool { return v > 0.001 && v < 60 })},
		// Tokens per real second: sixty simulated seconds of generation each.
		{`rate(vllm:generation_tokens_total[1m])`,
			perSeries(2, func(v float64) bool { return v > 100 })},
		{`vllm:num_requests_waiting`, perSeries(2, func(v float64) bool { return v >= 0 })},
		{`vllm:kv_cache_usage_perc`, perSeries(2, func(v float64) bool { return v > 0 && v <= 1 })},
		{`rate(vllm:num_preemptions_total[5m])`, perSeries(2, func(v float64) bool { return v >= 0 })},
		// The overloaded rank does preempt.
		{`rate(vllm:num_preemptions_total{engine="0"}[5m])`, perSeries(1, func(v float64) bool { return v > 0 })},
		// msServiceProfiler's own KV formula, per dp.
		{`1 - vllm_profiling_free_kvcache_blocks / vllm_profiling_total_kvcache_blocks`,
			perSeries(2, func(v float64) bool { return v > 0 && v <= 1 })},
		// ... which agrees with vLLM's gauge once dp is joined to engine (they differ only by
		// the null block).
		{`max(abs((1 - vllm_profiling_free_kvcache_blocks / vllm_profiling_total_kvcache_blocks)
			- on(dp) label_replace(vllm:kv_cache_usage_perc, "dp", "$1", "engine", "(.*)")))`,
			perSeries(1, func(v float64) bool { return v < 0.002 })},
	}
	for _, tc := range cases {
		v := prom.WaitFor(t, tc.expr, timeout, tc.ok)
		t.Logf("%s => %v", tc.expr, v)
	}
}

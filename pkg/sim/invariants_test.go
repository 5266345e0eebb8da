package sim

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func histCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

func bucketCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

// scrapeChecker holds the previous scrape so monotonicity can be checked across scrapes.
type scrapeChecker struct {
	t    *testing.T
	cfg  Config
	prev map[string]float64 // family|series|component -> value
}

func (c *scrapeChecker) monotonic(key string, v float64, at time.Duration) {
	if old, ok := c.prev[key]; ok && v < old {
		c.t.Fatalf("at %s: %s went down from %v to %v", at, key, old, v)
	}
	c.prev[key] = v
}

// check runs every invariant on one scrape.
func (c *scrapeChecker) check(fams map[string]*dto.MetricFamily, at time.Duration) {
	t := c.t
	t.Helper()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			key := name + "|" + seriesKey(m)
			switch fam.GetType() {
			case dto.MetricType_COUNTER:
				c.monotonic(key, value(m), at)
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				c.monotonic(key+"|count", histCount(h), at)
				c.monotonic(key+"|sum", h.GetSampleSum(), at)
				prev := 0.0
				bs := h.GetBucket()
				for _, b := range bs {
					n := bucketCount(b)
					if n < prev {
						t.Fatalf("at %s: %s buckets not cumulative at le=%v", at, key, b.GetUpperBound())
					}
					prev = n
					c.monotonic(key+"|le="+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64), n, at)
				}
				if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].GetUpperBound(), 1) || bucketCount(bs[len(bs)-1]) != histCount(h) {
					t.Fatalf("at %s: %s: +Inf bucket missing or != _count", at, key)
				}
			}
		}
	}

	running := fams["vllm:num_requests_running"]
	for _, m := range running.GetMetric() {
		if v := value(m); v > float64(c.cfg.MaxNumSeqs) || v < 0 {
			t.Fatalf("at %s: running %v outside [0, %d]", at, v, c.cfg.MaxNumSeqs)
		}
	}
	for _, name := range []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"} {
		for _, m := range fams[name].GetMetric() {
			if v := value(m); v < 0 || v > 1 {
				t.Fatalf("at %s: %s = %v outside [0, 1]", at, name, v)
			}
		}
	}

	// Per engine, histogram counts must equal the request counters they describe.
	engineSel := func(e int) map[string]string {
		if c.cfg.Flavor == FlavorV0 {
			return map[string]string{}
		}
		return map[string]string{"engine": strconv.Itoa(e)}
	}
	lo, hi := c.cfg.localEngines()
	for e := lo; e < hi; e++ {
		sel := engineSel(e)
		success := sumOver(fams["vllm:request_success_total"], sel)
		for _, h := range []string{"vllm:e2e_request_latency_seconds", "vllm:request_prompt_tokens",
			"vllm:request_generation_tokens", "vllm:request_queue_time_seconds", "vllm:request_decode_time_seconds",
			"vllm:request_params_max_tokens"} {
			fam := fams[h]
			if fam == nil && c.cfg.Flavor == FlavorV0 && success == 0 {
				continue // V0 creates histogram children lazily
			}
			if got := sumOver(fam, sel); got != success {
				t.Fatalf("at %s: engine %d: %s_count = %v, request_success_total sums to %v", at, e, h, got, success)
			}
		}
		ttft := sumOver(fams["vllm:time_to_first_token_seconds"], sel)
		itlName := "vllm:inter_token_latency_seconds"
		if c.cfg.Flavor == FlavorV0 {
			itlName = "vllm:time_per_output_token_seconds"
		}
		itl := sumOver(fams[itlName], sel)
		gen := sumOver(fams["vllm:generation_tokens_total"], sel)
		if c.cfg.SpecTokens == 0 && gen != ttft+itl {
			t.Fatalf("at %s: engine %d: generation_tokens_total %v != first tokens %v + inter-token latencies %v", at, e, gen, ttft, itl)
		}
		if c.cfg.SpecTokens > 0 && gen < ttft+itl {
			t.Fatalf("at %s: engine %d: generation_tokens_total %v below token outputs %v", at, e, gen, ttft+itl)
		}
		if m := find(fams["vllm:request_generation_tokens"], sel); m != nil && m.GetHistogram().GetSampleSum() > gen {
			t.Fatalf("at %s: engine %d: finished requests generated more than generation_tokens_total", at, e)
		}
		if src := fams["vllm:prompt_tokens_by_source_total"]; src != nil {
			if by, total := sumOver(src, sel), sumOver(fams["vllm:prompt_tokens_total"], sel); by != total {
				t.Fatalf("at %s: engine %d: prompt_tokens_by_source sums to %v, prompt_tokens_total %v", at, e, by, total)
			}
		}
		if fams["vllm:gpu_cache_usage_perc"] != nil && c.cfg.Flavor != FlavorV0 {
			for _, pair := range [][2]string{{"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"},
				{"vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"},
				{"vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"}} {
				if a, b := sumOver(fams[pair[0]], sel), sumOver(fams[pair[1]], sel); a != b {
					t.Fatalf("at %s: engine %d: deprecated %s (%v) differs from %s (%v)", at, e, pair[0], a, pair[1], b)
				}
			}
		}
		if c.cfg.Flavor == FlavorAscend && fams["vllm_profiling_total_kvcache_blocks"] != nil {
			dp := map[string]string{"dp": strconv.Itoa(e)}
			if c.cfg.Engines == 1 {
				dp["dp"] = "-1"
			}
			total := sumOver(fams["vllm_profiling_total_kvcache_blocks"], dp)
			free := sumOver(fams["vllm_profiling_free_kvcache_blocks"], dp)
			alloc := sumOver(fams["vllm_profiling_allocated_kvcache_blocks"], dp)
			if free+alloc+1 != total {
				t.Fatalf("at %s: dp %s: free %v + allocated %v + null block != total %v", at, dp["dp"], free, alloc, total)
			}
			if usage := sumOver(fams["vllm:kv_cache_usage_perc"], sel); !near(usage, alloc/(total-1)) {
				t.Fatalf("at %s: engine %d: kv_cache_usage_perc %v != allocated/(total-1) %v", at, e, usage, alloc/(total-1))
			}
			if in := sumOver(fams["vllm_profiling_input_total"], dp); in < sumOver(fams["vllm:prompt_tokens_total"], sel) {
				t.Fatalf("at %s: dp %s: input_total %v below prompt tokens", at, dp["dp"], in)
			}
		}
		if c.cfg.PIDLabel {
			nonZero := 0
			for _, m := range fams["vllm:kv_cache_usage_perc"].GetMetric() {
				if labelMap(m)["engine"] == strconv.Itoa(e) && value(m) != 0 {
					nonZero++
				}
			}
			if nonZero > 1 {
				t.Fatalf("at %s: engine %d: %d pids report KV usage, want at most one", at, e, nonZero)
			}
		}
	}
}

// checkModel verifies the engine's internal bookkeeping: KV usage is used/usable blocks, and
// the blocks in use are exactly those held by running requests.
func checkModel(t *testing.T, f *Fleet, at time.Duration) {
	t.Helper()
	for _, e := range f.engines {
		held := 0
		for _, r := range e.running {
			held += r.blocks
		}
		for i := 0; i < e.waiting.len(); i++ {
			if r := e.waiting.at(i); r.blocks != 0 {
				t.Fatalf("at %s: engine %d: a waiting request holds %d blocks", at, e.idx, r.blocks)
			}
		}
		if held != e.kv.used || e.kv.used > e.kv.usable() || e.kv.free() < 0 {
			t.Fatalf("at %s: engine %d: used %d, held by running %d, usable %d", at, e.idx, e.kv.used, held, e.kv.usable())
		}
		if got, want := e.kv.usage(), float64(held)/float64(e.cfg.NumGPUBlocks-1); got != want {
			t.Fatalf("at %s: engine %d: usage %v != used/usable %v", at, e.idx, got, want)
		}
		if len(e.running) > e.cfg.MaxNumSeqs {
			t.Fatalf("at %s: engine %d: %d running > max-num-seqs", at, e.idx, len(e.running))
		}
	}
}

// TestInvariantsLongRun steps fleets for simulated hours, scraping and checking every invariant
// after each scrape. The loads are heavy enough to fill KV pools and preempt.
func TestInvariantsLongRun(t *testing.T) {
	cases := []struct {
		name    string
		cfg     func(*Config)
		profile bool
		run     time.Duration
	}{
		{"vllm-v1 dp2 spec-decode overloaded", func(c *Config) {
			c.Engines, c.QPS, c.SpecTokens, c.NumGPUBlocks, c.MaxNumSeqs = 2, 14, 3, 2600, 128
			c.QPSWaveAmplitude, c.QPSWavePeriod = 0.6, Duration(20*time.Minute)
		}, false, 2 * time.Hour},
		{"vllm-v1-0.10 pid label", func(c *Config) {
			c.Flavor, c.Engines, c.QPS, c.APIServerProcesses, c.PIDLabel = FlavorV1010, 2, 8, 2, true
		}, false, time.Hour},
		{"vllm-v0 spec-decode", func(c *Config) {
			c.Flavor, c.QPS, c.SpecTokens, c.ErrorRate = FlavorV0, 5, 2, 0.01
		}, false, time.Hour},
		{"vllm-ascend dp2 skewed", func(c *Config) {
			c.Flavor, c.Engines, c.QPS, c.Routing, c.NumGPUBlocks = FlavorAscend, 2, 10, "skewed", 3000
		}, true, time.Hour},
		{"vllm-ascend single engine", func(c *Config) { c.Flavor, c.QPS = FlavorAscend, 3 }, true, 20 * time.Minute},
		{"dynamo-worker api-server split", func(c *Config) {
			c.Flavor, c.Engines, c.APIServers, c.APIServerIndex, c.QPS = FlavorDynamoWorker, 4, 2, 1, 8
		}, false, 30 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.cfg)
			f := newTestFleet(t, cfg)
			f.SetProfilingEnabled(tc.profile)
			c := &scrapeChecker{t: t, cfg: cfg, prev: map[string]float64{}}
			const every = time.Minute
			for at := every; at <= tc.run; at += every {
				f.AdvanceTo(at)
				checkModel(t, f, at)
				c.check(parse(t, render(t, f)), at)
			}
		})
	}
}

// TestPreemptionsOnlyWhenPoolFull runs a light load that must never preempt and an overload on a
// small pool that must, with KV usage reaching the top whenever preemptions happen.
func TestPreemptionsOnlyWhenPoolFull(t *testing.T) {
	cases := []struct {
		name        string
		cfg         func(*Config)
		wantPreempt bool
	}{
		{"light load, default pool", func(c *Config) { c.QPS = 3 }, false},
		{"overload, small pool", func(c *Config) { c.QPS, c.NumGPUBlocks, c.OutputTokensMean = 10, 2200, 600 }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFleet(t, testConfig(tc.cfg))
			e := f.engines[0]
			maxUsage, prevPreempt := 0.0, 0.0
			for at := 5 * time.Second; at <= 20*time.Minute; at += 5 * time.Second {
				f.AdvanceTo(at)
				maxUsage = math.Max(maxUsage, e.kv.usage())
				if e.st.preemptions > prevPreempt && maxUsage < 0.9 {
					t.Fatalf("at %s: preempted with KV usage never above %.2f", at, maxUsage)
				}
				prevPreempt = e.st.preemptions
			}
			if got := e.st.preemptions > 0; got != tc.wantPreempt {
				t.Fatalf("preemptions = %v (max KV usage %.2f), want any = %v", e.st.preemptions, maxUsage, tc.wantPreempt)
			}
			if tc.wantPreempt && maxUsage < 0.95 {
				t.Fatalf("max KV usage %.2f: an overload should fill the pool", maxUsage)
			}
		})
	}
}

// TestDeterminism: the same seed gives the same exposition, however the time span is stepped.
func TestDeterminism(t *testing.T) {
	cfg := testConfig(func(c *Config) { c.Engines, c.QPS, c.SpecTokens = 3, 9, 2 })
	a := newTestFleet(t, cfg)
	a.Advance(10 * time.Minute)
	b := newTestFleet(t, cfg)
	for i := 0; i < 600; i++ {
		b.Advance(time.Second)
	}
	if ra, rb := render(t, a), render(t, b); ra != rb {
		t.Fatal("one 10-minute step and 600 one-second steps gave different expositions")
	}
	cfg.Seed = 2
	c := newTestFleet(t, cfg)
	c.Advance(10 * time.Minute)
	if render(t, a) == render(t, c) {
		t.Fatal("different seeds gave identical runs")
	}
}

// TestAPIServerSplit: each endpoint exposes only its contiguous share of the engines.
func TestAPIServerSplit(t *testing.T) {
	for idx, want := range [][]string{{"0", "1"}, {"2", "3"}} {
		cfg := testConfig(func(c *Config) { c.Engines, c.APIServers, c.APIServerIndex = 4, 2, idx })
		f := newTestFleet(t, cfg)
		f.Advance(time.Minute)
		var got []string
		for _, m := range parse(t, render(t, f))["vllm:num_requests_running"].GetMetric() {
			got = append(got, labelMap(m)["engine"])
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("api-server-index %d exposes engines %v, want %v", idx, got, want)
		}
	}
}

package query

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// Relative tolerances: gauges, rates and ratios go through the same arithmetic as Prometheus and agree to
// rounding; quantiles interpolate inside buckets, where a last-bit difference in a summed bucket rate (our sum
// order versus PromQL's sum by) moves the result a little more.
const (
	tolExact    = 1e-9
	tolQuantile = 1e-6
)

type promCase struct {
	name  string
	query Query
	// promql is the equivalent expression; $w is replaced by the engine's rate window.
	promql string
	// measure selects the engine outputs compared (several measures may come back from one query).
	measure string
	// keep lists the Prometheus labels that identify a series in the engine's output.
	keep []string
	tol  float64
}

func promCases() []promCase {
	byEngine := []string{"endpoint", "model_name", "engine"}
	return []promCase{
		{"kv usage V1 and V0 gauges", Query{QueryType: TypeKVCacheUsage, Endpoint: "v1|v0"},
			`avg by (endpoint, model_name, engine) (vllm:kv_cache_usage_perc{endpoint=~"v1|v0"} or vllm:gpu_cache_usage_perc{endpoint=~"v1|v0"}) * 100`, "kv_usage", byEngine, tolExact},
		{"kv usage Ascend blocks per dp", Query{QueryType: TypeKVCacheUsage, Endpoint: "ascend"},
			`(1 - sum by (endpoint, dp) (vllm_profiling_free_kvcache_blocks) / sum by (endpoint, dp) (vllm_profiling_total_kvcache_blocks)) * 100`,
			"kv_usage", []string{"endpoint", "dp"}, tolExact},
		{"kv usage per endpoint", Query{QueryType: TypeKVCacheUsage, Endpoint: "v1", GroupBy: GroupEndpoint},
			`avg by (endpoint, model_name) (vllm:kv_cache_usage_perc{endpoint="v1"}) * 100`, "kv_usage", []string{"endpoint", "model_name"}, tolExact},
		{"running", Query{QueryType: TypeQueue, Measure: "running"},
			`sum by (endpoint, model_name, engine) (vllm:num_requests_running)`, "running", byEngine, tolExact},
		{"waiting per model", Query{QueryType: TypeQueue, Measure: "waiting", GroupBy: GroupModel},
			`sum by (model_name) (vllm:num_requests_waiting)`, "waiting", []string{"model_name"}, tolExact},
		{"swapped (V0)", Query{QueryType: TypeQueue, Measure: "swapped"},
			`sum by (endpoint, model_name, engine) (vllm:num_requests_swapped)`, "swapped", byEngine, tolExact},
		{"generation tokens/s across counter resets", Query{QueryType: TypeThroughput, Measure: "generation_tokens"},
			`sum by (endpoint, model_name, engine) (rate(vllm:generation_tokens_total[$w]))`, "generation_tokens_per_second", byEngine, tolExact},
		{"fleet generation tokens/s", Query{QueryType: TypeThroughput, Measure: "generation_tokens", GroupBy: GroupFleet},
			`sum(rate(vllm:generation_tokens_total[$w]))`, "generation_tokens_per_second", nil, tolExact},
		{"requests/s by finished_reason", Query{QueryType: TypeThroughput, Measure: "requests"},
			`sum by (endpoint, model_name, engine, finished_reason) (rate(vllm:request_success_total[$w]))`, "requests_per_second",
			[]string{"endpoint", "model_name", "engine", "finished_reason"}, tolExact},
		{"Ascend output tokens/s", Query{QueryType: TypeThroughput, Measure: "ascend_output"},
			`sum by (endpoint, dp) (rate(vllm_profiling_output_total[$w]))`, "output_tokens_per_second", []string{"endpoint", "dp"}, tolExact},
		{"preemptions/s", Query{QueryType: TypeCache, Measure: "preemptions"},
			`sum by (endpoint, model_name, engine) (rate(vllm:num_preemptions_total[$w]))`, "preemptions_per_second", byEngine, tolExact},
		{"prefix hit rate V1 counters", Query{QueryType: TypeCache, Measure: "prefix_hit_rate", Endpoint: "v1"},
			`sum by (endpoint, model_name, engine) (rate(vllm:prefix_cache_hits_total[$w])) / sum by (endpoint, model_name, engine) (rate(vllm:prefix_cache_queries_total[$w]))`,
			"prefix_hit_rate", byEngine, tolExact},
		{"prefix hit rate V0 gauge", Query{QueryType: TypeCache, Measure: "prefix_hit_rate", Endpoint: "v0"},
			`avg by (endpoint, model_name) (vllm:gpu_prefix_cache_hit_rate)`, "prefix_hit_rate", []string{"endpoint", "model_name"}, tolExact},
		{"spec acceptance rate", Query{QueryType: TypeSpecDecode, Measure: "acceptance_rate", Endpoint: "v1"},
			`sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_accepted_tokens_total[$w])) / sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_draft_tokens_total[$w]))`,
			"acceptance_rate", byEngine, tolExact},
		{"spec mean acceptance length", Query{QueryType: TypeSpecDecode, Measure: "acceptance_length"},
			`1 + sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_accepted_tokens_total[$w])) / sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_drafts_total[$w]))`,
			"acceptance_length", byEngine, tolExact},
		{"spec per-position acceptance", Query{QueryType: TypeSpecDecode, Measure: "per_position"},
			`sum by (endpoint, model_name, engine, position) (rate(vllm:spec_decode_num_accepted_tokens_per_pos_total[$w])) / ignoring (position) group_left sum by (endpoint, model_name, engine) (rate(vllm:spec_decode_num_drafts_total[$w]))`,
			"acceptance_per_position", []string{"endpoint", "model_name", "engine", "position"}, tolExact},
		{"V0 acceptance rate gauge", Query{QueryType: TypeSpecDecode, Measure: "acceptance_rate", Endpoint: "v0"},
			`avg by (endpoint, model_name) (vllm:spec_decode_draft_acceptance_rate)`, "acceptance_rate", []string{"endpoint", "model_name"}, tolExact},
		{"TTFT p95 per engine", Query{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}},
			`histogram_quantile(0.95, sum by (le, endpoint, model_name, engine) (rate(vllm:time_to_first_token_seconds_bucket[$w])))`,
			"ttft", byEngine, tolQuantile},
		{"TTFT p50 fleet", Query{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.5}, GroupBy: GroupFleet},
			`histogram_quantile(0.5, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[$w])))`, "ttft", nil, tolQuantile},
		{"TTFT mean", Query{QueryType: TypeLatency, Metric: "ttft", Measure: "mean"},
			`sum by (endpoint, model_name, engine) (rate(vllm:time_to_first_token_seconds_sum[$w])) / sum by (endpoint, model_name, engine) (rate(vllm:time_to_first_token_seconds_count[$w]))`,
			"ttft_mean", byEngine, tolExact},
		{"Ascend custom timer p99 per dp", Query{QueryType: TypeLatency, Metric: "timer:vllm_profiling_server:create_chat_completion:duration", Quantiles: []float64{0.99}},
			`histogram_quantile(0.99, sum by (le, endpoint, dp) (rate({__name__="vllm_profiling_server:create_chat_completion:duration_bucket"}[$w])))`,
			"timer:vllm_profiling_server:create_chat_completion:duration", []string{"endpoint", "dp"}, tolQuantile},
		{"DP balance max/mean of running", Query{QueryType: TypeDPBalance, Measure: "running", Endpoint: "v1"},
			`max(vllm:num_requests_running{endpoint="v1"}) / avg(vllm:num_requests_running{endpoint="v1"})`, "max_over_mean", nil, tolExact},
		{"DP balance CV of running", Query{QueryType: TypeDPBalance, Measure: "running", Endpoint: "v1"},
			`stddev(vllm:num_requests_running{endpoint="v1"}) / avg(vllm:num_requests_running{endpoint="v1"})`, "cv", nil, tolExact},
		{"DP balance idle ranks while others queue", Query{QueryType: TypeDPBalance, Measure: "running", Endpoint: "v1"},
			`count(vllm:num_requests_running{endpoint="v1"} == 0) and on () (count(vllm:num_requests_waiting{endpoint="v1"} > 0) > 0) or on () vector(0)`,
			"idle_while_waiting", nil, tolExact},
		{"capacity: pool tokens", Query{QueryType: TypeCapacity},
			`sum by (endpoint, model_name, engine) (vllm:cache_config_info * 0 + 2048 * 16)`, "kv_pool_tokens", byEngine, tolExact},
		{"capacity: mean tokens per request", Query{QueryType: TypeCapacity},
			`(sum by (endpoint, model_name, engine) (rate(vllm:request_prompt_tokens_sum[$w])) + sum by (endpoint, model_name, engine) (rate(vllm:request_generation_tokens_sum[$w]))) / sum by (endpoint, model_name, engine) (rate(vllm:request_prompt_tokens_count[$w]))`,
			"mean_tokens_per_request", byEngine, tolExact},
		{"capacity: requests with 30% headroom", Query{QueryType: TypeCapacity},
			`2048 * 16 / ((sum by (endpoint, model_name, engine) (rate(vllm:request_prompt_tokens_sum[$w])) + sum by (endpoint, model_name, engine) (rate(vllm:request_generation_tokens_sum[$w]))) / sum by (endpoint, model_name, engine) (rate(vllm:request_prompt_tokens_count[$w]))) * 0.7`,
			"capacity_requests", byEngine, tolExact},
	}
}

// TestEngineMatchesPrometheus evaluates every query type over a synthetic fleet and compares each value with
// what Prometheus computes for the equivalent PromQL over exactly the same samples, with the same assertions.
// Direct mode follows Prometheus 3 (#12 item 8), whose range windows leave out a sample exactly at their start;
// 2.42's include it. So the fleet is compared twice: scraped on the 5 s marks the steps fall on (every window
// starts on a sample) against Prometheus 3 only, and scraped 2 s after them (no window starts on a sample, where
// the two versions agree) against both. derive's TestWindowBoundaryAgainstEngines pins 2.42's on-boundary answers.
func TestEngineMatchesPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	for _, layout := range []struct {
		name    string
		offset  int64
		engines []promtest.Engine
	}{
		{"on step boundaries", 0, []promtest.Engine{promtest.Prometheus3}},
		{"off step boundaries", 2000, []promtest.Engine{promtest.Prometheus2, promtest.Prometheus3}},
	} {
		start := time.Now().Add(-3*time.Hour).Truncate(time.Hour).UnixMilli() + layout.offset
		f := newFleet(start)
		for _, engine := range promtest.EnginesOf(t, layout.engines...) {
			t.Run(layout.name+"/"+engine.String(), func(t *testing.T) {
				prom := promtest.Start(t, promtest.Options{Engine: engine, OpenMetrics: f.openMetrics()})
				engineMatchesPrometheus(t, f, prom, start)
			})
		}
	}
}

func engineMatchesPrometheus(t *testing.T, f *fleet, prom *promtest.Server, start int64) {
	eng := &Engine{Source: f.src, ScrapeInterval: 5 * time.Second}
	req := Request{From: time.UnixMilli(start + 10*60*1000), To: time.UnixMilli(f.end + 4*60*1000), Interval: 15 * time.Second}

	for _, tc := range promCases() {
		t.Run(tc.name, func(t *testing.T) {
			res, err := eng.Eval(context.Background(), tc.query, req)
			if err != nil {
				t.Fatal(err)
			}
			ours := promtest.Values{}
			for _, o := range res.Outputs {
				if o.Measure != tc.measure {
					continue
				}
				k := promtest.Key(o.Labels, tc.keep)
				if _, dup := ours[k]; dup {
					t.Fatalf("two outputs for %s", k)
				}
				ours[k] = map[int64]float64{}
				for _, p := range o.Points {
					ours[k][p.T] = p.V
				}
			}
			if len(ours) == 0 {
				t.Fatalf("engine returned no %s series", tc.measure)
			}
			expr := strings.ReplaceAll(tc.promql, "$w", model.Duration(res.Window).String())
			step := res.Step.Milliseconds()
			from, to := req.From.UnixMilli()/step*step, req.To.UnixMilli()/step*step
			compared := prom.CompareRange(t, expr, time.UnixMilli(from), time.UnixMilli(to), res.Step, ours, tc.keep, tc.tol)
			t.Logf("%d values compared over %d series (step %s, window %s)", compared, len(ours), res.Step, res.Window)
		})
	}
}

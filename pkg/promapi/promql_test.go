package promapi

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// mixedFleet holds V1, deprecated, V0, Ascend and Dynamo names, as a server scraping a mixed fleet does.
var mixedFleet = Names{
	"vllm:kv_cache_usage_perc": true, "vllm:gpu_cache_usage_perc": true,
	"vllm_profiling_free_kvcache_blocks": true, "vllm_profiling_total_kvcache_blocks": true,
	"dynamo_component_gpu_cache_usage_percent": true,
	"vllm:num_requests_running":                true, "vllm:num_requests_waiting": true,
	"vllm:generation_tokens_total": true, "dynamo_frontend_output_tokens_total": true,
	"vllm:prefix_cache_hits_total": true, "vllm:prefix_cache_queries_total": true, "vllm:gpu_prefix_cache_hit_rate": true,
	"vllm:time_to_first_token_seconds_bucket": true, "dynamo_frontend_time_to_first_token_seconds_bucket": true,
	"vllm:spec_decode_num_accepted_tokens_per_pos_total": true, "vllm:spec_decode_num_drafts_total": true,
	"vllm:cache_config_info": true, "vllm:request_prompt_tokens_bucket": true, "vllm:request_generation_tokens_bucket": true,
}

// TestGeneratedPromQL pins the PromQL of each form: the V1/deprecated/Ascend/Dynamo `or` per endpoint, guards
// against division by zero, rate windows and by clauses. TestPrometheusModeMatchesDirectOnSameSamples (pkg/e2e)
// checks every query type's numbers against direct mode on a real Prometheus.
func TestGeneratedPromQL(t *testing.T) {
	cc := []CacheConfig{{NumGPUBlocks: "2048", BlockSize: "16"}}
	cases := []struct {
		name string
		q    query.Query
		want []string // one expression per output measure
	}{
		{"kv usage: Ascend blocks, else V1 then deprecated gauge, else Dynamo", query.Query{QueryType: query.TypeKVCacheUsage, Endpoint: "gpu-.*"}, []string{
			`((1 - sum by (instance, model_name, dp) (max without (pid) (vllm_profiling_free_kvcache_blocks{instance=~"gpu-.*"})) / (sum by (instance, model_name, dp) (max without (pid) (vllm_profiling_total_kvcache_blocks{instance=~"gpu-.*"})) > 0)) * 100)` +
				` or ((avg by (instance, model_name, engine) (max without (pid) (vllm:kv_cache_usage_perc{instance=~"gpu-.*"} unless on (instance) {__name__=~"vllm_profiling_free_kvcache_blocks", instance=~"gpu-.*"} or vllm:gpu_cache_usage_perc{instance=~"gpu-.*"} unless on (instance) {__name__=~"vllm:kv_cache_usage_perc|vllm_profiling_free_kvcache_blocks", instance=~"gpu-.*"}))) * 100)` +
				` or ((avg by (instance, model_name, engine) (max without (pid) (label_replace(label_replace(dynamo_component_gpu_cache_usage_percent{instance=~"gpu-.*"}, "engine", "$1", "dp_rank", "(.+)"), "model_name", "$1", "model", "(.+)") unless on (instance) {__name__=~"vllm_profiling_free_kvcache_blocks|vllm:kv_cache_usage_perc|vllm:gpu_cache_usage_perc", instance=~"gpu-.*"}))) * 100)`,
		}},
		{"generation tokens/s per model, vLLM or Dynamo frontend", query.Query{QueryType: query.TypeThroughput, Measure: "generation_tokens", GroupBy: query.GroupModel}, []string{
			`sum by (model_name) (rate(vllm:generation_tokens_total[20s]) or label_replace(rate(dynamo_frontend_output_tokens_total[20s]), "model_name", "$1", "model", "(.+)") unless on (instance) {__name__=~"vllm:generation_tokens_total"})`,
		}},
		{"prefix hit rate: V1 counters guarded, V0 gauge where no counters", query.Query{QueryType: query.TypeCache, Measure: "prefix_hit_rate", Model: "llama"}, []string{
			`(sum by (instance, model_name, engine) (rate(vllm:prefix_cache_hits_total{model_name=~"llama"}[20s])) / (sum by (instance, model_name, engine) (rate(vllm:prefix_cache_queries_total{model_name=~"llama"}[20s])) != 0))` +
				` or (avg by (instance, model_name, engine) (max without (pid) (vllm:gpu_prefix_cache_hit_rate{model_name=~"llama", server=""} unless on (instance) {__name__=~"vllm:prefix_cache_queries_total"})))`,
		}},
		// One endpoint per group: one exporter, one bucket layout, so the plain sum by (le).
		{"TTFT p95 per endpoint", query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}, GroupBy: query.GroupEndpoint, Engine: "0"}, []string{
			`histogram_quantile(0.95, sum by (instance, model_name, le) (rate(vllm:time_to_first_token_seconds_bucket{engine=~"0"}[20s])))`,
		}},
		// Grouped across endpoints, only the bounds every histogram of the group has are summed
		// (TestMixedBucketLayoutsUseCommonBuckets); "All" (.*) sends no matcher.
		{"TTFT p95 per model", query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}, GroupBy: query.GroupModel, Endpoint: ".*", Engine: "0"}, []string{
			`histogram_quantile(0.95, sum by (model_name, le) (label_replace(rate(vllm:time_to_first_token_seconds_bucket{engine=~"0"}[20s]), "le", "$1", "le", "(.+)\\.0"))` +
				` and on (model_name, le) (count by (model_name, le) (label_replace(rate(vllm:time_to_first_token_seconds_bucket{engine=~"0"}[20s]), "le", "$1", "le", "(.+)\\.0"))` +
				` == on (model_name) group_left () count by (model_name) (rate(vllm:time_to_first_token_seconds_bucket{engine=~"0", le="+Inf"}[20s]))))`,
		}},
		{"per-position acceptance", query.Query{QueryType: query.TypeSpecDecode, Measure: "per_position"}, []string{
			`sum by (instance, model_name, engine, position) (rate(vllm:spec_decode_num_accepted_tokens_per_pos_total[20s])) / ignoring (position) group_left () (sum by (instance, model_name, engine) (rate(vllm:spec_decode_num_drafts_total[20s])) != 0)`,
		}},
		{"DP balance of running across the fleet", query.Query{QueryType: query.TypeDPBalance, Measure: "running"}, []string{
			`sum by (instance, model_name, engine) (max without (pid) (vllm:num_requests_running{server=""}))`,
			`max by () (L) / (avg by () (L) != 0) or (avg by () (L) == 0) * 0 + 1`,
			`stddev by () (L) / (avg by () (L) != 0) or (avg by () (L) == 0)`,
			`count by () ((L) == 0 and on (instance, engine) (sum by () (W) - on () group_right () (W)) > 0) or count by () (L) * 0`,
		}},
		{"capacity with the pool written from cache_config_info", query.Query{QueryType: query.TypeCapacity}, []string{
			// cache_config_info names no model: the pool takes model_name from the same engine's running gauge,
			// or it would never line up with the mean (which has one) and capacity_requests would be empty.
			`sum by (instance, model_name, engine) (max without (pid) (vllm:cache_config_info{num_gpu_blocks="2048", block_size="16"} * 0 + 32768)` +
				` * on (instance, engine) group_left (model_name) group by (instance, engine, model_name) (vllm:num_requests_running{server=""}))`,
			// The capacity is computed from the two answers beside it, not asked of the server (TestCapacityFromItsParts).
			`# computed from the answers of kv_pool_tokens and mean_tokens_per_request: kv_pool_tokens / (mean_tokens_per_request > 0) * 0.7`,
			`(sum by (instance, model_name, engine) (rate(vllm:request_prompt_tokens_sum[20s])) + sum by (instance, model_name, engine) (rate(vllm:request_generation_tokens_sum[20s]))) / (sum by (instance, model_name, engine) (rate(vllm:request_prompt_tokens_count[20s])) != 0)`,
		}},
		{"raw gauge keeps its labels", query.Query{QueryType: query.TypeRaw, Metric: "vllm:num_requests_waiting", Labels: map[string]string{"engine": "1"}}, []string{
			`sum without (job) (vllm:num_requests_waiting{engine=~"1"})`,
		}},
		{"Ascend custom timer", query.Query{QueryType: query.TypeLatency, Metric: "timer:vllm_profiling_server:create:duration", Quantiles: []float64{0.99}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exprs, err := Generate(tc.q, mixedFleet, &Facts{CacheConfigs: cc}, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(exprs) != len(tc.want) {
				t.Fatalf("%d expressions, want %d: %+v", len(exprs), len(tc.want), exprs)
			}
			// Long sub-expressions are abbreviated in the table: L is the load, W the waiting.
			subst := map[string]string{}
			if tc.q.QueryType == query.TypeDPBalance {
				subst["(L)"] = "(" + exprs[0].PromQL + ")"
				subst["(W)"] = "(sum by (instance, model_name, engine) (max without (pid) (vllm:num_requests_waiting{server=\"\"})) and on (instance, engine) (" + exprs[0].PromQL + "))"
			}
			if tc.q.QueryType == query.TypeCapacity && (exprs[1].Ratio == nil || *exprs[1].Ratio != Ratio{Num: 0, Den: 2, Factor: 0.7}) {
				t.Errorf("capacity_requests: ratio %+v, want kv_pool_tokens (0) over mean_tokens_per_request (2) × 0.7", exprs[1].Ratio)
			}
			for i, w := range tc.want {
				for k, v := range subst {
					w = strings.ReplaceAll(w, k, v)
				}
				if exprs[i].PromQL != w {
					t.Errorf("%s:\n got %s\nwant %s", exprs[i].Measure, exprs[i].PromQL, w)
				}
			}
		})
	}
}

// generated are the query types with generated PromQL: every type of direct mode.
var generated = map[query.Type]bool{query.TypeKVCacheUsage: true, query.TypeSpecDecode: true, query.TypeDPBalance: true,
	query.TypeLatency: true, query.TypeThroughput: true, query.TypeQueue: true, query.TypeCache: true,
	query.TypeCapacity: true, query.TypeRaw: true}

func TestGenerateFollowsHeldNames(t *testing.T) {
	q := query.Query{QueryType: query.TypeKVCacheUsage}
	exprs, err := Generate(q, Names{"vllm:gpu_cache_usage_perc": true}, nil, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(exprs) != 1 || exprs[0].PromQL != `(avg by (instance, model_name, engine) (max without (pid) (vllm:gpu_cache_usage_perc))) * 100` {
		t.Errorf("V0-only server: %+v", exprs)
	}
	if exprs, _ := Generate(q, Names{}, nil, 20*time.Second); len(exprs) != 0 {
		t.Errorf("server without vLLM names: %+v", exprs)
	}
	for typ, measures := range query.Measures {
		if typ == query.TypePromQL || !generated[typ] {
			continue
		}
		for _, m := range measures {
			q := query.Query{QueryType: typ, Measure: m, Metric: "vllm:num_requests_running"}
			if typ == query.TypeLatency {
				threshold := 0.3
				q.Metric, q.Threshold = "ttft", &threshold
			}
			if _, err := Generate(q, mixedFleet, nil, time.Minute); err != nil {
				t.Errorf("%s/%s: %v", typ, m, err)
			}
		}
	}
}

// TestCleanUpOnlyWhereLayoutsMayDiffer pins where the common-bucket clean-up is generated: a group that spans
// endpoints keeps it unless the server holds every series of the histogram on one layout (Discovery.Layouts).
func TestCleanUpOnlyWhereLayoutsMayDiffer(t *testing.T) {
	names := Names{"vllm:time_to_first_token_seconds_bucket": true}
	q := query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.95}, GroupBy: query.GroupModel}
	plain := `histogram_quantile(0.95, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[20s])))`
	for _, tc := range []struct {
		name    string
		layouts map[string]string
		clean   bool
	}{
		{"layouts unknown", nil, true},
		{"one layout", map[string]string{"vllm:time_to_first_token_seconds_bucket": "+Inf,0.001,0.005"}, false},
		{"mixed layouts", map[string]string{"vllm:time_to_first_token_seconds_bucket": ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exprs, err := Generate(q, names, &Facts{Layouts: tc.layouts}, 20*time.Second)
			if err != nil || len(exprs) != 1 {
				t.Fatalf("%v %+v", err, exprs)
			}
			if got := exprs[0].PromQL; (got != plain) != tc.clean || tc.clean && !strings.Contains(got, "count by") {
				t.Errorf("clean-up %v wanted, got %s", tc.clean, got)
			}
		})
	}
	// Two names summed into one group need one layout, the same for both.
	two := Names{"vllm:time_to_first_token_seconds_bucket": true, "dynamo_frontend_time_to_first_token_seconds_bucket": true}
	for layouts, clean := range map[[2]string]bool{{"+Inf,1", "+Inf,1"}: false, {"+Inf,1", "+Inf,1.0"}: true} {
		exprs, err := Generate(q, two, &Facts{Layouts: map[string]string{"vllm:time_to_first_token_seconds_bucket": layouts[0],
			"dynamo_frontend_time_to_first_token_seconds_bucket": layouts[1]}}, 20*time.Second)
		if err != nil || len(exprs) != 1 {
			t.Fatalf("%v %+v", err, exprs)
		}
		if got := strings.Contains(exprs[0].PromQL, "count by"); got != clean {
			t.Errorf("layouts %q: clean-up %v, want %v: %s", layouts, got, clean, exprs[0].PromQL)
		}
	}
}

// TestSeveralQuantilesReadBucketsOnce: several quantiles per model or fleet are one expression of summed bucket
// rates, the quantiles taken from its answer (BucketQuantiles); per endpoint or engine, where the groups' buckets
// outnumber the quantiles, the server takes each quantile.
func TestSeveralQuantilesReadBucketsOnce(t *testing.T) {
	for _, c := range []struct {
		group query.Group
		exprs int
	}{{query.GroupModel, 1}, {query.GroupFleet, 1}, {query.GroupEndpoint, 3}, {query.GroupEngine, 3}} {
		q := query.Query{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.95, 0.99}, GroupBy: c.group}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		exprs, err := Generate(q, mixedFleet, nil, 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(exprs) != c.exprs {
			t.Fatalf("%s: %d expressions, want %d", c.group, len(exprs), c.exprs)
		}
		if c.exprs == 1 && (len(exprs[0].Quantiles) != 3 || strings.Contains(exprs[0].PromQL, "histogram_quantile") || !strings.Contains(exprs[0].PromQL, "le)")) {
			t.Errorf("%s: %+v, want the summed bucket rates by le with three quantiles to take", c.group, exprs[0])
		}
		if c.exprs == 3 && (len(exprs[0].Quantiles) != 0 || !strings.HasPrefix(exprs[0].PromQL, "histogram_quantile(0.5, ")) {
			t.Errorf("%s: %s, want histogram_quantile per quantile", c.group, exprs[0].PromQL)
		}
	}
}

// TestCapacityFromItsParts: the capacity computed from the pool's and the mean's answers is PromQL's
// `pool / (mean > 0) * f`: series matched on all their labels, a step only where both answer and the mean is above
// zero, the pool's labels kept; series of one side alone answer nothing.
func TestCapacityFromItsParts(t *testing.T) {
	pts := func(vs ...float64) []model.SamplePair {
		var out []model.SamplePair
		for i, v := range vs {
			if !math.IsNaN(v) {
				out = append(out, model.SamplePair{Timestamp: model.Time(1000 * (i + 1)), Value: model.SampleValue(v)})
			}
		}
		return out
	}
	nan := math.NaN()
	a, b, c := model.Metric{"model_name": "a"}, model.Metric{"model_name": "b"}, model.Metric{"model_name": "c"}
	pool := model.Matrix{{Metric: a, Values: pts(100, 100, 100, 100)}, {Metric: b, Values: pts(50, nan, 50)}, {Metric: c, Values: pts(1)}}
	mean := model.Matrix{{Metric: b, Values: pts(10, 10, 0)}, {Metric: a, Values: pts(nan, 4, -1, 8)}}
	got := divide(pool, mean, 0.7)
	want := model.Matrix{
		{Metric: a, Values: []model.SamplePair{{Timestamp: 2000, Value: 100.0 / 4 * 0.7}, {Timestamp: 4000, Value: 100.0 / 8 * 0.7}}},
		{Metric: b, Values: []model.SamplePair{{Timestamp: 1000, Value: 50.0 / 10 * 0.7}}},
	}
	if !sameMatrix(got, want) {
		t.Errorf("divide = %v, want %v", got, want)
	}
}

package query

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.jsonc golden frames from the current output (only those)")

// goldenQueries is one query per type (and the measures dashboards use), answered over two minutes of the
// synthetic fleet; the frames are checked field by field against testdata/<name>.golden.jsonc.
var goldenQueries = map[string]Query{
	"kv_cache_usage":          {QueryType: TypeKVCacheUsage},
	"kv_cache_blocks":         {QueryType: TypeKVCacheUsage, Measure: "blocks"},
	"spec_decode":             {QueryType: TypeSpecDecode, Endpoint: "v1|v0"},
	"spec_decode_positions":   {QueryType: TypeSpecDecode, Measure: "per_position"},
	"dp_balance":              {QueryType: TypeDPBalance, Measure: "running_waiting", GroupBy: GroupEndpoint},
	"latency":                 {QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.95}, LegendFormat: "{{endpoint}} {{engine}} p{{quantile}}"},
	"latency_ascend_timer":    {QueryType: TypeLatency, Metric: "timer:vllm_profiling_server:create_chat_completion:duration", Quantiles: []float64{0.99}},
	"throughput":              {QueryType: TypeThroughput, GroupBy: GroupModel},
	"throughput_requests":     {QueryType: TypeThroughput, Measure: "requests", Endpoint: "v1", Engine: "0"},
	"queue":                   {QueryType: TypeQueue},
	"cache":                   {QueryType: TypeCache},
	"capacity":                {QueryType: TypeCapacity},
	"raw_gauge":               {QueryType: TypeRaw, Metric: "vllm:num_requests_waiting", Labels: map[string]string{"engine": "1"}},
	"raw_histogram_quantiles": {QueryType: TypeRaw, Metric: "vllm:time_to_first_token_seconds", Histogram: "quantiles", Quantiles: []float64{0.9}, Endpoint: "v1"},
}

func TestGoldenFrames(t *testing.T) {
	start := int64(1_700_000_000_000)
	fl := newFleet(start)
	eng := &Engine{Source: fl.src, ScrapeInterval: 5 * time.Second}
	from := time.UnixMilli(start + 30*60*1000)
	req := Request{From: from, To: from.Add(2 * time.Minute), Interval: 30 * time.Second}
	for name, q := range goldenQueries {
		t.Run(name, func(t *testing.T) {
			res, err := eng.Eval(context.Background(), q, req)
			if err != nil {
				t.Fatal(err)
			}
			experimental.CheckGoldenJSONResponse(t, "testdata", name, &backend.DataResponse{Frames: Frames(q, res)}, *updateGolden)
		})
	}
}

// TestGoldenFixtureFrames answers gauge queries from the real captures (each served twice, 5 s apart, so
// counters have a zero rate and gauges a value), pinning how every vendor's names map to InferScope's frames.
func TestGoldenFixtureFrames(t *testing.T) {
	fixtures := map[string]string{
		"dynamo_worker": "dynamo_vllm_worker_8081_v1_single_engine.txt",
		"v0_v1_merged":  "datadog_fixture_v0_plus_v1_merged.txt",
		"v1_8engines":   "synthetic_v1_8engines_full.txt",
	}
	const t0 = 1_700_000_000_000
	for name, file := range fixtures {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile("../../testdata/fixtures/" + file)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := exposition.Parse(body, exposition.ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			src := &memSource{}
			for _, f := range sc.Families {
				for _, s := range f.Samples {
					src.series = ensureMap(src.series)
					src.series[name] = append(src.series[name], Series{Name: s.Name, Labels: append(exposition.Labels(nil), s.Labels...),
						Points: []derive.Point{{T: t0, V: s.Value}, {T: t0 + 5000, V: s.Value}}})
				}
			}
			eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
			req := Request{From: time.UnixMilli(t0 + 5000), To: time.UnixMilli(t0 + 5000), Interval: 5 * time.Second}
			for _, q := range []struct {
				id string
				q  Query
			}{
				{"kv", Query{QueryType: TypeKVCacheUsage}},
				{"queue", Query{QueryType: TypeQueue, Measure: "running"}},
				{"blocks", Query{QueryType: TypeKVCacheUsage, Measure: "blocks"}},
			} {
				res, err := eng.Eval(context.Background(), q.q, req)
				if err != nil {
					t.Fatal(err)
				}
				experimental.CheckGoldenJSONResponse(t, "testdata", "fixture_"+name+"_"+q.id, &backend.DataResponse{Frames: Frames(q.q, res)}, *updateGolden)
			}
		})
	}
}

func ensureMap(m map[string][]Series) map[string][]Series {
	if m == nil {
		return map[string][]Series{}
	}
	return m
}

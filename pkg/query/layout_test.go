package query

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// TestMixedBucketLayoutsUseCommonBuckets sums a V0 TTFT histogram (buckets up to 1 s, then +Inf) with a V1 one
// that also has a 20 s bucket, as a fleet or model grouping does. Their bucket-wise sum is not monotonic (at
// 20 s only V1 counts), which Prometheus repairs upwards and VictoriaMetrics downwards (issue #12: p99 = 2560 s);
// the quantile must come from the buckets both have, in direct and (promapi's generated filter) Prometheus mode.
func TestMixedBucketLayoutsUseCommonBuckets(t *testing.T) {
	const end = int64(1_700_000_040_000) // a whole minute, so the one step lands on it
	src := &memSource{series: map[string][]Series{}}
	// Cumulative counts 45 s apart, both inside the one-minute window (and off its start, where engines differ).
	add := func(ep string, les []string, counts []float64) {
		for i, le := range les {
			src.series[ep] = append(src.series[ep], Series{Name: "vllm:time_to_first_token_seconds_bucket",
				Labels: exposition.Labels{{Name: "le", Value: le}, {Name: "model_name", Value: "m"}},
				Points: []derive.Point{{T: end - 50_000, V: 0}, {T: end - 5_000, V: counts[i]}}})
		}
	}
	add("v0", []string{"0.1", "0.5", "1", "+Inf"}, []float64{10, 50, 90, 100})
	add("v1", []string{"0.1", "0.5", "1", "20", "+Inf"}, []float64{20, 60, 70, 95, 100})
	eng := &Engine{Source: src, ScrapeInterval: 60 * time.Second}
	at := time.UnixMilli(end)
	q := Query{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.99}, GroupBy: GroupFleet, Window: "1m"}
	res, err := eng.Eval(context.Background(), q, Request{From: at, To: at, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || len(res.Outputs[0].Points) != 1 {
		t.Fatalf("outputs: %+v", res.Outputs)
	}
	// The common buckets summed: 0.1→30, 0.5→110, 1→160, +Inf→200 (per minute; rates scale alike). p99 = rank 198
	// lies in the +Inf bucket, so histogram_quantile returns the highest finite bound, 1 s.
	want := derive.HistogramQuantile(0.99, []derive.Bucket{{UpperBound: 0.1, Count: 30}, {UpperBound: 0.5, Count: 110},
		{UpperBound: 1, Count: 160}, {UpperBound: math.Inf(1), Count: 200}})
	if got := res.Outputs[0].Points[0].V; got != want {
		t.Errorf("p99 over mixed layouts = %v, want %v from the common buckets", got, want)
	}
}

package query

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

func TestApplyDistribution(t *testing.T) {
	res := &Result{Outputs: []Output{
		rankSeries("kv", "a", "", 0.05, 0.5, math.NaN()),
		rankSeries("kv", "b", "", 0.1, 0.95, 0.2),
		rankSeries("kv", "c", "", 0.3, 1.2, math.Inf(1)),
		rankSeries("ttft", "a", "0.95", 2),
	}}
	ApplyDistribution(Query{Buckets: []float64{0.1, 0.5, 1}}, res)
	// Per bucket (le): counts at t = 0, 1000, 2000 s; a value equal to a bound is in that bound's bucket, NaN and ±Inf
	// are left out, and a step with no finite value is absent.
	want := []string{
		"kv le=0.1 [2 0 0]", "kv le=0.5 [1 1 1]", "kv le=1 [0 1 0]", "kv le=+Inf [0 1 0]",
		"ttft le=0.1 [0]", "ttft le=0.5 [0]", "ttft le=1 [0]", "ttft le=+Inf [1]",
	}
	var got []string
	for _, o := range res.Outputs {
		s := o.Measure + " le=" + o.Labels["le"] + " ["
		for i, p := range o.Points {
			if i > 0 {
				s += " "
			}
			s += strings.TrimSuffix(strings.TrimSuffix(formatQuantile(p.V), ".0"), ".")
		}
		got = append(got, s+"]")
		if o.Measure == "ttft" && o.Labels["quantile"] != "0.95" {
			t.Errorf("%s lost its quantile label: %v", o.Measure, o.Labels)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("distribution:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Outputs[0].Points) != 3 || res.Outputs[0].Points[2].T != 2000 {
		t.Errorf("steps %v", res.Outputs[0].Points)
	}

	frames := Frames(Query{Buckets: []float64{0.1, 0.5, 1}}, res)
	if len(frames) != 2 {
		t.Fatalf("%d frames, want one heatmap per measure and quantile", len(frames))
	}
	for _, f := range frames {
		if f.Meta == nil || f.Meta.Type != HeatmapRowsType || len(f.Fields) != 5 || f.Fields[4].Name != InfBound {
			t.Errorf("frame %s: meta %+v, %d fields, want heatmap-rows with time and four buckets", f.Name, f.Meta, len(f.Fields))
		}
	}
}

func TestBucketsAreValidated(t *testing.T) {
	many := make([]float64, MaxBuckets+1)
	for i := range many {
		many[i] = float64(i)
	}
	for _, q := range []Query{
		{QueryType: TypeKVCacheUsage, Buckets: []float64{0.5, 0.5}},
		{QueryType: TypeKVCacheUsage, Buckets: []float64{0.5, 0.1}},
		{QueryType: TypeKVCacheUsage, Buckets: []float64{math.NaN()}},
		{QueryType: TypeKVCacheUsage, Buckets: []float64{math.Inf(1)}},
		{QueryType: TypeKVCacheUsage, Buckets: many},
		{QueryType: TypeKVCacheUsage, Buckets: []float64{0.5}, Limit: 3},
	} {
		if err := q.Validate(); err == nil {
			t.Errorf("%+v: accepted", q)
		}
	}
	q := Query{QueryType: TypeKVCacheUsage, Buckets: []float64{0.5, 0.9}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestOutputKeepsOne: output picks one of a measure's outputs in what the engines compute and in composed answers,
// and an output the measure lacks is refused with the ones it has.
func TestOutputKeepsOne(t *testing.T) {
	q := Query{QueryType: TypeThroughput, Measure: "errors", Output: "failed_request_ratio"}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	outs := q.Outputs()
	if len(outs) != 1 || outs[0].Name != "failed_request_ratio" {
		t.Fatalf("outputs %v, want failed_request_ratio alone", outs)
	}
	res := &Result{Outputs: []Output{{Measure: "failed_requests_per_second"}, {Measure: "failed_request_ratio"}}}
	ApplyOutput(q, res)
	if len(res.Outputs) != 1 || res.Outputs[0].Measure != "failed_request_ratio" {
		t.Errorf("composed answer kept %v", res.Outputs)
	}
	bad := Query{QueryType: TypeThroughput, Measure: "errors", Output: "requests_per_second"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "failed_request_ratio") {
		t.Errorf("an output of another measure: %v", err)
	}
	none := Query{QueryType: TypeRaw, Metric: "up", Output: "x"}
	if err := none.Validate(); err == nil {
		t.Error("an output on a query without outputs was accepted")
	}
}

// TestApplyDistributionMatchesCountingByTime: series whose steps differ (missing, extra, out of order, repeated),
// with NaN and infinite values, are counted as a count kept per step time would count them.
func TestApplyDistributionMatchesCountingByTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	bounds := []float64{0.1, 0.5, 1}
	for round := range 200 {
		var outs []Output
		want := map[string]map[int64][]float64{} // quantile → time → bucket counts
		for s := range 1 + rng.IntN(6) {
			quantile := []string{"", "0.5"}[rng.IntN(2)]
			var pts []derive.Point
			for step := range 12 {
				if rng.IntN(4) == 0 {
					continue
				}
				v := []float64{rng.Float64() * 1.5, math.NaN(), math.Inf(1), 0.5}[rng.IntN(4)]
				pts = append(pts, derive.Point{T: int64(step) * 1000, V: v})
			}
			if len(pts) > 2 && round%5 == 0 {
				pts[0], pts[len(pts)-1] = pts[len(pts)-1], pts[0]
			}
			outs = append(outs, Output{Measure: "m", Labels: map[string]string{"endpoint": fmt.Sprint(s), "quantile": quantile}, Points: pts})
			if want[quantile] == nil {
				want[quantile] = map[int64][]float64{}
			}
			for _, p := range pts {
				if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
					continue
				}
				c := want[quantile][p.T]
				if c == nil {
					c = make([]float64, len(bounds)+1)
					want[quantile][p.T] = c
				}
				i, _ := slices.BinarySearch(bounds, p.V)
				c[i]++
			}
		}
		res := &Result{Outputs: outs}
		ApplyDistribution(Query{Buckets: bounds}, res)
		got := map[string]map[int64][]float64{}
		for _, o := range res.Outputs {
			b := slices.Index([]string{"0.1", "0.5", "1", InfBound}, o.Labels["le"])
			q := o.Labels["quantile"]
			if got[q] == nil && len(o.Points) > 0 {
				got[q] = map[int64][]float64{}
			}
			for k, p := range o.Points {
				if k > 0 && p.T <= o.Points[k-1].T {
					t.Fatalf("round %d: steps out of order: %v", round, o.Points)
				}
				if got[q][p.T] == nil {
					got[q][p.T] = make([]float64, len(bounds)+1)
				}
				got[q][p.T][b] = p.V
			}
		}
		for q, byT := range want {
			if len(byT) == 0 {
				delete(want, q)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: counts\n%v\nwant\n%v", round, got, want)
		}
	}
}

package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

func bucketSeries(m, model, le string, vs ...float64) Output {
	o := Output{Measure: m, Unit: "reqps", Labels: map[string]string{"le": le}}
	if model != "" {
		o.Labels["model_name"] = model
	}
	for i, v := range vs {
		o.Points = append(o.Points, derive.Point{T: int64(i) * 1000, V: v})
	}
	return o
}

// TestApplyBucketRates: cumulative bucket rates, out of order and with one bound written both as 1 and 1.0 by two
// exporters, become each bucket's own rate in increasing le, per model; a dip of the cumulative rates (a counter
// reset seen at different steps) never makes a bucket negative; a bucket missing a step its neighbours have (a
// series that appeared later) answers 0 there; and the answer is a heatmap's rows, one time field per model.
func TestApplyBucketRates(t *testing.T) {
	q := Query{QueryType: TypeThroughput, Measure: measure.ThroughputLengthBuckets.Name, Output: "prompt_length_requests_per_second"}
	if !q.ReadsBuckets() {
		t.Fatal("the length heatmap query does not read bucket rates")
	}
	const m = "prompt_length_requests_per_second"
	res := &Result{Outputs: []Output{
		bucketSeries(m, "a", "+Inf", 10, 12),
		bucketSeries(m, "a", "1.0", 1, 2),
		bucketSeries(m, "a", "10", 6, 5),
		bucketSeries(m, "a", "1", 1, 1),
		bucketSeries(m, "b", "10", 3, 3),
		bucketSeries(m, "b", "+Inf", 4, 4),
		bucketSeries(m, "c", "1", 5, 1),
		bucketSeries(m, "c", "2", 4),
		bucketSeries(m, "c", "4", 6, 3),
	}}
	ApplyBucketRates(q, res)
	var got []string
	for _, o := range res.Outputs {
		got = append(got, fmt.Sprintf("%s le=%s %v", o.Labels["model_name"], o.Labels["le"], o.Points))
	}
	want := []string{
		"a le=1.0 [{0 2} {1000 3}]", "a le=10 [{0 4} {1000 2}]", "a le=+Inf [{0 4} {1000 7}]",
		"b le=10 [{0 3} {1000 3}]", "b le=+Inf [{0 1} {1000 1}]",
		"c le=1 [{0 5} {1000 1}]", "c le=2 [{0 0} {1000 0}]", "c le=4 [{0 1} {1000 2}]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bucket rates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	frames := Frames(q, res)
	if len(frames) != 3 {
		t.Fatalf("want one heatmap frame per model, have %d", len(frames))
	}
	for _, f := range frames {
		if f.Meta == nil || f.Meta.Type != HeatmapRowsType || f.Fields[0].Type() != data.FieldTypeTime {
			t.Errorf("frame %s is not heatmap rows: %+v", f.Name, f.Meta)
		}
	}
	if names := []string{frames[0].Fields[1].Name, frames[0].Fields[2].Name, frames[0].Fields[3].Name}; strings.Join(names, " ") != "1.0 10 +Inf" {
		t.Errorf("rows of model a: %v", names)
	}
	// Only bucket-rate queries are taken apart.
	other := &Result{Outputs: []Output{bucketSeries("x", "a", "1", 5), bucketSeries("x", "a", "2", 7)}}
	ApplyBucketRates(Query{QueryType: TypeThroughput, Measure: measure.ThroughputTokensPerRequest.Name}, other)
	if other.Outputs[1].Points[0].V != 7 {
		t.Errorf("a query without bucket rates was changed: %v", other.Outputs)
	}
}

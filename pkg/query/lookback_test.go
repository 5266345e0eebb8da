package query

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// TestLookbackBoundaryAgainstEngines: an instant selector's lookback is left-open in Prometheus 3, (t−5m, t], as
// its range selectors are (#12 item 8); 2.42 kept a sample exactly 5 minutes old. A gauge sampled once, at T, is
// therefore visible at T+4m in every engine, and at T+5m in 2.42 only. Direct mode must answer as Prometheus 3.
func TestLookbackBoundaryAgainstEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	at := time.Now().Add(-2 * time.Hour).Truncate(time.Hour).UnixMilli()
	const name = "vllm:num_requests_waiting"
	src := &memSource{series: map[string][]Series{"ep": {{Name: name, Labels: exposition.Labels{{Name: "engine", Value: "0"}},
		Points: []derive.Point{{T: at, V: 7}}}}}}
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	from, to := time.UnixMilli(at+3*60000), time.UnixMilli(at+6*60000)
	res, err := eng.Eval(context.Background(), Query{QueryType: TypeRaw, Metric: name}, Request{From: from, To: to, Interval: time.Minute, MaxDataPoints: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Step != time.Minute {
		t.Fatalf("step %s, want 1m", res.Step)
	}
	direct := map[int64]float64{}
	for _, o := range res.Outputs {
		for _, p := range o.Points {
			direct[p.T-at] = p.V
		}
	}
	// Steps at T+3m, 4m, 5m, 6m. Prometheus 3 and direct mode: a value at 3m and 4m only.
	want := map[int64]float64{3 * 60000: 7, 4 * 60000: 7}
	if fmt.Sprint(direct) != fmt.Sprint(want) {
		t.Errorf("direct mode: %v (ms after the sample → value), want %v", direct, want)
	}
	om := fmt.Sprintf("# TYPE %s gauge\n%s{endpoint=\"ep\",engine=\"0\"} 7 %d\n# EOF\n", name, name, at/1000)
	for _, e := range promtest.EnginesOf(t, promtest.Prometheus2, promtest.Prometheus3) {
		t.Run(e.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: e, OpenMetrics: om})
			m, err := srv.QueryRange(context.Background(), name, from, to, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]float64{}
			for _, s := range m {
				for _, p := range s.Values {
					got[int64(p.Timestamp)-at] = float64(p.Value)
				}
			}
			w := want
			if e == promtest.Prometheus2 {
				// 2.42 keeps the sample exactly 5 minutes old (lookback [t−5m, t]).
				w = map[int64]float64{3 * 60000: 7, 4 * 60000: 7, 5 * 60000: 7}
			}
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("%s: %v, the test states %v", e, got, w)
			}
		})
	}
}

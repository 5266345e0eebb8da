package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestSLOAttainmentOnMixedLayoutsInBothModes: SLO attainment and goodput over selections mixing bucket layouts (V1's
// TTFT up to 2560 s, V0's up to 10 s; the deprecated and renamed ITL; Dynamo's frontend), at thresholds that are a
// common bound, between common bounds, between bounds only one layout has, and past every bound, at every grouping,
// answer the same series and values in both modes: a group lacking a bound the threshold needs answers nothing in
// either (README "SLO attainment").
func TestSLOAttainmentOnMixedLayoutsInBothModes(t *testing.T) {
	t.Parallel() // see doc.go
	fleet := map[string][]string{
		"v1":       modeFleet["v1"],
		"v0":       modeFleet["v0"],
		"v1-0.10":  modeFleet["v1-0.10"],
		"frontend": modeFleet["frontend"],
	}
	onEngines(t, fleet, 10*time.Minute, true, nil, func(t *testing.T, run *simRun, prom *promtest.Server) {
		modes := newBothModes(run, prom)
		answered, empty := 0, 0
		for _, metric := range []string{"ttft", "itl"} {
			for _, threshold := range []float64{0.5, 0.3, 15, 3000} {
				for _, endpoint := range []string{"", "v1|v0", "v1|v1-0.10", "v1|frontend"} {
					for _, group := range []query.Group{query.GroupEngine, query.GroupEndpoint, query.GroupModel, query.GroupFleet} {
						for _, m := range []string{"slo_attainment", "goodput"} {
							th := threshold
							q := query.Query{QueryType: query.TypeLatency, Measure: m, Metric: metric, Threshold: &th, GroupBy: group, Endpoint: endpoint}
							t.Run(fmt.Sprintf("%s/%s/%g/%s/%s", m, metric, th, endpoint, group), func(t *testing.T) {
								direct, ans := modes.eval(t, q)
								compareOutputs(t, direct.Outputs, ans.Result.Outputs, 1e-6, nil)
								if len(direct.Outputs) == 0 {
									empty++
								} else {
									answered++
								}
								if t.Failed() {
									t.Logf("PromQL:\n%s", ans.PromQL())
								}
							})
						}
					}
				}
			}
		}
		if answered == 0 || empty == 0 {
			t.Errorf("%d queries answered, %d answered nothing: the selections do not cover both cases", answered, empty)
		}
	})
}

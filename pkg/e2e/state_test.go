package e2e

import (
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// stateFleet has an instance awake, one asleep (sleep level 2) and one whose second engine is unhealthy under fault
// tolerance, beside a V0 server, which has no engine state.
var stateFleet = map[string][]string{
	"awake":   {"-flavor=vllm-v1", "-qps=4", "-seed=71"},
	"asleep":  {"-flavor=vllm-v1", "-sleep-level=2", "-qps=4", "-seed=72"},
	"ft":      {"-flavor=vllm-v1", "-engines=2", "-fault-tolerance", "-unhealthy-engines=1", "-qps=4", "-seed=73"},
	"vllm-v0": {"-flavor=vllm-v0", "-qps=4", "-seed=74"},
}

// TestEngineStateInBothModes: each engine's state reads the same in direct mode and on a real Prometheus holding the
// same samples — online, asleep, unhealthy — and grouped per endpoint an endpoint shows its worst engine.
func TestEngineStateInBothModes(t *testing.T) {
	onEngines(t, stateFleet, 5*time.Minute, true, nil, func(t *testing.T, run *simRun, prom *promtest.Server) {
		modes := newBothModes(run, prom)
		for _, c := range []struct {
			group query.Group
			want  map[string]float64 // endpoint/engine -> every step's state
		}{
			{query.GroupEngine, map[string]float64{"awake/0": measure.StateOnline, "asleep/0": measure.StateAsleep,
				"ft/0": measure.StateOnline, "ft/1": measure.StateUnhealthy}},
			{query.GroupEndpoint, map[string]float64{"awake/": measure.StateOnline, "asleep/": measure.StateAsleep, "ft/": measure.StateUnhealthy}},
		} {
			t.Run(string(c.group), func(t *testing.T) {
				q := query.Query{QueryType: query.TypeEngineState, GroupBy: c.group, Model: "meta-llama/.*"}
				direct, ans := modes.eval(t, q)
				if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 0, nil); n == 0 {
					t.Fatal("nothing compared")
				}
				got := map[string]float64{}
				for _, o := range direct.Outputs {
					k := o.Labels["endpoint"] + "/" + o.Labels["engine"]
					for _, p := range o.Points {
						if prev, seen := got[k]; seen && prev != p.V {
							t.Errorf("%s changes state from %v to %v", k, prev, p.V)
						}
						got[k] = p.V
					}
				}
				if len(got) != len(c.want) {
					t.Errorf("states %v, want %v", got, c.want)
				}
				for k, v := range c.want {
					if got[k] != v {
						t.Errorf("%s: state %v, want %v", k, got[k], v)
					}
				}
			})
		}
	})
}

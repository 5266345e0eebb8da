package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/lora"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestLoRAInBothModes: LoRA adapters read from vllm:lora_requests_info's label lists agree between direct mode and a
// real Prometheus holding the same samples, and say what the simulator did: at most max_lora (2) of four adapters
// running, the others waiting, on the instance serving them and nowhere else.
func TestLoRAInBothModes(t *testing.T) {
	fleet := map[string][]string{
		"lora":  {"-flavor=vllm-v1", "-lora-adapters=4", "-max-lora=2", "-qps=20", "-seed=91"},
		"plain": {"-flavor=vllm-v1", "-qps=4", "-seed=92"},
	}
	onEngines(t, fleet, 5*time.Minute, true, nil, func(t *testing.T, run *simRun, prom *promtest.Server) {
		modes := newBothModes(run, prom)
		direct, prometheus := modes.direct, modes.prometheus
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, q := range []query.Query{
			{QueryType: query.TypeLoRA},
			{QueryType: query.TypeLoRA, Measure: "by_adapter"},
			{QueryType: query.TypeLoRA, GroupBy: query.GroupFleet},
		} {
			t.Run(q.Measure+"/"+string(q.GroupBy), func(t *testing.T) {
				d, err := lora.Answer(ctx, direct, q, modes.req)
				if err != nil {
					t.Fatal(err)
				}
				p, err := lora.Answer(ctx, prometheus, q, modes.req)
				if err != nil {
					t.Fatal(err)
				}
				if n := compareOutputs(t, d.Outputs, p.Outputs, 0, nil); n == 0 {
					t.Fatal("nothing compared")
				}
				waiting := false
				for _, o := range d.Outputs {
					if ep := o.Labels["endpoint"]; ep != "" && ep != "lora" {
						t.Errorf("%s has LoRA series: %v", ep, o.Labels)
					}
					for _, pt := range o.Points {
						switch o.Measure {
						case "lora_running_adapters":
							if pt.V > 2 {
								t.Errorf("%v adapters running with max_lora 2", pt.V)
							}
						case "lora_max_adapters":
							if pt.V != 2 {
								t.Errorf("max_lora %v", pt.V)
							}
						case "lora_waiting_adapters":
							waiting = waiting || pt.V > 0
						case "lora_adapter_state":
							waiting = waiting || pt.V == 1
						}
					}
				}
				if !waiting {
					t.Error("no adapter ever waited behind max_lora")
				}
			})
		}
	})
}

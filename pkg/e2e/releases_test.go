package e2e

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/role"
)

// releaseFleet is instances that print exactly what a vLLM release prints (-vllm-version): offloading on 0.16 and
// 0.20 (only the per-direction kv_offload_total_* names) and on 0.24 and 0.25 (those and the flat names; 0.24 with
// 0.20's seed, so the same transfers), a 0.20 prefill/decode pair (NIXL histograms on both sides, no pending-send
// gauge), and two engines beside the production-stack router in front of them.
var releaseFleet = map[string][]string{
	"offload-016": {"-vllm-version=0.16", "-kv-offload-gb=20", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=91"},
	"offload-020": {"-vllm-version=0.20", "-kv-offload-gb=20", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=92"},
	"offload-024": {"-vllm-version=0.24", "-kv-offload-gb=20", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=92"},
	"offload-025": {"-vllm-version=0.25", "-kv-offload-gb=20", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=96"},
	"prefill-020": {"-vllm-version=0.20", "-kv-role=prefill", "-kv-transfer-ms=1500", "-qps=8", "-seed=93"},
	"decode-020":  {"-vllm-version=0.20", "-kv-role=decode", "-kv-transfer-ms=1500", "-qps=8", "-seed=94"},
	"engines":     {"-vllm-version=0.20", "-engines=2", "-qps=20", "-seed=95"},
	"router":      {"-router", "-engines=2", "-qps=20", "-seed=95"},
}

// TestReleasesInBothModes: on the releases' own names, in direct mode and through the generated PromQL on a real
// Prometheus holding the same samples, offload bandwidth and copy speed have values on 0.16, 0.20, 0.24 and 0.25 and
// agree, 0.24's (flat and per-direction names both) are 0.20's (per-direction only) for the same transfers, so
// nothing counts twice; the 0.20 prefill and decode instances get their roles, a measure with nothing counted says so
// rather than that its metrics are missing, one whose metrics no release has says which vLLM it needs, and the fleet
// behind the router counts its engines' running and waiting requests once.
func TestReleasesInBothModes(t *testing.T) {
	onEngines(t, releaseFleet, 10*time.Minute, true, nil, func(t *testing.T, run *simRun, prom *promtest.Server) {
		modes := newBothModes(run, prom)
		for _, m := range []string{"bandwidth", "copy_speed"} {
			direct, ans := modes.eval(t, query.Query{QueryType: query.TypeKVOffload, Measure: m, Endpoint: "offload-016|offload-020|offload-024|offload-025", GroupBy: query.GroupEndpoint})
			eps := map[string]bool{}
			for _, o := range direct.Outputs {
				eps[o.Labels["endpoint"]] = true
			}
			if len(eps) != 4 || len(direct.Outputs) != 8 {
				t.Errorf("kv_offload/%s: %d series from %v, want load and store on every release (notices %q)", m, len(direct.Outputs), eps, direct.Notices)
			}
			if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 1e-9, nil); n == 0 {
				t.Errorf("kv_offload/%s: nothing compared", m)
			}
			var on020, on024 []query.Output
			for _, o := range direct.Outputs {
				switch o.Labels["endpoint"] {
				case "offload-020":
					on020 = append(on020, o)
				case "offload-024":
					o.Labels = maps.Clone(o.Labels)
					o.Labels["endpoint"] = "offload-020"
					on024 = append(on024, o)
				}
			}
			if n := compareOutputs(t, on020, on024, 1e-9, nil); n == 0 {
				t.Errorf("kv_offload/%s: 0.24 and 0.20 not compared", m)
			}
		}
		// Empty is not absent: the prefill side holds NIXL histograms that never count; the offload measures whose
		// names no release to 0.25.1 has say which vLLM they need, on 0.20 and on 0.25 alike.
		for _, c := range []struct {
			q      query.Query
			notice string
		}{
			{query.Query{QueryType: query.TypeKVTransfer, Measure: "latency", Endpoint: "prefill-020"}, "no transfers in range"},
			{query.Query{QueryType: query.TypeKVOffload, Measure: "failures", Endpoint: "offload-020"}, "kv_offload/failures needs vLLM newer than 0.25.1"},
			{query.Query{QueryType: query.TypeKVOffload, Measure: "lookup_delay", Endpoint: "offload-025"}, "kv_offload/lookup_delay needs vLLM newer than 0.25.1"},
		} {
			direct, ans := modes.eval(t, c.q)
			for mode, res := range map[string]*query.Result{"direct": direct, "prometheus": ans.Result} {
				if len(res.Outputs) != 0 || len(res.Notices) != 1 || !strings.HasPrefix(res.Notices[0], c.notice) {
					t.Errorf("%s mode %s/%s: %d series, notices %q, want none and %q", mode, c.q.QueryType, c.q.Measure, len(res.Outputs), res.Notices, c.notice)
				}
			}
		}
		// CPU cache usage exists from 0.24.0: values on 0.24, and on 0.20 direct mode says from which release. (Prometheus
		// mode's discovery is server-wide: the server holds the gauge from the 0.24 and 0.25 instances, so it cannot
		// tell 0.20 lacks it.)
		direct, ans := modes.eval(t, query.Query{QueryType: query.TypeKVOffload, Measure: "cpu_usage", Endpoint: "offload-024"})
		if len(direct.Outputs) != 1 {
			t.Errorf("kv_offload/cpu_usage on 0.24: %d series, notices %q", len(direct.Outputs), direct.Notices)
		}
		if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 1e-9, nil); n == 0 {
			t.Errorf("kv_offload/cpu_usage on 0.24: nothing compared")
		}
		direct, _ = modes.eval(t, query.Query{QueryType: query.TypeKVOffload, Measure: "cpu_usage", Endpoint: "offload-020"})
		if want := "kv_offload/cpu_usage needs vLLM 0.24.0 or newer with KV offloading: no selected endpoint exposes"; len(direct.Outputs) != 0 ||
			len(direct.Notices) != 1 || !strings.HasPrefix(direct.Notices[0], want) {
			t.Errorf("kv_offload/cpu_usage on 0.20: %d series, notices %q, want none and %q", len(direct.Outputs), direct.Notices, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		want := map[string]string{"prefill-020": role.Prefill, "decode-020": role.Decode}
		for name, eval := range map[string]role.Eval{"direct": modes.direct, "prometheus": modes.prometheus} {
			got, err := role.Resolve(ctx, eval, "prefill-020|decode-020", modes.req)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s mode: roles %v, want %v", name, got, want)
			}
		}
		for _, m := range []string{"running", "waiting"} {
			direct, ans := modes.eval(t, query.Query{QueryType: query.TypeQueue, Measure: m, Endpoint: "engines|router", GroupBy: query.GroupFleet})
			own, _ := modes.eval(t, query.Query{QueryType: query.TypeQueue, Measure: m, Endpoint: "engines", GroupBy: query.GroupFleet})
			if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 1e-9, nil); n == 0 {
				t.Errorf("queue/%s: nothing compared", m)
			}
			if n := compareOutputs(t, own.Outputs, ans.Result.Outputs, 1e-9, nil); n == 0 {
				t.Errorf("queue/%s: the fleet behind the router is not its engines' own", m)
			}
		}
	})
}

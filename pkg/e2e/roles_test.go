package e2e

import (
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/role"
)

// pdFleet is a disaggregated pair beside a unified instance and an LMCache one, which moves KV through a connector
// but not between prefill and decode instances.
var pdFleet = map[string][]string{
	"prefill": {"-flavor=vllm-v1", "-kv-role=prefill", "-kv-transfer-ms=1500", "-qps=8", "-seed=31"},
	"decode":  {"-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-ms=1500", "-kv-transfer-fail-rate=0.02", "-qps=8", "-seed=32"},
	"unified": {"-flavor=vllm-v1", "-qps=8", "-seed=33"},
	"lmcache": {"-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.4", "-qps=8", "-seed=34"},
}

// TestRolesInBothModes: each endpoint's role is read the same from direct mode's history and from a real
// Prometheus holding the same samples, and what the roles answer — groupBy role, a role filter, the role label
// and the P/D TTFT — agrees between the modes.
func TestRolesInBothModes(t *testing.T) {
	onEngines(t, pdFleet, 10*time.Minute, true, nil, func(t *testing.T, run *simRun, prom *promtest.Server) {
		modes := newBothModes(run, prom)
		direct, prometheus := modes.direct, modes.prometheus
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		want := map[string]string{"prefill": role.Prefill, "decode": role.Decode, "unified": role.Unified, "lmcache": role.Unified}
		for name, eval := range map[string]role.Eval{"direct": direct, "prometheus": prometheus} {
			got, err := role.Resolve(ctx, eval, "", modes.req)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s mode: roles %v, want %v", name, got, want)
			}
		}

		answer := func(t *testing.T, q query.Query) []query.Output {
			t.Helper()
			d, err := role.Answer(ctx, direct, q, modes.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := role.Answer(ctx, prometheus, q, modes.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := compareOutputs(t, d.Outputs, p.Outputs, 1e-6, nil); n == 0 {
				t.Errorf("nothing compared: %v", d.Notices)
			}
			return d.Outputs
		}
		t.Run("groupBy role", func(t *testing.T) {
			seen := map[string]bool{}
			for _, o := range answer(t, query.Query{QueryType: query.TypeThroughput, Measure: "prompt_tokens", GroupBy: query.GroupRole}) {
				seen[o.Labels[role.Label]] = true
				if len(o.Labels) != 1 {
					t.Errorf("a role's series has labels %v, want the role alone", o.Labels)
				}
			}
			if !maps.Equal(seen, map[string]bool{role.Prefill: true, role.Decode: true, role.Unified: true}) {
				t.Errorf("roles %v", seen)
			}
		})
		t.Run("role filter", func(t *testing.T) {
			for _, o := range answer(t, query.Query{QueryType: query.TypeLatency, Metric: "ttft", Role: role.Decode, GroupBy: query.GroupModel}) {
				if o.Labels[role.Label] != role.Decode {
					t.Errorf("series %v of a decode-only query", o.Labels)
				}
			}
		})
		t.Run("role label", func(t *testing.T) {
			for _, o := range answer(t, query.Query{QueryType: query.TypeQueue, Measure: "running", Role: ".*", GroupBy: query.GroupEndpoint}) {
				if ep := o.Labels["endpoint"]; o.Labels[role.Label] != want[ep] {
					t.Errorf("%s is labelled %q, its role is %s", ep, o.Labels[role.Label], want[ep])
				}
			}
		})
		t.Run("P/D TTFT", func(t *testing.T) {
			outs := answer(t, query.Query{QueryType: query.TypeKVTransfer, Measure: "pd_ttft", Quantiles: []float64{0.5, 0.95}})
			parts := map[string]map[string]map[int64]float64{} // measure -> quantile -> step -> value
			for _, o := range outs {
				if parts[o.Measure] == nil {
					parts[o.Measure] = map[string]map[int64]float64{}
				}
				pts := map[int64]float64{}
				for _, p := range o.Points {
					pts[p.T] = p.V
				}
				parts[o.Measure][o.Labels["quantile"]] = pts
			}
			checked := 0
			for q, total := range parts["pd_ttft_seconds"] {
				for ts, v := range total {
					pre, xfer, queue := parts["prefill_ttft_seconds"][q][ts], parts["kv_transfer_seconds"][q][ts], parts["decode_queue_seconds"][q][ts]
					if math.Abs(v-(pre+xfer+queue)) > 1e-9 || math.Abs(parts["decode_inflation_seconds"][q][ts]-(xfer+queue)) > 1e-9 {
						t.Fatalf("q%s at %d: total %v, inflation %v from prefill %v + transfer %v + queue %v", q, ts, v, parts["decode_inflation_seconds"][q][ts], pre, xfer, queue)
					}
					if xfer < 0.5 || pre <= 0 {
						t.Fatalf("q%s at %d: transfer %v s with 1.5 s transfers, prefill TTFT %v", q, ts, xfer, pre)
					}
					checked++
				}
			}
			if checked < 20 {
				t.Errorf("%d steps of P/D TTFT checked", checked)
			}
		})
	})
}

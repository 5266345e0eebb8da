// Package lora reads vllm:lora_requests_info, whose labels list the LoRA adapters running and waiting comma-joined,
// into numbers: adapters running and waiting per endpoint and each adapter's state. PromQL cannot split a label, so
// the data source reads the series as a raw query in either mode (Answer) and this package does the rest, the
// same for both.
package lora

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Eval answers one query in the data source's mode.
type Eval func(ctx context.Context, q query.Query, r query.Request) (*query.Result, error)

// State is what an endpoint's newest lora_requests_info series says at one step.
type State struct {
	Running, Waiting []string
	Max              float64
}

// Current reads the state from the labels of the series with the latest value (the time its set became current)
// among those present at a step: vLLM sets each new set to the current time and leaves the old ones exposed.
func Current(series []map[string]string, values []float64) (State, bool) {
	best := -1
	for i, v := range values {
		if best < 0 || v > values[best] {
			best = i
		}
	}
	if best < 0 {
		return State{}, false
	}
	l := series[best]
	max, _ := strconv.ParseFloat(l["max_lora"], 64)
	return State{Running: split(l["running_lora_adapters"]), Waiting: split(l["waiting_lora_adapters"]), Max: max}, true
}

func split(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Answer answers a lora query: the raw lora_requests_info series of the selected endpoints through eval, then each
// endpoint's state at each step (Current), as the query's outputs. Grouped by model or fleet, the counts are summed
// over endpoints and an adapter's state is its highest; the info names no model, so a model filter does not apply.
func Answer(ctx context.Context, eval Eval, q query.Query, r query.Request) (*query.Result, error) {
	if err := q.EnsureValid(); err != nil {
		return nil, err
	}
	raw := query.Query{QueryType: query.TypeRaw, Metric: vllm.LoRAInfo.Names[0], Endpoint: q.Endpoint, GroupBy: query.GroupEndpoint}
	res, err := eval(ctx, raw, r)
	if err != nil {
		return nil, err
	}
	// at[endpoint][step] are the series present at the step.
	type present struct {
		labels []map[string]string
		values []float64
	}
	at := map[string]map[int64]*present{}
	for _, o := range res.Outputs {
		ep := o.Labels["endpoint"]
		if at[ep] == nil {
			at[ep] = map[int64]*present{}
		}
		for _, p := range o.Points {
			x := at[ep][p.T]
			if x == nil {
				x = &present{}
				at[ep][p.T] = x
			}
			x.labels, x.values = append(x.labels, o.Labels), append(x.values, p.V)
		}
	}
	// series[output][endpoint, adapter][step] per endpoint first; grouped wider, folded below.
	type key struct{ endpoint, adapter string }
	series := map[string]map[key]map[int64]float64{}
	set := func(out string, k key, t int64, v float64) {
		if series[out] == nil {
			series[out] = map[key]map[int64]float64{}
		}
		if series[out][k] == nil {
			series[out][k] = map[int64]float64{}
		}
		series[out][k][t] = v
	}
	for _, o := range q.Outputs() {
		node, ok := o.Node.(*measure.LoRA)
		if !ok {
			continue
		}
		for ep, steps := range at {
			for t, x := range steps {
				st, ok := Current(x.labels, x.values)
				if !ok {
					continue
				}
				switch node.Part {
				case measure.LoRARunning:
					set(o.Name, key{endpoint: ep}, t, float64(len(st.Running)))
				case measure.LoRAWaiting:
					set(o.Name, key{endpoint: ep}, t, float64(len(st.Waiting)))
				case measure.LoRAMax:
					set(o.Name, key{endpoint: ep}, t, st.Max)
				case measure.LoRAState:
					for _, a := range st.Running {
						set(o.Name, key{ep, a}, t, 2)
					}
					for _, a := range st.Waiting {
						set(o.Name, key{ep, a}, t, 1)
					}
				}
			}
		}
	}
	wide := q.GroupBy == query.GroupModel || q.GroupBy == query.GroupFleet
	out := &query.Result{Step: res.Step, Window: res.Window, Notices: res.Notices}
	for _, o := range q.Outputs() {
		byKey := series[o.Name]
		if wide { // the endpoints fold into one series (per adapter): counts add up, a state is the highest
			folded := map[key]map[int64]float64{}
			for k, pts := range byKey {
				fk := key{adapter: k.adapter}
				if folded[fk] == nil {
					folded[fk] = map[int64]float64{}
				}
				for t, v := range pts {
					if prev, ok := folded[fk][t]; ok {
						v = foldWide(o.Node, prev, v)
					}
					folded[fk][t] = v
				}
			}
			byKey = folded
		}
		labelsOf := func(k key) map[string]string {
			l := map[string]string{}
			if k.endpoint != "" {
				l["endpoint"] = k.endpoint
			}
			if k.adapter != "" {
				l["adapter"] = k.adapter
			}
			return l
		}
		keys := slices.Collect(maps.Keys(byKey))
		sort.Slice(keys, func(i, j int) bool { return query.LabelKey(labelsOf(keys[i])) < query.LabelKey(labelsOf(keys[j])) })
		for _, k := range keys {
			s := query.Output{Measure: o.Name, Unit: o.Unit, Labels: labelsOf(k)}
			for _, t := range slices.Sorted(maps.Keys(byKey[k])) {
				s.Points = append(s.Points, derive.Point{T: t, V: byKey[k][t]})
			}
			out.Outputs = append(out.Outputs, s)
		}
	}
	return out, nil
}

// foldWide combines two endpoints' values of one output under a wide grouping: counts add up, a state is the
// highest.
func foldWide(n measure.Node, a, b float64) float64 {
	if l, ok := n.(*measure.LoRA); ok && l.Part == measure.LoRAState {
		return max(a, b)
	}
	return a + b
}

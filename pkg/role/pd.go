package role

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// pdTTFT answers the P/D TTFT (measure.KVTransferPDTTFT): each part is the same quantile of its own histogram on
// its own instances — TTFT on the prefill instances, transfer and queue time on the decode instances — joined per
// model (or for the fleet) and quantile at each step all of them have.
func pdTTFT(ctx context.Context, eval Eval, q query.Query, r query.Request, byRole map[string][]string) (*query.Result, error) {
	prefill, decode := byRole[Prefill], byRole[Decode]
	if len(prefill) == 0 || len(decode) == 0 {
		return &query.Result{Notices: []string{fmt.Sprintf(
			"the P/D TTFT needs a prefill and a decode instance among the selected endpoints: %d prefill, %d decode", len(prefill), len(decode))}}, nil
	}
	group := query.GroupModel
	if q.GroupBy == query.GroupFleet || q.GroupBy == query.GroupRole {
		group = query.GroupFleet
	}
	part := func(qt query.Type, measureName, metric string, eps []string) (query.Query, error) {
		sub := query.Query{QueryType: qt, Measure: measureName, Metric: metric, Model: q.Model, Engine: q.Engine,
			Quantiles: q.Quantiles, Window: q.Window}
		return narrowed(sub, eps, group)
	}
	type source struct {
		part string
		q    query.Query
	}
	var sources []source
	for _, p := range []struct {
		part, measure, metric string
		qt                    query.Type
		eps                   []string
	}{
		{measure.PDPrefillTTFT, measure.LatencyQuantiles.Name, "ttft", measure.TypeLatency, prefill},
		{measure.PDTransfer, measure.KVTransferLatency.Name, "", measure.TypeKVTransfer, decode},
		{measure.PDDecodeQueue, measure.LatencyQuantiles.Name, "queue", measure.TypeLatency, decode},
	} {
		sub, err := part(p.qt, p.measure, p.metric, p.eps)
		if err != nil {
			return nil, err
		}
		sources = append(sources, source{p.part, sub})
	}
	res := &query.Result{}
	// series[part][labels] are each part's points by step.
	series := map[string]map[string]map[int64]float64{}
	labelsOf := map[string]map[string]string{}
	for _, s := range sources {
		sub, err := eval(ctx, s.q, r)
		if err != nil {
			return nil, err
		}
		res.Step, res.Window = sub.Step, sub.Window
		for _, n := range sub.Notices {
			if !slices.Contains(res.Notices, n) {
				res.Notices = append(res.Notices, n)
			}
		}
		byKey := map[string]map[int64]float64{}
		for _, o := range sub.Outputs {
			k := query.LabelKey(o.Labels)
			labelsOf[k] = o.Labels
			pts := map[int64]float64{}
			for _, p := range o.Points {
				pts[p.T] = p.V
			}
			byKey[k] = pts
		}
		series[s.part] = byKey
	}
	sum := func(parts ...string) map[string]map[int64]float64 {
		out := map[string]map[int64]float64{}
		for k, first := range series[parts[0]] {
			pts := map[int64]float64{}
		step:
			for t, v := range first {
				for _, p := range parts[1:] {
					w, ok := series[p][k][t]
					if !ok {
						continue step
					}
					v += w
				}
				pts[t] = v
			}
			if len(pts) > 0 {
				out[k] = pts
			}
		}
		return out
	}
	series[measure.PDInflation] = sum(measure.PDTransfer, measure.PDDecodeQueue)
	series[measure.PDTotal] = sum(measure.PDPrefillTTFT, measure.PDTransfer, measure.PDDecodeQueue)
	for _, o := range q.Outputs() {
		pd, ok := o.Node.(*measure.PD)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(series[pd.Part]))
		for k := range series[pd.Part] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			pts := series[pd.Part][k]
			out := query.Output{Measure: o.Name, Unit: o.Unit, Labels: maps.Clone(labelsOf[k]), Points: make([]derive.Point, 0, len(pts))}
			for t, v := range pts {
				out.Points = append(out.Points, derive.Point{T: t, V: v})
			}
			sort.Slice(out.Points, func(i, j int) bool { return out.Points[i].T < out.Points[j].T })
			res.Outputs = append(res.Outputs, out)
		}
	}
	return res, nil
}

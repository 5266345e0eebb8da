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
		merge(res, sub)
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

// readsPDBalance reports whether q reads the P/D balance's parts rather than the P/D TTFT's.
func readsPDBalance(q query.Query) bool {
	for _, o := range q.Outputs() {
		if pd, ok := o.Node.(*measure.PD); ok && pd.Balance() {
			return true
		}
	}
	return false
}

// pdBalance answers the P/D balance (measure.KVTransferPDBalance): at each step, the running requests per prefill
// instance (their mean over the prefill endpoints that report then), per decode instance, and the first ÷ the
// second (at least 1), per model (or for the fleet).
func pdBalance(ctx context.Context, eval Eval, q query.Query, r query.Request, byRole map[string][]string) (*query.Result, error) {
	prefill, decode := byRole[Prefill], byRole[Decode]
	if len(prefill) == 0 || len(decode) == 0 {
		return &query.Result{Notices: []string{fmt.Sprintf(
			"the P/D balance needs a prefill and a decode instance among the selected endpoints: %d prefill, %d decode", len(prefill), len(decode))}}, nil
	}
	perModel := q.GroupBy != query.GroupFleet && q.GroupBy != query.GroupRole
	res := &query.Result{}
	// mean[part][group key][step] is a side's running requests per instance.
	mean := map[string]map[string]map[int64]float64{}
	labelsOf := map[string]map[string]string{}
	for _, side := range []struct {
		part string
		eps  []string
	}{{measure.PDPrefillRunning, prefill}, {measure.PDDecodeRunning, decode}} {
		sub, err := narrowed(query.Query{QueryType: query.TypeQueue, Measure: measure.QueueRunning.Name, Model: q.Model, Engine: q.Engine,
			Window: q.Window}, side.eps, query.GroupEndpoint)
		if err != nil {
			return nil, err
		}
		ans, err := eval(ctx, sub, r)
		if err != nil {
			return nil, err
		}
		merge(res, ans)
		sum, count := map[string]map[int64]float64{}, map[string]map[int64]float64{}
		for _, o := range ans.Outputs {
			l := map[string]string{}
			if perModel && o.Labels["model_name"] != "" {
				l["model_name"] = o.Labels["model_name"]
			}
			k := query.LabelKey(l)
			labelsOf[k] = l
			if sum[k] == nil {
				sum[k], count[k] = map[int64]float64{}, map[int64]float64{}
			}
			for _, p := range o.Points {
				sum[k][p.T] += p.V
				count[k][p.T]++
			}
		}
		mean[side.part] = map[string]map[int64]float64{}
		for k, at := range sum {
			mean[side.part][k] = map[int64]float64{}
			for t, v := range at {
				mean[side.part][k][t] = v / count[k][t]
			}
		}
	}
	// The decode side counts at least one request per instance: an idle decode side beside a busy prefill side is
	// the imbalance at its worst, which a division by zero would hide (alerting drops an infinite value).
	ratio := map[string]map[int64]float64{}
	for k, pre := range mean[measure.PDPrefillRunning] {
		for t, v := range pre {
			if d, ok := mean[measure.PDDecodeRunning][k][t]; ok {
				if ratio[k] == nil {
					ratio[k] = map[int64]float64{}
				}
				ratio[k][t] = v / max(d, 1)
			}
		}
	}
	mean[measure.PDRunningRatio] = ratio
	for _, o := range q.Outputs() {
		pd, ok := o.Node.(*measure.PD)
		if !ok {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(mean[pd.Part])) {
			pts := mean[pd.Part][k]
			out := query.Output{Measure: o.Name, Unit: o.Unit, Labels: maps.Clone(labelsOf[k]), Points: make([]derive.Point, 0, len(pts))}
			for _, t := range slices.Sorted(maps.Keys(pts)) {
				out.Points = append(out.Points, derive.Point{T: t, V: pts[t]})
			}
			res.Outputs = append(res.Outputs, out)
		}
	}
	return res, nil
}

// merge takes a part's step and window into res, and its notices not yet there.
func merge(res, part *query.Result) {
	res.Step, res.Window = part.Step, part.Window
	for _, n := range part.Notices {
		if !slices.Contains(res.Notices, n) {
			res.Notices = append(res.Notices, n)
		}
	}
}

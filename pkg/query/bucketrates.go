package query

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

// ReadsBuckets reports whether the query reads a histogram's bucket rates (measure.BucketSuffix), which answer as
// a heatmap's rows.
func (q Query) ReadsBuckets() bool { return measure.ReadsBuckets(q.Outputs()) }

// ApplyBucketRates turns, when the query reads bucket rates, each series set of cumulative bucket rates (one
// output per le, sharing a measure and the other labels) into each bucket's own rate at every step — the cumulative
// rate less the one of the bound below, never negative — in increasing le, every bucket at every step of its set.
// Both modes answer through it, so a
// heatmap is the same whichever mode computed the rates.
func ApplyBucketRates(q Query, res *Result) {
	if res == nil || !q.ReadsBuckets() {
		return
	}
	type bucket struct {
		le  float64
		out Output
	}
	groups := map[string][]bucket{}
	var order []string
	var rest []Output
	for _, o := range res.Outputs {
		le, ok := derive.ParseUpperBound(o.Labels["le"])
		if !ok {
			rest = append(rest, o)
			continue
		}
		others := maps.Clone(o.Labels)
		delete(others, "le")
		k := o.Measure + "\xff" + LabelKey(others)
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		// Exporters write a bound as 1 or 1.0: one bucket either way, its rates summed.
		if i := slices.IndexFunc(groups[k], func(b bucket) bool { return b.le == le }); i >= 0 {
			groups[k][i].out = sumPoints(groups[k][i].out, o)
			continue
		}
		groups[k] = append(groups[k], bucket{le, o})
	}
	outs := make([]Output, 0, len(res.Outputs))
	for _, k := range order {
		bs := groups[k]
		slices.SortFunc(bs, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
		// Every bucket answers at every step of its group (a heatmap's rows share one time field): where a bucket's
		// series has no value, its cumulative rate is the one below it, so its own is 0.
		stepSet := map[int64]bool{}
		for _, b := range bs {
			for _, p := range b.out.Points {
				stepSet[p.T] = true
			}
		}
		steps := slices.Sorted(maps.Keys(stepSet))
		below := make(map[int64]float64, len(steps))
		for _, b := range bs {
			o := b.out
			cum := make(map[int64]float64, len(o.Points))
			for _, p := range o.Points {
				if !math.IsNaN(p.V) {
					cum[p.T] = p.V
				}
			}
			pts := make([]derive.Point, len(steps))
			for i, t := range steps {
				c, ok := cum[t]
				if !ok {
					c = below[t]
				}
				pts[i] = derive.Point{T: t, V: math.Max(0, c-below[t])}
				below[t] = math.Max(c, below[t])
			}
			o.Points = pts
			outs = append(outs, o)
		}
	}
	res.Outputs = append(outs, rest...)
}

// sumPoints is a with b's points added at the steps both have, and b's alone where a has none.
func sumPoints(a, b Output) Output {
	at := make(map[int64]float64, len(a.Points)+len(b.Points))
	for _, p := range a.Points {
		at[p.T] = p.V
	}
	for _, p := range b.Points {
		at[p.T] += p.V
	}
	a.Points = make([]derive.Point, 0, len(at))
	for _, t := range slices.Sorted(maps.Keys(at)) {
		a.Points = append(a.Points, derive.Point{T: t, V: at[t]})
	}
	return a
}

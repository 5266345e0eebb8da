package query

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// How Limit ranks series (a query's rank field).
const (
	RankHighest = "highest"
	RankLowest  = "lowest"
)

// ApplyLimit keeps, of each output (the series sharing a measure and a quantile), the Limit series with the highest
// mean over the range (the lowest with Rank "lowest"), in their original order, and adds a notice saying how many
// were left out. Both modes answer through it, so a top list is the same whichever mode computed the series.
func ApplyLimit(q Query, res *Result) {
	if q.Limit <= 0 || res == nil || len(res.Outputs) <= q.Limit {
		return
	}
	type ranked struct {
		i    int
		mean float64
	}
	groups := map[string][]ranked{}
	var order []string
	for i, o := range res.Outputs {
		k := outputGroup(o)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ranked{i, seriesMean(o)})
	}
	keep := make([]bool, len(res.Outputs))
	dropped := 0
	for _, k := range order {
		g := groups[k]
		slices.SortStableFunc(g, func(a, b ranked) int {
			// Series with no finite value rank last either way.
			switch an, bn := math.IsNaN(a.mean), math.IsNaN(b.mean); {
			case an || bn:
				return cmp.Compare(b2i(an), b2i(bn))
			case q.Rank == RankLowest:
				return cmp.Compare(a.mean, b.mean)
			default:
				return cmp.Compare(b.mean, a.mean)
			}
		})
		for j, r := range g {
			if j < q.Limit {
				keep[r.i] = true
			} else {
				dropped++
			}
		}
	}
	if dropped == 0 {
		return
	}
	kept := res.Outputs[:0]
	for i, o := range res.Outputs {
		if keep[i] {
			kept = append(kept, o)
		}
	}
	res.Outputs = kept
	rank := RankHighest
	if q.Rank == RankLowest {
		rank = RankLowest
	}
	res.Notices = append(res.Notices, fmt.Sprintf("showing the %d series with the %s mean over the range of each output; %d more are left out (limit)", q.Limit, rank, dropped))
}

// outputGroup names the output a series belongs to, its measure and quantile: what a top list ranks within and a
// distribution counts over.
func outputGroup(o Output) string { return o.Measure + "\xff" + o.Labels["quantile"] }

// seriesMean is the mean of a series' finite values, NaN when it has none.
func seriesMean(o Output) float64 {
	sum, n := 0.0, 0
	for _, p := range o.Points {
		if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
			sum += p.V
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

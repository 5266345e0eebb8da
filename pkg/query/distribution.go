package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// InfBound is the name of a distribution's last bucket, as Prometheus writes le.
const InfBound = "+Inf"

// validBuckets checks a distribution's bounds: finite, strictly increasing, at most MaxBuckets.
func validBuckets(b []float64) error {
	if len(b) > MaxBuckets {
		return fmt.Errorf("%d bucket bounds: at most %d", len(b), MaxBuckets)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("bucket bound %v is not a finite number", v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("bucket bounds must increase: %v follows %v", v, b[i-1])
		}
	}
	return nil
}

// ApplyDistribution replaces, when the query has Buckets, the series of each output (those sharing a measure and a
// quantile) by one series per bucket: at every step where any of them has a finite value, how many have a value
// above the previous bound and at most this one (le), a last +Inf bucket taking the rest. Both modes answer through
// it, so a heatmap is the same whichever mode computed the series.
func ApplyDistribution(q Query, res *Result) {
	if len(q.Buckets) == 0 || res == nil {
		return
	}
	type dist struct {
		measure, quantile string
		counts            map[int64][]float64
	}
	var order []*dist
	byKey := map[string]*dist{}
	for _, o := range res.Outputs {
		k := outputGroup(o)
		d := byKey[k]
		if d == nil {
			d = &dist{measure: o.Measure, quantile: o.Labels["quantile"], counts: map[int64][]float64{}}
			byKey[k] = d
			order = append(order, d)
		}
		for _, p := range o.Points {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				continue
			}
			c := d.counts[p.T]
			if c == nil {
				c = make([]float64, len(q.Buckets)+1)
				d.counts[p.T] = c
			}
			// The first bound at or above the value: the bucket (prev, bound], as le buckets count.
			i, _ := slices.BinarySearch(q.Buckets, p.V)
			c[i]++
		}
	}
	var outs []Output
	for _, d := range order {
		steps := make([]int64, 0, len(d.counts))
		for t := range d.counts {
			steps = append(steps, t)
		}
		slices.Sort(steps)
		for b := range len(q.Buckets) + 1 {
			le := InfBound
			if b < len(q.Buckets) {
				le = strconv.FormatFloat(q.Buckets[b], 'g', -1, 64)
			}
			labels := map[string]string{"le": le}
			if d.quantile != "" {
				labels["quantile"] = d.quantile
			}
			o := Output{Measure: d.measure, Unit: "short", Labels: labels, Points: make([]derive.Point, len(steps))}
			for i, t := range steps {
				o.Points[i] = derive.Point{T: t, V: d.counts[t][b]}
			}
			outs = append(outs, o)
		}
	}
	res.Outputs = outs
}

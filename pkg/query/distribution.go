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
	var order []*distCounts
	byKey := map[string]*distCounts{}
	for _, o := range res.Outputs {
		k := outputGroup(o)
		d := byKey[k]
		if d == nil {
			d = &distCounts{measure: o.Measure, quantile: o.Labels["quantile"], width: len(q.Buckets) + 1}
			byKey[k] = d
			order = append(order, d)
		}
		d.add(o.Points, q.Buckets)
	}
	var outs []Output
	for _, d := range order {
		n := 0 // steps where a series has a finite value
		for _, h := range d.has {
			if h {
				n++
			}
		}
		for b := range d.width {
			le := InfBound
			if b < len(q.Buckets) {
				le = strconv.FormatFloat(q.Buckets[b], 'g', -1, 64)
			}
			labels := map[string]string{"le": le}
			if d.quantile != "" {
				labels["quantile"] = d.quantile
			}
			o := Output{Measure: d.measure, Unit: "short", Labels: labels, Points: make([]derive.Point, 0, n)}
			for i, h := range d.has {
				if h {
					o.Points = append(o.Points, derive.Point{T: d.times[i], V: d.counts[i*d.width+b]})
				}
			}
			outs = append(outs, o)
		}
	}
	res.Outputs = outs
}

// distCounts is one distribution being counted: per step time (ascending), the count of values in each bucket
// (counts[i*width+b]), and whether a series has a finite value there.
type distCounts struct {
	measure, quantile string
	width             int
	times             []int64
	has               []bool
	counts            []float64
}

// add counts a series' points. Series of one answer share their steps, so each point's time is found by walking the
// times along with the points; a time no earlier series had is inserted.
func (d *distCounts) add(pts []derive.Point, bounds []float64) {
	j := 0
	for _, p := range pts {
		if j > 0 && p.T <= d.times[j-1] { // out of order: found again from the start
			j, _ = slices.BinarySearch(d.times, p.T)
		}
		for j < len(d.times) && d.times[j] < p.T {
			j++
		}
		if j == len(d.times) || d.times[j] != p.T {
			d.times, d.has = slices.Insert(d.times, j, p.T), slices.Insert(d.has, j, false)
			d.counts = slices.Insert(d.counts, j*d.width, make([]float64, d.width)...)
		}
		if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			continue
		}
		d.has[j] = true
		// The first bound at or above the value: the bucket (prev, bound], as le buckets count.
		i, _ := slices.BinarySearch(bounds, p.V)
		d.counts[j*d.width+i]++
	}
}

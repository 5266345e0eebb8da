package query

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// commonBucketsByMap is the map-per-step commonBuckets that bucketSteps.common replaced: the reference it is held
// to. A single histogram keeps every bound, summed where one repeats (as HistogramQuantile's coalescing and
// CountWithin sum them).
func commonBucketsByMap(b []derive.Bucket) []derive.Bucket {
	all := 0
	for _, x := range b {
		if math.IsInf(x.UpperBound, 1) {
			all++
		}
	}
	switch all {
	case 0:
		return nil
	}
	type bound struct{ at, n int }
	seen := map[float64]bound{}
	var summed []derive.Bucket
	for _, x := range b {
		if c, ok := seen[x.UpperBound]; ok {
			summed[c.at].Count += x.Count
			seen[x.UpperBound] = bound{c.at, c.n + 1}
			continue
		}
		seen[x.UpperBound] = bound{len(summed), 1}
		summed = append(summed, x)
	}
	var kept []derive.Bucket
	for _, x := range summed {
		if seen[x.UpperBound].n == all || all == 1 {
			kept = append(kept, x)
		}
	}
	return kept
}

// TestCommonBucketsMatchesMapReference: over random groups of histograms of mixed layouts (some bounds missing at
// some steps, NaN bounds, several histograms sharing +Inf), added step by step or as a history's StepRates,
// bucketSteps.common keeps the same bounds in the same order with bit-identical sums at every step.
func TestCommonBucketsMatchesMapReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	layouts := [][]float64{{0.1, 0.5, 1, math.Inf(1)}, {0.1, 0.25, 0.5, 1, 2.5, math.Inf(1)}, {0.5, 1, math.Inf(1)}, {math.NaN(), 1, math.Inf(1)}}
	for trial := range 500 {
		var members []input
		for range 1 + rng.IntN(5) {
			for _, le := range layouts[rng.IntN(len(layouts))] {
				members = append(members, input{le: le})
			}
		}
		les := make([]float64, len(members))
		for i, m := range members {
			les[i] = m.le
		}
		const steps = 5
		var sums bucketSteps
		sums.reset(les, steps)
		perStep := make([][]derive.Bucket, steps)
		for i, m := range members { // members in order, each over the steps, as bucketRates adds them
			v, has := make([]float64, steps), make([]bool, steps)
			for step := range steps {
				if rng.IntN(8) == 0 {
					continue // no rate at this step
				}
				v[step], has[step] = rng.Float64()*100, true
				perStep[step] = append(perStep[step], derive.Bucket{UpperBound: m.le, Count: v[step]})
			}
			if i%2 == 0 { // a history's rates, added word by word
				r := (*derive.StepRatesBuf)(nil).Of(v, has, 0)
				sums.addRates(i, sums.slots[i], &r)
				continue
			}
			for step := range steps { // rates from points, one call per step
				if has[step] {
					sums.add(step, i, sums.slots[i], v[step])
				}
			}
		}
		for step, b := range perStep {
			want := commonBucketsByMap(slices.Clone(b))
			got := sums.common(step)
			if len(got) != len(want) {
				t.Fatalf("trial %d step %d: %d buckets, want %d", trial, step, len(got), len(want))
			}
			for i := range got {
				if math.Float64bits(got[i].Count) != math.Float64bits(want[i].Count) ||
					math.Float64bits(got[i].UpperBound) != math.Float64bits(want[i].UpperBound) {
					t.Fatalf("trial %d step %d bucket %d: %+v, want %+v", trial, step, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBucketSlotsAreNumberedByFirstSight: bucketSteps.reset gives every member the slot its bound got when first
// seen (a map from bound to slot, NaN never matching), whether the group's histograms repeat one layout, mix
// layouts, or come with their buckets shuffled, so guessing the next slot changes no numbering.
func TestBucketSlotsAreNumberedByFirstSight(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	layouts := [][]float64{{0.1, 0.5, 1, math.Inf(1)}, {0.1, 0.25, 0.5, 1, 2.5, math.Inf(1)}, {0.5, 1, math.Inf(1)},
		{math.NaN(), 1, math.Inf(1)}, {1, 1, math.Inf(1)}, {math.Inf(1)}}
	var bs bucketSteps // one serves every trial, as one serves a query's groups in turn
	for trial := range 1000 {
		var les []float64
		for range 1 + rng.IntN(6) {
			layout := slices.Clone(layouts[rng.IntN(len(layouts))])
			if trial%3 == 0 {
				rng.Shuffle(len(layout), func(i, j int) { layout[i], layout[j] = layout[j], layout[i] })
			}
			les = append(les, layout...)
		}
		want, bounds := make([]int32, len(les)), []float64{}
		seen := map[float64]int32{}
		for i, le := range les {
			slot, ok := seen[le]
			if !ok {
				slot = int32(len(bounds)) // #nosec G115 -- a trial's few dozen bounds
				seen[le] = slot
				bounds = append(bounds, le)
			}
			want[i] = slot
		}
		bs.reset(les, 3)
		if !slices.Equal(bs.slots, want) || len(bs.bounds) != len(bounds) {
			t.Fatalf("trial %d, bounds %v: slots %v (%d bounds), want %v (%d)", trial, les, bs.slots, len(bs.bounds), want, len(bounds))
		}
		for s, le := range bounds {
			if got := bs.bounds[s]; got != le && !(math.IsNaN(got) && math.IsNaN(le)) {
				t.Fatalf("trial %d: slot %d holds bound %v, want %v", trial, s, got, le)
			}
		}
	}
}

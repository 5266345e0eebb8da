package query

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// instantBySearch is the binary search per step that evalCtx.instant's forward pass replaced: the reference it is
// held to.
func instantBySearch(points []derive.Point, t, lookback int64) (float64, bool) {
	i := sort.Search(len(points), func(i int) bool { return points[i].T > t }) - 1
	if i < 0 || points[i].T <= t-lookback || derive.IsStale(points[i].V) {
		return 0, false
	}
	return points[i].V, true
}

// TestInstantMatchesSearch: over random series (gaps longer than the lookback, staleness markers, empty ones, steps
// before the first point and after the last, steps on points' times), one forward pass over the steps answers what
// a search at each step does, bit for bit.
func TestInstantMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const lookback = 300_000
	c := &evalCtx{lookback: lookback}
	for trial := range 300 {
		var pts []derive.Point
		at := int64(rng.IntN(600_000))
		for range rng.IntN(80) {
			at += int64(1 + rng.IntN(20_000))
			if rng.IntN(30) == 0 {
				at += 2 * lookback // a gap the lookback does not bridge
			}
			v := rng.Float64() * 100
			if rng.IntN(15) == 0 {
				v = derive.StaleNaN
			}
			pts = append(pts, derive.Point{T: at, V: v})
		}
		step := int64(1 + rng.IntN(30_000))
		from := int64(rng.IntN(900_000))
		if len(pts) > 0 && rng.IntN(4) == 0 {
			from = pts[rng.IntN(len(pts))].T - step*int64(rng.IntN(3)) // steps that land on points' times
		}
		next := -1
		for k := range 200 {
			ts := from + int64(k)*step
			got, gotOK := c.instant(pts, &next, ts)
			want, wantOK := instantBySearch(pts, ts, lookback)
			if gotOK != wantOK || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d step %d (t=%d): %v %v, want %v %v", trial, k, ts, got, gotOK, want, wantOK)
			}
		}
	}
}

package query

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// joinByMaps is join as it was first written, by a map of each right series' points by time and a copy of each
// left series' labels without the ignored one: the reference join is held to.
func joinByMaps(left, right []Output, ignoring string, f func(l, r float64) (float64, bool)) []Output {
	index := map[string]map[int64]float64{}
	for _, r := range right {
		m := map[int64]float64{}
		for _, p := range r.Points {
			m[p.T] = p.V
		}
		index[LabelKey(r.Labels)] = m
	}
	var outs []Output
	for _, l := range left {
		key := l.Labels
		if _, ok := key[ignoring]; ok && ignoring != "" {
			key = copyLabels(key)
			delete(key, ignoring)
		}
		rm, ok := index[LabelKey(key)]
		if !ok {
			continue
		}
		o := Output{Labels: l.Labels}
		for _, p := range l.Points {
			if r, ok := rm[p.T]; ok {
				if v, ok := f(p.V, r); ok {
					o.Points = append(o.Points, derive.Point{T: p.T, V: v})
				}
			}
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

// TestJoinMatchesByLabelsAndTime: join answers as matching by a map per series does, on series with missing steps,
// refused steps, an ignored label, unmatched series, and points out of time order or twice at one time.
func TestJoinMatchesByLabelsAndTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	series := func(n int, reason bool, shuffle bool) []Output {
		var outs []Output
		for e := range n {
			for _, r := range []string{"stop", "length"} {
				l := map[string]string{"endpoint": "a", "engine": fmt.Sprint(e)}
				if reason {
					l["finished_reason"] = r
				} else if r == "length" {
					break
				}
				var pts []derive.Point
				for s := range 12 {
					if rng.IntN(4) > 0 {
						pts = append(pts, derive.Point{T: int64(s) * 5000, V: float64(rng.IntN(5))})
					}
				}
				if shuffle && len(pts) > 2 {
					rng.Shuffle(len(pts), func(i, j int) { pts[i], pts[j] = pts[j], pts[i] })
					pts = append(pts, derive.Point{T: pts[0].T, V: 7}) // a time twice
				}
				outs = append(outs, Output{Labels: l, Points: pts})
			}
		}
		return outs
	}
	div := func(a, b float64) (float64, bool) { return a / b, b != 0 }
	for round := range 50 {
		shuffle := round%5 == 4
		left, right := series(6, true, shuffle), series(5, false, shuffle)
		for _, ignoring := range []string{"finished_reason", ""} {
			got, want := join(left, right, ignoring, div), joinByMaps(left, right, ignoring, div)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, ignoring %q:\ngot  %v\nwant %v", round, ignoring, got, want)
			}
		}
	}
}

// TestJoinCopiesNoLabels: a join ignoring a label allocates, per matched series, its key and its points, and per
// right series its key: no copy of anyone's labels, no map per series of points by time.
func TestJoinCopiesNoLabels(t *testing.T) {
	var left, right []Output
	for e := range 50 {
		l := map[string]string{"endpoint": "a", "model_name": "m", "engine": fmt.Sprint(e)}
		var pts []derive.Point
		for s := range 10 {
			pts = append(pts, derive.Point{T: int64(s) * 5000, V: 1})
		}
		right = append(right, Output{Labels: l, Points: pts})
		ll := copyLabels(l)
		ll["finished_reason"] = "length"
		left = append(left, Output{Labels: ll, Points: pts})
	}
	div := func(a, b float64) (float64, bool) { return a / b, true }
	allocs := testing.AllocsPerRun(20, func() { join(left, right, "finished_reason", div) })
	if limit := float64(2*len(left) + len(right) + 20); allocs > limit {
		t.Errorf("a join of %d series on %d allocated %.0f times, want at most %.0f", len(left), len(right), allocs, limit)
	}
}

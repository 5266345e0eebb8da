package derive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStepRatesMatchRateSteps checks StepRates against RateSteps over a grid reaching before and after the points
// (more than 64 steps: several bitset words): a series over the whole grid, one younger than it, one that stopped,
// one starting with a staleness marker, too few points, and a reset and missed scrapes throughout.
func TestStepRatesMatchRateSteps(t *testing.T) {
	series := func(from, to int) []Point {
		var pts []Point
		for i := from; i < to; i++ {
			if i%37 == 5 {
				continue // a missed scrape
			}
			v := float64(i * 3)
			if i > 200 {
				v = float64((i - 200) * 2) // a restarted server
			}
			if i == 300 {
				v = StaleNaN
			}
			pts = append(pts, Point{T: int64(i) * 5000, V: v})
		}
		return pts
	}
	staleFirst := append([]Point{{T: 0, V: StaleNaN}}, series(1, 50)...)
	cases := map[string][]Point{
		"whole grid": series(0, 400), "younger": series(350, 400), "stopped": series(0, 60),
		"stale first": staleFirst, "one point": series(10, 11), "none": nil,
	}
	steps := Steps(-100*5000, 500*5000, 7000)
	for name, pts := range cases {
		for _, window := range []int64{16_000, 300_000} {
			var want, got []string
			RateSteps(pts, steps, window, func(i int, v float64) { want = append(want, fmt.Sprintf("%d:%v", i, v)) })
			r := &RatesOf([][]Point{nil, pts, pts[:min(len(pts), 3)]}, steps, window)[1]
			if r.Points() != len(pts) {
				t.Errorf("%s: rates of %d points report %d", name, len(pts), r.Points())
			}
			r.Each(func(i int, v float64) { got = append(got, fmt.Sprintf("%d:%v", i, v)) })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, window %d: StepRates gave %v, RateSteps %v", name, window, got, want)
			}
			if held := r.Bytes(); len(want) > 0 && held > 9*(int64(len(want))+window/7000+2) {
				t.Errorf("%s, window %d: %d bytes held for %d rates: more steps than the points can give a rate", name, window, held, len(want))
			}
		}
	}
	if len(steps) <= 64 {
		t.Fatalf("%d steps: the grid must span several bitset words", len(steps))
	}
}

// TestStepRatesBufOfMatchRateSteps builds StepRates step by step, as rate cursors give them, from RateSteps' rates over
// a grid of more than 64 steps with none at either end and a gap in the middle, and from no rates at all.
func TestStepRatesBufOfMatchRateSteps(t *testing.T) {
	var pts []Point
	for i := 40; i < 400; i++ {
		if i < 100 || i > 130 {
			pts = append(pts, Point{T: int64(i) * 5000, V: float64(i * i)})
		}
	}
	steps := Steps(0, 500*5000, 7000)
	v, has := make([]float64, len(steps)), make([]bool, len(steps))
	var want []string
	RateSteps(pts, steps, 16_000, func(i int, x float64) {
		v[i], has[i] = x, true
		want = append(want, fmt.Sprintf("%d:%v", i, x))
	})
	var apart *StepRatesBuf // nil: each StepRates' arrays made apart
	r := apart.Of(v, has, len(pts))
	var got []string
	r.Each(func(i int, x float64) { got = append(got, fmt.Sprintf("%d:%v", i, x)) })
	if fmt.Sprint(got) != fmt.Sprint(want) || r.Points() != len(pts) || len(want) < 100 {
		t.Fatalf("Of gave %d points %v, RateSteps %v", r.Points(), got, want)
	}
	if r.Bytes() >= 8*int64(len(steps)) {
		t.Errorf("%d bytes held for %d steps: the steps before the first rate and after the last are held too", r.Bytes(), len(steps))
	}
	none := apart.Of(v, make([]bool, len(steps)), 3)
	none.Each(func(i int, _ float64) { t.Errorf("step %d has a rate", i) })
	if none.Points() != 3 {
		t.Errorf("no rates report %d points, want 3", none.Points())
	}
}

// TestStepRatesBufCarvesApartArrays carves StepRates for more series than the buffer was sized for: each equals
// what a nil buffer gives (arrays made apart), those past its room included, and appending to one leaves the next
// as it was.
func TestStepRatesBufCarvesApartArrays(t *testing.T) {
	var apart *StepRatesBuf
	const steps = 70 // two bitset words
	buf := NewStepRatesBuf(3, steps)
	var got, want []StepRates
	for s := range 5 {
		v, has := make([]float64, steps), make([]bool, steps)
		for i := s; i < steps-s; i += 1 + s {
			v[i], has[i] = float64(s*100+i), true
		}
		got, want = append(got, buf.Of(v, has, s)), append(want, apart.Of(v, has, s))
	}
	each := func(r StepRates) string {
		var out []string
		r.Each(func(i int, x float64) { out = append(out, fmt.Sprintf("%d:%v", i, x)) })
		return fmt.Sprint(r.Points(), out)
	}
	for s := range got {
		if each(got[s]) != each(want[s]) {
			t.Errorf("series %d: StepRatesBuf gave %s, a nil one %s", s, each(got[s]), each(want[s]))
		}
	}
	before := each(got[1])
	_ = append(got[0].v, -1)
	_ = append(got[0].has, ^uint64(0))
	if each(got[1]) != before {
		t.Errorf("appending to one StepRates changed the next: %s, was %s", each(got[1]), before)
	}
}

// TestWindowRateMatchesRateSteps rates windows from their ends, point count and increase, as rate cursors do, and
// compares each bit for bit with RateSteps over the window's points: with and without resets, gaps, and windows
// whose first point lies near the start or the zero point.
func TestWindowRateMatchesRateSteps(t *testing.T) {
	var pts []Point
	v := 1000.0
	for i := 0; i < 300; i++ {
		switch {
		case i%53 == 7:
			continue // a missed scrape
		case i%71 == 30:
			v = float64(i % 5) // a reset
		default:
			v += float64(i % 7)
		}
		pts = append(pts, Point{T: int64(i)*5000 + int64(i%3), V: v})
	}
	checked := 0
	for _, window := range []int64{15_000, 60_000, 300_000} {
		for end := int64(0); end <= 1_500_000; end += 15_000 {
			start := end - window
			var w []Point
			for _, p := range pts {
				if p.T > start && p.T <= end {
					w = append(w, p)
				}
			}
			var want []float64
			RateSteps(pts, []int64{end}, window, func(_ int, x float64) { want = append(want, x) })
			if len(w) < 2 {
				if len(want) != 0 {
					t.Fatalf("window (%d, %d]: %d points, RateSteps gave %v", start, end, len(w), want)
				}
				continue
			}
			got, ok := WindowRate(w[0], w[len(w)-1], len(w), counterIncrease(w, true), start, end)
			if !ok || len(want) != 1 || got != want[0] {
				t.Fatalf("window (%d, %d]: WindowRate %v %v, RateSteps %v", start, end, got, ok, want)
			}
			checked++
		}
	}
	if checked < 250 {
		t.Fatalf("only %d windows checked", checked)
	}
}

// TestRatesOfSharedEdgesMatchRateSteps holds RatesOf, which reuses a step's window edges across the series of a
// selection, to RateSteps of each series alone, bit for bit: an endpoint's series scraped together (shared
// timestamps with jitter), some younger or with missed scrapes, first values around the counter's zero clamp
// (where the kept factor must not be taken), and values from zero and subnormals to beyond any counter, Inf and NaN.
func TestRatesOfSharedEdgesMatchRateSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	firsts := []float64{0, 5e-324, 1e-300, 1, 3e305, math.MaxFloat64, math.Inf(1), math.NaN(), -1}
	for trial := range 200 {
		var ts []int64
		at := int64(1_700_000_000_000)
		for range 100 + r.IntN(200) {
			at += 4000 + r.Int64N(2000)
			ts = append(ts, at)
		}
		series := make([][]Point, 1+r.IntN(40))
		for k := range series {
			step := float64(r.IntN(50))
			if r.IntN(4) == 0 {
				step = r.Float64() * 7
			}
			var v float64
			switch x := r.IntN(10); {
			case x < 6: // about where the clamp starts to apply at some steps
				v = step * r.Float64() * 1.2
				if r.IntN(2) == 0 {
					v = math.Round(v)
				}
			default:
				v = firsts[r.IntN(len(firsts))]
			}
			for j := r.IntN(len(ts) / 2); j < len(ts); j++ {
				if r.IntN(30) == 0 {
					continue // a missed scrape
				}
				if r.IntN(200) == 0 {
					v = 0 // a restart
				}
				series[k] = append(series[k], Point{T: ts[j], V: v})
				v += step
			}
		}
		window := []int64{60_000, 300_000}[r.IntN(2)]
		steps := Steps(ts[0]-r.Int64N(60_000), ts[len(ts)-1]+r.Int64N(60_000), 15_000)
		rates := RatesOf(series, steps, window)
		for k, pts := range series {
			var want, got []string
			RateSteps(pts, steps, window, func(i int, v float64) { want = append(want, fmt.Sprintf("%d:%x", i, math.Float64bits(v))) })
			rates[k].Each(func(i int, v float64) { got = append(got, fmt.Sprintf("%d:%x", i, math.Float64bits(v))) })
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d series %d (first %v): RatesOf %v, RateSteps %v", trial, k, pts[0].V, got, want)
			}
		}
	}
}

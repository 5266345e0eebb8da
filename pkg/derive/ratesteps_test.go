package derive

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRateStepsMatchesRate holds RateSteps to Rate bit for bit over random counters: resets, staleness markers,
// gaps and jittered scrapes, windows shorter and longer than the step.
func TestRateStepsMatchesRate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 500 {
		var pts []Point
		ts, v := int64(1_700_000_000_000), r.Float64()*100
		for range r.IntN(300) {
			ts += 1000 + r.Int64N(9000)
			switch x := r.Float64(); {
			case x < 0.03:
				v = r.Float64() * 10 // a restart
			case x < 0.06:
				pts = append(pts, Point{T: ts, V: StaleNaN})
				continue
			case x < 0.08:
				ts += 120_000 // a gap
			default:
				v += r.Float64() * 50
			}
			pts = append(pts, Point{T: ts, V: v})
		}
		step := 1000 + r.Int64N(30_000)
		window := 2000 + r.Int64N(300_000)
		from := int64(1_700_000_000_000) - r.Int64N(60_000)
		steps := Steps(from, ts+r.Int64N(120_000), step)
		got := map[int]float64{}
		RateSteps(pts, steps, window, func(i int, v float64) {
			if _, dup := got[i]; dup {
				t.Fatalf("trial %d: step %d reported twice", trial, i)
			}
			got[i] = v
		})
		for i, end := range steps {
			want, ok := Rate(pts, end-window, end)
			g, has := got[i]
			if ok != has || ok && math.Float64bits(want) != math.Float64bits(g) {
				t.Fatalf("trial %d step %d (end %d, window %d): RateSteps %v (%v), Rate %v (%v)", trial, i, end, window, g, has, want, ok)
			}
		}
	}
}

// BenchmarkRateSteps compares one pass over a day of 5 s scrapes at 240 steps with Rate at each step.
func BenchmarkRateSteps(b *testing.B) {
	var pts []Point
	for i := range 720 {
		pts = append(pts, Point{T: int64(i) * 5000, V: float64(i * 3)})
	}
	steps := Steps(60_000, 3_600_000, 15_000)
	b.Run("RateSteps", func(b *testing.B) {
		for b.Loop() {
			RateSteps(pts, steps, 60_000, func(int, float64) {})
		}
	})
	b.Run("Rate-per-step", func(b *testing.B) {
		for b.Loop() {
			for _, t := range steps {
				_, _ = Rate(pts, t-60_000, t)
			}
		}
	})
}

// BenchmarkRatesOf rates an endpoint's selection as a cold hour does: 200 counters (histogram buckets) scraped
// together every 5 s for an hour, at 240 steps over a 5-minute window; ns per series.
func BenchmarkRatesOf(b *testing.B) {
	series := make([][]Point, 200)
	for k := range series {
		for i := range 720 {
			series[k] = append(series[k], Point{T: 1_700_000_000_000 + int64(i)*5000, V: float64(1000 + i*(k%17))})
		}
	}
	steps := Steps(1_700_000_000_000, 1_700_000_000_000+3_600_000, 15_000)
	for b.Loop() {
		_ = RatesOf(series, steps, 300_000)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(series)), "ns/series")
}

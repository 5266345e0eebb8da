package derive

import (
	"math"
	"testing"
)

func TestIncreaseRate(t *testing.T) {
	// Upstream promql/testdata/functions.test (2.x): samples every 5m, evaluated at 50m.
	foo := regular(0, 300, 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
	bar := regular(0, 300, 0, 10, 20, 30, 40, 50, 0, 10, 20, 30, 40, 50)

	tests := []struct {
		name       string
		points     []Point
		start, end int64
		increase   float64
		ok         bool
	}{
		{"empty", nil, 0, 60 * sec, 0, false},
		{"one sample", pts(10, 5), 0, 60 * sec, 0, false},
		{"one sample in window", pts(-10, 1, 10, 5), 0, 60 * sec, 0, false},
		// Prometheus 3 selects (start, end]: the sample at the window start is outside, leaving one (2.x: 60).
		{"sample at the window start", pts(0, 0, 60, 60), 0, 60 * sec, 0, false},
		{"exact cover", pts(0, 0, 60, 60), -1, 60 * sec, 60, true},
		// The sample at 0 is outside; 300 s … 3000 s (10 → 100) extrapolate back to the start: 90 × 3000/2700 = 100
		// (Prometheus 3's functions.test: increase(http_requests_total[50m]) at 50m is 100 for /foo).
		{"upstream foo 50m", foo, 0, 3000 * sec, 100, true},
		// 10 … 50, reset, 0 … 40 from 300 s: (40 − 10 + 50) × 3000/2700 (2.x, with the sample at 0: 90).
		{"upstream bar reset 50m", bar, 0, 3000 * sec, 80 * 3000.0 / 2700, true},
		// Zero clamp: first value 0 means the series started at the first sample.
		{"upstream foo 100m window", foo, -3000 * sec, 3000 * sec, 100, true},
		// 0 1 2 3 2 3 4: the drop to 2 adds the 3 seen before it.
		{"reset", regular(0, 10, 0, 1, 2, 3, 2, 3, 4), 0, 60 * sec, 7, true},
		// 10 0 5 from 10 s (the 5 at 0 s is outside): 5 − 10 + 10 = 5 over 20 s, extrapolated to 30 s (2.x: 10).
		{"reset to zero", regular(0, 10, 5, 10, 0, 5), 0, 30 * sec, 7.5, true},
		// Gaps above 1.1×avg spacing extrapolate only avg/2: (20+5+5)/20 × 20.
		{"far edges", regular(20, 10, 100, 110, 120), 0, 60 * sec, 30, true},
		// Gaps below the threshold extrapolate to the edges: 60/50 × 50.
		{"near edges", regular(5, 10, 100, 110, 120, 130, 140, 150), 0, 60 * sec, 60, true},
		// Prometheus 3 caps the 30 s gap to the start at avg/2 = 5 s (it exceeds 1.1 × 10 s) and only then clamps
		// to the zero point 8 s back, which is further: 30 × 35/30. 2.42 clamped first and then compared 8 s with
		// the threshold, extrapolating 8 s: 38.
		{"threshold before zero clamp", regular(30, 10, 8, 18, 28, 38), 0, 60 * sec, 35, true},
		// Zero point 2s before the first sample: extrapolate only 2s: 30 × 32/30.
		{"zero clamp", regular(30, 10, 2, 12, 22, 32), 20 * sec, 60 * sec, 32, true},
		// A negative first value disables the zero clamp.
		{"negative first", regular(5, 10, -10, 0, 10), 0, 30 * sec, 30, true},
		{"flat", regular(0, 10, 7, 7, 7), 0, 20 * sec, 0, true},
		{"stale marker skipped", []Point{{0, 0}, {10 * sec, StaleNaN}, {20 * sec, 2}}, -10 * sec, 20 * sec, 2, true},
		{"only stale", []Point{{0, StaleNaN}, {10 * sec, StaleNaN}, {20 * sec, 3}}, 0, 20 * sec, 0, false},
		{"outside points ignored", regular(0, 10, 0, 100, 200, 210, 220, 900), 20 * sec, 40 * sec, 20, true},
		// Comparisons with NaN are false, so a NaN in the middle neither counts as a reset nor
		// lets the next sample count as one: only first and last matter.
		{"NaN in the middle", regular(0, 10, 0, math.NaN(), 2), -5 * sec, 20 * sec, 2, true},
		{"NaN last", regular(0, 10, 0, 1, math.NaN()), 0, 20 * sec, math.NaN(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inc, ok := Increase(tc.points, tc.start, tc.end)
			if ok != tc.ok || (ok && !near(inc, tc.increase)) {
				t.Fatalf("Increase = %v, %v; want %v, %v", inc, ok, tc.increase, tc.ok)
			}
			r, ok := Rate(tc.points, tc.start, tc.end)
			want := tc.increase / (float64(tc.end-tc.start) / 1000)
			if ok != tc.ok || (ok && !near(r, want)) {
				t.Fatalf("Rate = %v, %v; want %v, %v", r, ok, want, tc.ok)
			}
		})
	}
}

func TestIncreaseDoesNotModifyInput(t *testing.T) {
	in := []Point{{0, 1}, {10 * sec, StaleNaN}, {20 * sec, 0}, {30 * sec, 4}}
	cp := append([]Point(nil), in...)
	_, _ = Increase(in, 0, 30*sec)
	for i := range in {
		if in[i].T != cp[i].T || math.Float64bits(in[i].V) != math.Float64bits(cp[i].V) {
			t.Fatalf("input modified at %d: %v", i, in)
		}
	}
}

func TestDelta(t *testing.T) {
	tests := []struct {
		name   string
		points []Point
		want   float64
		ok     bool
	}{
		{"decreasing gauge is not a reset", regular(0, 10, 100, 90, 80), -20, true},
		// No zero clamp for gauges: (20+5+5)/20 × 20.
		{"far edges", regular(20, 10, 0, 10, 20), 30, true},
		{"one sample", regular(0, 10, 1), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			end := int64(20 * sec)
			if tc.name == "far edges" {
				end = 60 * sec
			}
			got, ok := Delta(tc.points, 0, end)
			if ok != tc.ok || (ok && !near(got, tc.want)) {
				t.Fatalf("Delta = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestIRate(t *testing.T) {
	tests := []struct {
		name       string
		points     []Point
		start, end int64
		want       float64
		ok         bool
	}{
		{"empty", nil, 0, 60 * sec, 0, false},
		{"one sample", pts(5, 1), 0, 60 * sec, 0, false},
		{"last two", pts(0, 0, 10, 100, 15, 110), 0, 60 * sec, 2, true},
		{"reset uses last value", pts(0, 0, 10, 100, 20, 30), 0, 60 * sec, 3, true},
		{"window cuts later samples", pts(0, 0, 10, 100, 20, 300), -1, 10 * sec, 10, true},
		// (10 s, 20 s] holds only the sample at 20 s (2.x also took the one at 10 s: 20/s).
		{"left edge excluded", pts(0, 0, 10, 100, 20, 300), 10 * sec, 20 * sec, 0, false},
		{"stale skipped", []Point{{0, 0}, {10 * sec, 50}, {15 * sec, StaleNaN}}, -1, 60 * sec, 5, true},
		{"ms spacing", []Point{{0, 0}, {250, 1}}, -1, 60 * sec, 4, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := IRate(tc.points, tc.start, tc.end)
			if ok != tc.ok || (ok && !near(got, tc.want)) {
				t.Fatalf("IRate = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRangeSeconds(t *testing.T) {
	for ms, want := range map[int64]float64{60000: 60, 1500: 1.5, 300000: 300, 1: 0.001} {
		if got := rangeSeconds(ms); got != want {
			t.Errorf("rangeSeconds(%d) = %v, want %v", ms, got, want)
		}
	}
}

func benchSeries() []Point {
	// One hour at 5 s with a reset in the middle.
	p := make([]Point, 720)
	for i := range p {
		v := float64(i * 7)
		if i >= 360 {
			v = float64((i - 360) * 7)
		}
		p[i] = Point{T: int64(i) * 5000, V: v}
	}
	return p
}

func BenchmarkRate720(b *testing.B) {
	p := benchSeries()
	end := p[len(p)-1].T
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Rate(p, end-3600*sec, end); !ok {
			b.Fatal("no result")
		}
	}
}

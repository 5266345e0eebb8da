package derive

import (
	"math"
	"testing"
)

var inf = math.Inf(+1)

func TestHistogramQuantile(t *testing.T) {
	// Upstream promql/testdata/histograms.test "testhistogram" at 50m.
	positive := []Bucket{{0.1, 50}, {0.2, 70}, {1, 110}, {inf, 120}}
	negative := []Bucket{{-0.2, 10}, {-0.1, 20}, {0.3, 20}, {inf, 30}}
	shuffled := []Bucket{{inf, 120}, {0.2, 70}, {0.1, 50}, {1, 110}}

	tests := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		{"q below 0", -0.1, positive, math.Inf(-1)},
		{"q above 1", 1.01, positive, inf},
		{"q NaN", math.NaN(), positive, math.NaN()},
		{"q below 0 wins over bad buckets", -1, nil, math.Inf(-1)},
		{"positive q0", 0, positive, 0},
		{"positive q0.2", 0.2, positive, 0.048},
		{"positive q0.5", 0.5, positive, 0.15},
		{"positive q0.8", 0.8, positive, 0.72},
		{"positive q1 → highest finite bound", 1, positive, 1},
		{"unsorted input", 0.5, shuffled, 0.15},
		{"negative q0 → first bound", 0, negative, -0.2},
		{"negative q0.2 → first bound", 0.2, negative, -0.2},
		{"negative q0.5", 0.5, negative, -0.15},
		{"negative q0.8 → highest finite bound", 0.8, negative, 0.3},
		{"no buckets", 0.5, nil, math.NaN()},
		{"no +Inf bucket", 0.5, []Bucket{{0.1, 1}, {1, 2}}, math.NaN()},
		{"only +Inf", 0.5, []Bucket{{inf, 5}}, math.NaN()},
		{"two +Inf coalesce to one bucket", 0.5, []Bucket{{inf, 5}, {inf, 3}}, math.NaN()},
		{"zero observations", 0.5, []Bucket{{0.1, 0}, {1, 0}, {inf, 0}}, math.NaN()},
		{"q0 with empty first bucket is 0/0", 0, []Bucket{{0.1, 0}, {1, 4}, {inf, 4}}, math.NaN()},
		{"all in +Inf", 0.5, []Bucket{{0.1, 0}, {1, 0}, {inf, 10}}, 1},
		// Non-monotonic counts become 20 20 20 20 90 90: rank 45 lands in (100, 1000].
		{"non-monotonic", 0.5, []Bucket{{0.1, 20}, {1, 10}, {10, 20}, {100, 10}, {1000, 90}, {inf, 80}}, 100 + 900*25.0/70},
		{"non-monotonic low q", 0.01, []Bucket{{0.1, 20}, {1, 10}, {10, 20}, {100, 10}, {1000, 90}, {inf, 80}}, 0.1 * 0.9 / 20},
		// "1" and "1.0" from two series: 3+4 = 7 observations <= 1.
		{"duplicate bounds sum", 0.5, []Bucket{{1, 3}, {2, 10}, {1, 4}, {inf, 10}}, 5.0 / 7},
		{"duplicate bounds sum high", 0.8, []Bucket{{1, 3}, {2, 10}, {1, 4}, {inf, 10}}, 1 + 1.0/3},
		{"duplicate bounds sum low", 0.35, []Bucket{{1, 3}, {2, 10}, {1, 4}, {inf, 10}}, 0.5},
		// A dip by one ulp is raised to its predecessor (in Prometheus 3 by its 1e-12 tolerance step).
		{"tiny dip", 0.5, []Bucket{{0.1, 1.0000000000001}, {1, 1}, {inf, 2}}, 0.1 + 0.9*(1-1.0000000000001)/(2-1.0000000000001)},
		{"rank in middle bucket", 0.9, []Bucket{{1, 0}, {2, 10}, {4, 10}, {inf, 10}}, 1.9},
		// Prometheus 3 takes the next count (5) as reference after a NaN first count, so 3 and 4 are raised to 5;
		// rank 3.5 then lands in the bucket (0.1, 0.5], whose count 5 − NaN is NaN (checked against Prometheus 3
		// in the differential test; 2.42 kept a NaN running maximum, left 3 and 4 alone and answered 1.5).
		{"NaN first count", 0.35, []Bucket{{0.1, math.NaN()}, {0.5, 5}, {1, 3}, {2, 4}, {inf, 10}}, math.NaN()},
		{"+Inf count NaN", 0.5, []Bucket{{1, 1}, {2, 2}, {inf, math.NaN()}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := HistogramQuantile(tc.q, tc.buckets)
			if !near(got, tc.want) {
				t.Fatalf("HistogramQuantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
	// HistogramQuantiles answers every case at once, its quantiles sharing one preparation and the cases one
	// scratch array, which neither the next case nor the input sees.
	var scratch []Bucket
	for _, tc := range tests {
		in := append([]Bucket(nil), tc.buckets...)
		qs := []float64{tc.q, 0.5, tc.q}
		out := make([]float64, len(qs))
		scratch = HistogramQuantiles(qs, tc.buckets, out, scratch)
		if !near(out[0], tc.want) || !near(out[2], tc.want) || !near(out[1], HistogramQuantile(0.5, tc.buckets)) {
			t.Errorf("%s: HistogramQuantiles(%v) = %v, want %v and the median %v", tc.name, qs, out, tc.want, HistogramQuantile(0.5, tc.buckets))
		}
		for i := range in {
			if in[i] != tc.buckets[i] && !(math.IsNaN(in[i].Count) && math.IsNaN(tc.buckets[i].Count)) {
				t.Fatalf("%s: HistogramQuantiles modified its input: %v", tc.name, tc.buckets)
			}
		}
	}
	big := make([]Bucket, 16)
	for i := range big {
		big[i] = Bucket{float64(i + 1), float64(i)}
	}
	big[15].UpperBound = inf
	scratch = HistogramQuantiles([]float64{0.9}, big, make([]float64, 1), scratch)
	if n := testing.AllocsPerRun(50, func() { scratch = HistogramQuantiles([]float64{0.5, 0.99}, big, make([]float64, 2), scratch) }); n != 0 {
		t.Errorf("HistogramQuantiles with a scratch array large enough allocates %v times", n)
	}
}

func TestHistogramQuantileDoesNotModifyInput(t *testing.T) {
	in := []Bucket{{inf, 80}, {1, 10}, {0.1, 20}, {1, 5}}
	cp := append([]Bucket(nil), in...)
	HistogramQuantile(0.5, in)
	for i := range in {
		if in[i] != cp[i] {
			t.Fatalf("input modified: %v", in)
		}
	}
}

func TestParseUpperBound(t *testing.T) {
	tests := []struct {
		le   string
		want float64
		ok   bool
	}{
		{"0.005", 0.005, true}, {"1", 1, true}, {"1.0", 1, true}, {"1e0", 1, true},
		{"+Inf", inf, true}, {"Inf", inf, true}, {"-0.2", -0.2, true},
		{"NaN", 0, false}, {"", 0, false}, {"abc", 0, false},
	}
	for _, tc := range tests {
		got, ok := ParseUpperBound(tc.le)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseUpperBound(%q) = %v, %v; want %v, %v", tc.le, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBucketRatesAndQuantile(t *testing.T) {
	// Scrapes every 30 s. The one at 0 is outside the window (0, 60] (Prometheus 3 range selection); the ones
	// at 30 and 60 s extrapolate back to the window start (30 s gap < 1.1 × 30 s), so rate = delta(30→60) / 30.
	series := []BucketSeries{
		{0.1, pts(0, 0, 30, 30, 60, 60)},
		{0.5, pts(0, 0, 30, 60, 60, 120)},
		{inf, pts(0, 0, 30, 90, 60, 180)},
		{1, pts(60, 5)}, // one sample only: dropped, as PromQL drops it from rate()
	}
	got := BucketRates(series, 0, 60*sec)
	want := []Bucket{{0.1, 1}, {0.5, 2}, {inf, 3}}
	if len(got) != len(want) {
		t.Fatalf("BucketRates = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].UpperBound != want[i].UpperBound || !near(got[i].Count, want[i].Count) {
			t.Fatalf("BucketRates = %v, want %v", got, want)
		}
	}
	inc := BucketIncreases(series, 0, 60*sec)
	if len(inc) != 3 || !near(inc[2].Count, 180) {
		t.Fatalf("BucketIncreases = %v", inc)
	}
	q, ok := RateQuantile(0.5, series, 0, 60*sec)
	if !ok || !near(q, 0.1+0.4*0.5) {
		t.Fatalf("RateQuantile = %v, %v", q, ok)
	}
	if _, ok := RateQuantile(0.5, series, 100*sec, 200*sec); ok {
		t.Fatal("RateQuantile over an empty window should have no result")
	}
	// Present but without +Inf: a NaN result, not a missing one.
	if q, ok := RateQuantile(0.5, series[:2], 0, 60*sec); !ok || !math.IsNaN(q) {
		t.Fatalf("RateQuantile without +Inf = %v, %v; want NaN, true", q, ok)
	}
}

func TestSumBuckets(t *testing.T) {
	a := []Bucket{{0.1, 1}, {inf, 3}}
	b := []Bucket{{inf, 4}, {0.5, 2}, {0.1, 1}}
	got := SumBuckets(a, b, nil)
	want := []Bucket{{0.1, 2}, {0.5, 2}, {inf, 7}}
	if len(got) != len(want) {
		t.Fatalf("SumBuckets = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SumBuckets = %v, want %v", got, want)
		}
	}
	if SumBuckets() != nil {
		t.Fatal("SumBuckets() should be nil")
	}
}

func TestHistogramMean(t *testing.T) {
	if m, ok := HistogramMean(3, 4); !ok || m != 0.75 {
		t.Fatalf("HistogramMean(3,4) = %v, %v", m, ok)
	}
	if m, ok := HistogramMean(0, 0); ok || !math.IsNaN(m) {
		t.Fatalf("HistogramMean(0,0) = %v, %v", m, ok)
	}
}

func BenchmarkHistogramQuantile(b *testing.B) {
	// vLLM's 22 TTFT bucket bounds plus +Inf.
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0, inf}
	bk := make([]Bucket, len(bounds))
	for i, ub := range bounds {
		bk[i] = Bucket{UpperBound: ub, Count: float64(i * i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		HistogramQuantile(0.95, bk)
	}
}

// BenchmarkRateQuantile720 is histogram_quantile(0.95, rate(x_bucket[1h])) over 23 bucket series
// of 720 samples each (1 h at 5 s).
func BenchmarkRateQuantile720(b *testing.B) {
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0, inf}
	series := make([]BucketSeries, len(bounds))
	for i, ub := range bounds {
		p := make([]Point, 720)
		for j := range p {
			p[j] = Point{T: int64(j) * 5000, V: float64(j * (i + 1))}
		}
		series[i] = BucketSeries{UpperBound: ub, Points: p}
	}
	end := int64(719 * 5000)
	b.ReportAllocs()
	for b.Loop() {
		RateQuantile(0.95, series, end-3600*sec, end)
	}
}

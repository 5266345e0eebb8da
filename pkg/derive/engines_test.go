package derive

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// TestWindowBoundaryAgainstEngines places samples exactly on window starts, where Prometheus 2 and 3 disagree, and
// checks that this package follows Prometheus 3 exactly (#12 item 8):
//
//   - Range selectors: Prometheus 3 selects (t−range, t], excluding a sample exactly at the window's start; 2.42
//     selected [t−range, t] (promql/engine.go matrixIterSlice: `floats[drop].T <= mint` in 3.x, `< mint` in 2.x).
//   - Counter extrapolation (rate, increase): Prometheus 3 first caps the gap to the window start at half the average
//     sample spacing when it exceeds 1.1× that spacing, then clamps it to the counter's zero point; 2.42 clamped
//     first and compared afterwards (PR #13725), so a zero point between avg/2 and 1.1×avg before the first sample
//     extrapolates further in 2.42.
//
// Every expectation is checked three ways: this package's result, Prometheus 3's (identical, to the last bit) and
// Prometheus 2.42's (the stated 2.x value, so the difference is written down next to the test and proven against the
// real server rather than assumed).
func TestWindowBoundaryAgainstEngines(t *testing.T) {
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Minute).UnixMilli()
	a := regular(0, 10, 0, 100, 110, 120, 130, 140, 150) // a sample on every 10 s, the first at the window start
	z := regular(30, 10, 8, 18, 28, 38)                  // born 30 s into the window: zero point 8 s before the first sample
	g := regular(0, 10, 5, 1, 2, 3, 4, 5, 6)             // a gauge, first sample at the window start
	shift := func(p []Point) []Point {
		out := make([]Point, len(p))
		for i, x := range p {
			out[i] = Point{T: base + x.T, V: x.V}
		}
		return out
	}
	var om strings.Builder
	om.WriteString("# TYPE wb counter\n")
	for _, s := range []struct {
		name string
		p    []Point
	}{{"a", a}, {"z", z}} {
		for _, p := range shift(s.p) {
			fmt.Fprintf(&om, "wb_total{s=%q} %s %d\n", s.name, fmtValue(p.V), p.T/1000)
		}
	}
	om.WriteString("# TYPE wb_gauge gauge\n")
	for _, p := range shift(g) {
		fmt.Fprintf(&om, "wb_gauge %s %d\n", fmtValue(p.V), p.T/1000)
	}
	om.WriteString("# EOF\n")

	none := math.NaN() // no result
	at := base + 60*sec
	cases := []struct {
		expr       string
		ours       func() (float64, bool)
		prom3, p2  float64
		difference string
	}{
		{`increase(wb_total{s="a"}[1m])`, func() (float64, bool) { return Increase(shift(a), at-60*sec, at) }, 60, 150,
			"2.42 includes the sample at the window start (0 → 150 over exactly 60 s); 3 sees 100 → 150 over 50 s, extrapolated to 60 s"},
		{`rate(wb_total{s="a"}[1m])`, func() (float64, bool) { return Rate(shift(a), at-60*sec, at) }, 1, 2.5, "as increase, per second"},
		{`irate(wb_total{s="a"}[10s])`, func() (float64, bool) { return IRate(shift(a), at-10*sec, at) }, none, 1,
			"2.42 has two samples (50 s and 60 s); 3 only the one at 60 s, so no result"},
		{`delta(wb_gauge[1m])`, func() (float64, bool) { return Delta(shift(g), at-60*sec, at) }, 6, 1,
			"2.42 sees 5 → 6 over the whole window; 3 sees 1 → 6 over 50 s, extrapolated to 60 s"},
		{`increase(wb_total{s="z"}[1m])`, func() (float64, bool) { return Increase(shift(z), at-60*sec, at) }, 35, 38,
			"no sample on the boundary: extrapolation order. 3 caps the 30 s gap at avg/2 = 5 s (30 × 35/30); 2.42 clamps to the zero point 8 s back first (30 × 38/30)"},
		// A window that does not start on a sample: both agree.
		{`increase(wb_total{s="a"}[55s])`, func() (float64, bool) { return Increase(shift(a), at-55*sec, at) }, 55, 55, "none"},
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, c := range cases {
		v, ok := c.ours()
		if !ok {
			v = none
		}
		if !same(v, c.prom3) && !near(v, c.prom3) {
			t.Errorf("%s: ours %v, want Prometheus 3's %v", c.expr, v, c.prom3)
		}
	}
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus2, promtest.Prometheus3) {
		t.Run(eng.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: om.String()})
			for _, c := range cases {
				vec, err := srv.Query(context.Background(), c.expr, time.UnixMilli(at))
				if err != nil {
					t.Fatal(err)
				}
				got := none
				if len(vec) > 1 {
					t.Fatalf("%s: %d series", c.expr, len(vec))
				} else if len(vec) == 1 {
					got = float64(vec[0].Value)
				}
				want := c.prom3
				if eng == promtest.Prometheus2 {
					want = c.p2
				}
				if eng == promtest.Prometheus3 {
					// Bit for bit: the same operations in the same order.
					if v, ok := c.ours(); ok && !same(v, got) || !ok && !math.IsNaN(got) {
						t.Errorf("%s: ours %v (%v), %s %v", c.expr, v, ok, eng, got)
					}
				}
				if !same(got, want) && !near(got, want) {
					t.Errorf("%s: %s answered %v, the test states %v (difference: %s)", c.expr, eng, got, want, c.difference)
				}
			}
		})
	}
}

package derive

import (
	"math"
	"testing"
)

func TestRatios(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		f    func(a, b float64) (float64, bool)
		a, b float64
		want float64
		ok   bool
	}{
		{"ratio", Ratio, 1, 4, 0.25, true},
		{"ratio zero den", Ratio, 1, 0, nan, false},
		{"ratio 0/0", Ratio, 0, 0, nan, false},
		{"ratio NaN num", Ratio, nan, 1, nan, false},
		{"ratio NaN den", Ratio, 1, nan, nan, false},
		// vllm-project/vllm#9565: acceptance vector [1,0,1,0] → 2/4.
		{"acceptance length", MeanAcceptanceLength, 30, 10, 4, true},
		{"acceptance length none accepted", MeanAcceptanceLength, 0, 10, 1, true},
		{"acceptance length no drafts", MeanAcceptanceLength, 0, 0, nan, false},
		{"blocks", KVUsagePercentFromBlocks, 250, 1000, 75, true},
		{"blocks all free", KVUsagePercentFromBlocks, 1000, 1000, 0, true},
		{"blocks zero total", KVUsagePercentFromBlocks, 0, 0, nan, false},
		{"blocks negative total", KVUsagePercentFromBlocks, 0, -1, nan, false},
		{"blocks NaN total", KVUsagePercentFromBlocks, 0, nan, nan, false},
		{"blocks NaN free", KVUsagePercentFromBlocks, nan, 10, nan, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.f(tc.a, tc.b)
			if ok != tc.ok || !near(got, tc.want) {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

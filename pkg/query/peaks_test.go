package query

import (
	"math"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

// TestPeaksAreRealistic: an MFU query's peaks must lie within MinPeak–MaxPeak; a subnormal peak (5e-324) would
// make every MFU point +Inf and fire an MFU alert.
func TestPeaksAreRealistic(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tflops, tbps float64
		wantError    string
	}{
		{"an H100", 989, 3.35, ""},
		{"the smallest", MinPeak, MinPeak, ""},
		{"subnormal TFLOP/s", 5e-324, 3.35, "peakTflops 5e-324 is not a peak between"},
		{"subnormal TB/s", 989, 5e-324, "peakMemoryTBps 5e-324 is not a peak between"},
		{"below the minimum", MinPeak / 2, 3.35, "is not a peak between"},
		{"zero", 0, 3.35, "is not a peak between"},
		{"NaN", math.NaN(), 3.35, "is not a peak between"},
		{"above the maximum", MaxPeak * 2, 3.35, "is not a peak between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Query{QueryType: measure.TypeMFU, PeakTFLOPS: &tc.tflops, PeakMemoryTBps: &tc.tbps}
			if !q.ReadsPeaks() {
				t.Fatal("an mfu query must read the peaks")
			}
			err := q.Validate()
			if tc.wantError == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("err = %v, want %q", err, tc.wantError)
			}
		})
	}
}

package derive

import (
	"slices"
	"testing"
)

func TestSteps(t *testing.T) {
	tests := []struct {
		name           string
		from, to, step int64
		want           []int64
	}{
		{"inclusive end", 0, 30, 10, []int64{0, 10, 20, 30}},
		{"end between steps", 0, 35, 10, []int64{0, 10, 20, 30}},
		{"single", 5, 5, 10, []int64{5}},
		{"zero step", 0, 10, 0, nil},
		{"negative step", 0, 10, -1, nil},
		{"to before from", 10, 0, 1, nil},
	}
	for _, tc := range tests {
		if got := Steps(tc.from, tc.to, tc.step); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Steps = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEvalRange(t *testing.T) {
	p := regular(0, 10, 0, 10, 20, 30, 40, 50, 60)
	var windows [][2]int64
	got := EvalRange(0, 60*sec, 20*sec, 30*sec, func(s, e int64) (float64, bool) {
		windows = append(windows, [2]int64{s, e})
		return Rate(p, s, e)
	})
	wantWindows := [][2]int64{{-30 * sec, 0}, {-10 * sec, 20 * sec}, {10 * sec, 40 * sec}, {30 * sec, 60 * sec}}
	if !slices.Equal(windows, wantWindows) {
		t.Fatalf("windows = %v, want %v", windows, wantWindows)
	}
	// The first step has a single sample in its window, so no point, as in query_range.
	if len(got) != 3 || got[0].T != 20*sec || got[2].T != 60*sec {
		t.Fatalf("EvalRange = %v", got)
	}
	// At 20 s the series starts at 0 inside the window, so the zero clamp stops extrapolation:
	// 20 over a 30 s range.
	want := []float64{20.0 / 30, 1, 1}
	for i, pt := range got {
		if !near(pt.V, want[i]) {
			t.Fatalf("EvalRange = %v, want values %v", got, want)
		}
	}
}

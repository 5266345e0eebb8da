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

package derive

import (
	"math"
	"testing"
)

func TestConcurrentCapacity(t *testing.T) {
	tests := []struct {
		name                 string
		pool, mean, headroom float64
		want                 float64
		ok                   bool
	}{
		{"headroom 0.3", 320000, 1000, 0.3, 224, true},
		{"no headroom", 320000, 1000, 0, 320, true},
		{"empty pool", 0, 1000, 0.3, 0, true},
		{"zero mean", 320000, 0, 0.3, math.NaN(), false},
		{"NaN mean", 320000, math.NaN(), 0.3, math.NaN(), false},
		{"negative pool", -1, 1000, 0.3, math.NaN(), false},
		{"headroom 1", 320000, 1000, 1, math.NaN(), false},
		{"negative headroom", 320000, 1000, -0.1, math.NaN(), false},
		{"NaN headroom", 320000, 1000, math.NaN(), math.NaN(), false},
		{"Inf pool", math.Inf(1), 1000, 0, math.NaN(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ConcurrentCapacity(tc.pool, tc.mean, tc.headroom)
			if ok != tc.ok || !near(got, tc.want) {
				t.Fatalf("ConcurrentCapacity = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

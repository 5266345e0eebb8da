package derive

import (
	"math"
	"testing"
)

func TestKVPoolTokens(t *testing.T) {
	if got := KVPoolTokens(20000, 16); got != 320000 {
		t.Fatalf("KVPoolTokens = %v", got)
	}
}

func TestMeanTokensPerRequest(t *testing.T) {
	if got, ok := MeanTokensPerRequest(3000, 1000, 4); !ok || got != 1000 {
		t.Fatalf("MeanTokensPerRequest = %v, %v", got, ok)
	}
	if got, ok := MeanTokensPerRequest(0, 0, 0); ok || !math.IsNaN(got) {
		t.Fatalf("MeanTokensPerRequest with no requests = %v, %v", got, ok)
	}
}

func TestConcurrentCapacity(t *testing.T) {
	tests := []struct {
		name                 string
		pool, mean, headroom float64
		want                 float64
		ok                   bool
	}{
		{"default headroom", 320000, 1000, DefaultHeadroom, 224, true},
		{"no headroom", 320000, 1000, 0, 320, true},
		{"empty pool", 0, 1000, DefaultHeadroom, 0, true},
		{"zero mean", 320000, 0, DefaultHeadroom, math.NaN(), false},
		{"NaN mean", 320000, math.NaN(), DefaultHeadroom, math.NaN(), false},
		{"negative pool", -1, 1000, DefaultHeadroom, math.NaN(), false},
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

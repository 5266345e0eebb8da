package derive

import (
	"math"
	"testing"
)

func TestDPBalance(t *testing.T) {
	tests := []struct {
		name  string
		ranks []RankLoad
		want  Balance
		ok    bool
	}{
		{"empty", nil, Balance{}, false},
		{"single", []RankLoad{{"0", 5, 0}}, Balance{Ranks: 1, Mean: 5, Max: 5, MaxRank: "0", MaxOverMean: 1}, true},
		{"even", []RankLoad{{"0", 8, 0}, {"1", 8, 1}, {"2", 8, 0}, {"3", 8, 0}},
			Balance{Ranks: 4, Mean: 8, Max: 8, MaxRank: "0", MaxOverMean: 1}, true},
		// vllm-project/vllm#48808: running 27/5/0/0. mean 8, population std sqrt(((19)²+3²+8²+8²)/4).
		{"skewed with queue", []RankLoad{{"0", 27, 40}, {"1", 5, 0}, {"2", 0, 0}, {"3", 0, 0}},
			Balance{Ranks: 4, Mean: 8, Max: 27, MaxRank: "0", MaxOverMean: 27.0 / 8,
				CV: math.Sqrt((19*19+3*3+8*8+8*8)/4.0) / 8, IdleWhileWaiting: 2}, true},
		{"skewed without queue", []RankLoad{{"0", 27, 0}, {"1", 5, 0}, {"2", 0, 0}, {"3", 0, 0}},
			Balance{Ranks: 4, Mean: 8, Max: 27, MaxRank: "0", MaxOverMean: 27.0 / 8,
				CV: math.Sqrt((19*19+3*3+8*8+8*8)/4.0) / 8}, true},
		// A rank waiting on itself (e.g. blocked on KV transfer) is not idle capacity for others.
		{"only idle rank waits", []RankLoad{{"0", 0, 3}, {"1", 4, 0}},
			Balance{Ranks: 2, Mean: 2, Max: 4, MaxRank: "1", MaxOverMean: 2, CV: 1}, true},
		{"two idle ranks both waiting", []RankLoad{{"0", 0, 3}, {"1", 0, 1}},
			Balance{Ranks: 2, Mean: 0, Max: 0, MaxRank: "0", MaxOverMean: 1, CV: 0, IdleWhileWaiting: 2}, true},
		{"all idle", []RankLoad{{"b", 0, 0}, {"a", 0, 0}},
			Balance{Ranks: 2, Max: 0, MaxRank: "a", MaxOverMean: 1}, true},
		{"tie picks smallest rank", []RankLoad{{"3", 2, 0}, {"1", 2, 0}, {"2", 1, 0}},
			Balance{Ranks: 3, Mean: 5.0 / 3, Max: 2, MaxRank: "1", MaxOverMean: 2 / (5.0 / 3),
				CV: math.Sqrt((2*(1.0/3)*(1.0/3)+(2.0/3)*(2.0/3))/3) / (5.0 / 3)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DPBalance(tc.ranks)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if got.Ranks != tc.want.Ranks || got.MaxRank != tc.want.MaxRank || got.IdleWhileWaiting != tc.want.IdleWhileWaiting ||
				!near(got.Mean, tc.want.Mean) || !near(got.Max, tc.want.Max) ||
				!near(got.MaxOverMean, tc.want.MaxOverMean) || !near(got.CV, tc.want.CV) {
				t.Fatalf("DPBalance = %+v\nwant        %+v", got, tc.want)
			}
		})
	}
}

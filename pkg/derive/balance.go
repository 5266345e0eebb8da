package derive

import "math"

// RankLoad is the load of one data-parallel rank (the `engine` label of vLLM V1 metrics) at one
// instant: Load is normally vllm:num_requests_running, Waiting vllm:num_requests_waiting.
type RankLoad struct {
	Rank    string
	Load    float64
	Waiting float64
}

// Balance summarises how evenly load is spread over the DP ranks of one deployment.
type Balance struct {
	// Ranks is the number of ranks considered.
	Ranks int
	// Mean is the arithmetic mean of Load over all ranks.
	Mean float64
	// Max is the largest Load; MaxRank is its rank (the lexically smallest one on ties).
	Max     float64
	MaxRank string
	// MaxOverMean is Max / Mean: 1 when perfectly even, Ranks when one rank carries everything.
	// Defined as 1 when Mean is 0, because every rank then carries the same (zero) load.
	MaxOverMean float64
	// CV is the coefficient of variation, population standard deviation of Load (divided by
	// Ranks, not Ranks−1: the ranks are the whole population, not a sample) over Mean.
	// Defined as 0 when Mean is 0.
	CV float64
	// IdleWhileWaiting counts ranks with Load == 0 while at least one OTHER rank has Waiting > 0:
	// capacity that sits unused while requests queue elsewhere, the symptom reported in
	// vllm-project/vllm#36748 and #48808.
	IdleWhileWaiting int
}

// DPBalance computes Balance over ranks; loads are expected to be non-negative gauges.
// ok is false for an empty slice. NaN loads propagate into Mean, MaxOverMean and CV.
func DPBalance(ranks []RankLoad) (Balance, bool) {
	if len(ranks) == 0 {
		return Balance{}, false
	}
	b := Balance{Ranks: len(ranks), Max: ranks[0].Load, MaxRank: ranks[0].Rank}
	var sum float64
	waitingRanks := 0
	for i, r := range ranks {
		sum += r.Load
		if i > 0 && (r.Load > b.Max || (r.Load == b.Max && r.Rank < b.MaxRank)) {
			b.Max, b.MaxRank = r.Load, r.Rank
		}
		if r.Waiting > 0 {
			waitingRanks++
		}
	}
	n := float64(len(ranks))
	b.Mean = sum / n
	var sq float64
	for _, r := range ranks {
		d := r.Load - b.Mean
		sq += d * d
	}
	std := math.Sqrt(sq / n)
	if b.Mean == 0 {
		b.MaxOverMean, b.CV = 1, 0
	} else {
		b.MaxOverMean = b.Max / b.Mean
		b.CV = std / b.Mean
	}
	for _, r := range ranks {
		others := waitingRanks
		if r.Waiting > 0 {
			others--
		}
		if r.Load == 0 && others > 0 {
			b.IdleWhileWaiting++
		}
	}
	return b, true
}

package derive

import "math"

// Ratio returns num/den, or NaN and ok=false when den is 0 or either input is NaN. PromQL would
// return NaN for 0/0 but ±Inf for x/0; a ratio panel is better served by "no data" than by Inf.
func Ratio(num, den float64) (float64, bool) {
	if den == 0 || math.IsNaN(num) || math.IsNaN(den) {
		return math.NaN(), false
	}
	return num / den, true
}

// MeanAcceptanceLength returns 1 + accepted tokens / drafts (the 1 is the bonus token every
// verification step emits), from increases of vllm:spec_decode_num_accepted_tokens_total and
// vllm:spec_decode_num_drafts_total over one window. ok is false with NaN when there were no
// drafts; vLLM's console logger prints 1 in that case, but PromQL yields NaN and so do we.
func MeanAcceptanceLength(acceptedTokens, drafts float64) (float64, bool) {
	r, ok := Ratio(acceptedTokens, drafts)
	if !ok {
		return r, false
	}
	return 1 + r, true
}

// KVUsagePercentFromBlocks returns (1 − free/total) × 100 from Ascend msServiceProfiler's
// free_kvcache_blocks and total_kvcache_blocks gauges. ok is false when total is not positive.
func KVUsagePercentFromBlocks(free, total float64) (float64, bool) {
	if !(total > 0) || math.IsNaN(free) {
		return math.NaN(), false
	}
	return (1 - free/total) * 100, true
}

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

// AcceptanceRate returns the speculative-decoding acceptance rate, accepted / draft tokens, from
// the increases (or rates) over one window of vllm:spec_decode_num_accepted_tokens_total and
// vllm:spec_decode_num_draft_tokens_total — vLLM's own PromQL and compute_acceptance_rate.
// ok is false when no draft tokens were proposed.
func AcceptanceRate(acceptedTokens, draftTokens float64) (float64, bool) {
	return Ratio(acceptedTokens, draftTokens)
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

// PrefixCacheHitRate returns hits / queries from the increases over one window of
// vllm:prefix_cache_hits_total and vllm:prefix_cache_queries_total (both in tokens since vLLM V1
// 0.9). ok is false when no tokens were queried.
func PrefixCacheHitRate(hits, queries float64) (float64, bool) {
	return Ratio(hits, queries)
}

// KVUsagePercent converts vllm:kv_cache_usage_perc (V1) or vllm:gpu_cache_usage_perc (V0), which
// despite their names are 0–1 fractions, to percent.
func KVUsagePercent(fraction float64) float64 {
	return fraction * 100
}

// KVUsagePercentFromBlocks returns (1 − free/total) × 100 from Ascend msServiceProfiler's
// free_kvcache_blocks and total_kvcache_blocks gauges. ok is false when total is not positive.
func KVUsagePercentFromBlocks(free, total float64) (float64, bool) {
	if !(total > 0) || math.IsNaN(free) {
		return math.NaN(), false
	}
	return (1 - free/total) * 100, true
}

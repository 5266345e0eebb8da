package derive

import "math"

// DefaultHeadroom is the share of the KV pool ConcurrentCapacity keeps free by default, for
// bursts, prompt-length variance and block fragmentation.
const DefaultHeadroom = 0.30

// KVPoolTokens returns the KV-cache pool size in tokens, num_gpu_blocks × block_size, both read
// from the vllm:cache_config_info labels of one engine.
func KVPoolTokens(numGPUBlocks, blockSize float64) float64 {
	return numGPUBlocks * blockSize
}

// MeanTokensPerRequest returns (promptTokens + generationTokens) / requests, where the inputs are
// increases over one window of vllm:request_prompt_tokens_sum, vllm:request_generation_tokens_sum
// and vllm:request_prompt_tokens_count (both histograms observe once per finished request, so
// either _count serves). ok is false when no request finished in the window.
func MeanTokensPerRequest(promptTokens, generationTokens, requests float64) (float64, bool) {
	return Ratio(promptTokens+generationTokens, requests)
}

// ConcurrentCapacity returns how many requests of the mean size fit in the KV pool at once while
// keeping the headroom fraction free: poolTokens / meanTokensPerRequest × (1 − headroom).
// Pass DefaultHeadroom unless the operator configured another value. ok is false unless
// poolTokens >= 0, meanTokensPerRequest > 0 and 0 <= headroom < 1.
func ConcurrentCapacity(poolTokens, meanTokensPerRequest, headroom float64) (float64, bool) {
	if !(poolTokens >= 0) || !(meanTokensPerRequest > 0) || !(headroom >= 0 && headroom < 1) ||
		math.IsInf(poolTokens, 0) || math.IsInf(meanTokensPerRequest, 0) {
		return math.NaN(), false
	}
	return poolTokens / meanTokensPerRequest * (1 - headroom), true
}

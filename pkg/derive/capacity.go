package derive

import "math"

// ConcurrentCapacity returns how many requests of the mean size fit in the KV pool at once while
// keeping the headroom fraction free: poolTokens / meanTokensPerRequest × (1 − headroom).
// The query's headroom defaults to query.DefaultHeadroom. ok is false unless
// poolTokens >= 0, meanTokensPerRequest > 0 and 0 <= headroom < 1.
func ConcurrentCapacity(poolTokens, meanTokensPerRequest, headroom float64) (float64, bool) {
	if !(poolTokens >= 0) || !(meanTokensPerRequest > 0) || !(headroom >= 0 && headroom < 1) ||
		math.IsInf(poolTokens, 0) || math.IsInf(meanTokensPerRequest, 0) {
		return math.NaN(), false
	}
	return poolTokens / meanTokensPerRequest * (1 - headroom), true
}

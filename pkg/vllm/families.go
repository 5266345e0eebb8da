package vllm

import (
	"regexp"
	"strings"
)

// FamilyPrefixes start the names of every family InferScope reads — vLLM's (vllm: and the Ascend profiler's
// vllm_), Dynamo's, LMCache's (lmcache: and the multi-process lmcache_mp_) and vLLM's under Ray Serve (ray_vllm) — so
// direct mode keeps just these from a scrape and Prometheus mode asks the server for just these.
var FamilyPrefixes = []string{"vllm:", "vllm_", "dynamo_", "lmcache:", "lmcache_", "ray_vllm"}

// ReadsFamily reports whether a family or sample name starts with one of FamilyPrefixes.
func ReadsFamily(name string) bool {
	for _, p := range FamilyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// FamilySelector is FamilyPrefixes as a PromQL series selector.
var FamilySelector = func() string {
	alts := make([]string, len(FamilyPrefixes))
	for i, p := range FamilyPrefixes {
		alts[i] = regexp.QuoteMeta(p) + ".+"
	}
	return `{__name__=~"` + strings.Join(alts, "|") + `"}`
}()

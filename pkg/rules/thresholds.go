// Package rules is the one table of InferScope's alerting and diagnosis: the thresholds, the advice (likely cause
// and the knob to turn) and the provisioned alert rules with their runbooks. The alert rules YAML
// (provisioning/alerting), docs/runbooks.md and the README's thresholds table are generated from it, and the
// diagnosis (pkg/query) compares with the same thresholds, so a threshold changes in one place.
package rules

import (
	"strconv"
	"strings"
)

// Threshold is one number a rule compares a measure with.
type Threshold struct {
	// Name says what is compared, e.g. "KV-cache usage".
	Name  string
	Value float64
	// Unit is how Value reads: "%", "s", "requests", "share" (0–1), "×", "/s" or "tokens".
	Unit string
}

// Text is the threshold as the README and runbooks write it, e.g. "90 %", "500 ms", "85.6 %" for a share.
func (t Threshold) Text() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch t.Unit {
	case "s":
		if t.Value < 1 {
			return num(t.Value*1000) + " ms"
		}
		return num(t.Value) + " s"
	case "share":
		return num(roundTo(t.Value*100, 6)) + " %"
	case "×":
		return num(t.Value) + "×"
	case "":
		return num(t.Value)
	}
	return num(t.Value) + " " + t.Unit
}

// Number is the threshold as an alert expression writes it.
func (t Threshold) Number() string { return strconv.FormatFloat(t.Value, 'f', -1, 64) }

func roundTo(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// The thresholds. The burn-rate bounds follow the Google SRE workbook's multi-window, multi-burn-rate alerts against
// 99 % objectives: 14.4× burns a 30-day budget in 2 days, 6× in 5 days.
var (
	KVUsageHigh         = Threshold{"KV-cache usage", 90, "%"}
	DecodeKVCritical    = Threshold{"KV-cache usage of a decode instance", 95, "%"}
	WaitingHigh         = Threshold{"requests waiting", 10, "requests"}
	PrefillWaitingHigh  = Threshold{"requests waiting on a prefill instance", 5, "requests"}
	PreemptionsFloor    = Threshold{"preemptions per second (floor)", 0.05, "/s"}
	PreemptionsRise     = Threshold{"preemptions against their 30-minute mean", 1.5, "×"}
	TTFTTarget          = Threshold{"TTFT SLO target", 0.5, "s"}
	TTFTP95High         = Threshold{"TTFT p95", 0.5, "s"}
	TTFTP99Extreme      = Threshold{"TTFT p99", 5, "s"}
	DPImbalance         = Threshold{"DP rank load max ÷ mean", 2, "×"}
	KVTransferP95Slow   = Threshold{"NIXL KV transfer p95", 0.5, "s"}
	LMCacheHitRateLow   = Threshold{"LMCache hit rate", 0.2, "share"}
	TTFTFastBurn        = Threshold{"TTFT SLO attainment, fast burn (14.4× on 99 %)", 0.856, "share"}
	TTFTSlowBurn        = Threshold{"TTFT SLO attainment, slow burn (6× on 99 %)", 0.94, "share"}
	ErrorFastBurn       = Threshold{"failed or aborted share, fast burn (14.4× on 1 %)", 0.144, "share"}
	ErrorSlowBurn       = Threshold{"failed or aborted share, slow burn (6× on 1 %)", 0.06, "share"}
	FailedShareHigh     = Threshold{"failed or aborted share", 0.05, "share"}
	PrefixHitRateLow    = Threshold{"prefix-cache hit rate (tuning hint)", 0.4, "share"}
	PrefixHitRateAlert  = Threshold{"prefix-cache hit rate (alert)", 0.1, "share"}
	OffloadCPUThrash    = Threshold{"KV offload CPU cache usage", 95, "%"}
	ShortOutputTokens   = Threshold{"generated tokens per request (short outputs)", 32, "tokens"}
	LengthFinishShare   = Threshold{"share of requests stopped at max_tokens", 0.5, "share"}
	SpecAcceptanceLow   = Threshold{"speculative-decoding acceptance rate", 0.5, "share"}
	SpecAcceptanceDrop  = Threshold{"speculative-decoding acceptance against its 30-minute mean", 0.5, "×"}
	SpecAcceptanceFloor = Threshold{"speculative-decoding acceptance rate (collapse floor)", 0.3, "share"}
	MigrationsHigh      = Threshold{"Dynamo migrations per second", 0.1, "/s"}
	DynamoQueuedHigh    = Threshold{"requests queued in Dynamo's frontend", 20, "requests"}
	HTTP5xxShareHigh    = Threshold{"share of the API server's HTTP requests answered 5xx", 5, "%"}
	ServingEnginesMin   = Threshold{"engines serving a model (fewer fires)", 1, ""}
	PDImbalanceHigh     = Threshold{"running requests per prefill instance ÷ per decode instance", 3, "×"}
)

// Thresholds lists every threshold, in the README table's order.
var Thresholds = []*Threshold{
	&KVUsageHigh, &DecodeKVCritical, &WaitingHigh, &PrefillWaitingHigh, &PreemptionsFloor, &PreemptionsRise,
	&TTFTTarget, &TTFTP95High, &TTFTP99Extreme, &TTFTFastBurn, &TTFTSlowBurn, &ErrorFastBurn, &ErrorSlowBurn,
	&FailedShareHigh, &DPImbalance, &KVTransferP95Slow, &LMCacheHitRateLow, &PrefixHitRateLow, &PrefixHitRateAlert,
	&OffloadCPUThrash, &ShortOutputTokens, &LengthFinishShare, &SpecAcceptanceLow, &SpecAcceptanceDrop,
	&SpecAcceptanceFloor, &MigrationsHigh, &DynamoQueuedHigh, &HTTP5xxShareHigh, &ServingEnginesMin, &PDImbalanceHigh,
}

package promapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// storeFailed matches what a Thanos querier says of a store (a sidecar, store gateway, receiver or another querier)
// that failed while answering: a warning when it answers partially, the error when partial answers are refused. The
// store is named as its endpoint's String(), "Addr: <host:port> MinTime: … MaxTime: …", after its external labels
// in "fetch series for {…} Addr: …" (thanos-io/thanos v0.42.5 pkg/store/proxy.go and proxy_merge.go,
// pkg/query/endpointset.go endpointRef.String).
var storeFailed = regexp.MustCompile(`(?:receive series from|failed to receive any data in \S+ from|fetch label (?:names|values) from store|fetch series for .*?) Addr: (\S+)`)

// VictoriaPartialWarning is among an answer's warnings when VictoriaMetrics cluster marked it "isPartial": some
// vmstorage nodes did not answer.
const VictoriaPartialWarning = "inferscope: VictoriaMetrics answered isPartial"

// FailedStores lists the stores a server's text (a warning or an error) says failed, in order, each once; ok is
// whether the text is about a failed store at all (Thanos names it, VictoriaMetrics cluster does not).
func FailedStores(text string) (stores []string, ok bool) {
	if text == VictoriaPartialWarning {
		return nil, true
	}
	for _, m := range storeFailed.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(stores, m[1]) {
			stores = append(stores, m[1])
		}
	}
	return stores, len(stores) > 0
}

// PartialNotice says an answer leaves out stores that failed (named when the server named them): its sums, rates
// and counts miss their series and come out too low.
func PartialNotice(stores []string) string {
	which := "some of its stores"
	if len(stores) > 0 {
		which = "store " + storeNames(stores)
	}
	return fmt.Sprintf("Partial answer: the server could not read %s, so this answer leaves out its series (sums, rates and counts come out too low). "+
		"Check that store; to get an error instead of partial numbers, turn on %q in the data source's settings", which, DenyPartialSetting)
}

// DenyPartialSetting is the data source setting that refuses partial answers, as the config editor labels it.
const DenyPartialSetting = "Refuse partial answers"

// PartialRefusedMessage is the error of a query a server refused to answer partially (DenyPartial) because stores
// failed.
func PartialRefusedMessage(stores []string) string {
	which := "a store behind the server"
	if len(stores) > 0 {
		which = "store " + storeNames(stores)
	}
	return fmt.Sprintf("%s failed and partial answers are refused (%q is on in the data source's settings)", which, DenyPartialSetting)
}

// WarningNotices turns the warnings of one query's answers into the notices the user reads: every failed store,
// and the stores known down (DownStores), into one PartialNotice, Prometheus 3's annotations (already saying
// "PromQL info:" or "PromQL warning:") and other server warnings each once; truncated reports TruncatedWarning
// among them.
func WarningNotices(warns, down []string) (notices []string, truncated bool) {
	stores := slices.Clone(down)
	partial := len(down) > 0
	seen := map[string]bool{}
	for _, w := range warns {
		if seen[w] {
			continue
		}
		seen[w] = true
		if s, ok := FailedStores(w); ok {
			partial = true
			for _, st := range s {
				if !slices.Contains(stores, st) {
					stores = append(stores, st)
				}
			}
			continue
		}
		switch {
		case w == TruncatedWarning:
			truncated = true
		case strings.HasPrefix(w, "PromQL "):
			notices = append(notices, "Prometheus: "+w)
		default:
			notices = append(notices, "Prometheus warning: "+w)
		}
	}
	if partial {
		notices = append([]string{PartialNotice(stores)}, notices...)
	}
	return notices, truncated
}

// denyPartial adds the parameters that make a server refuse to answer partially: Thanos's partial_response=false
// and VictoriaMetrics cluster's deny_partial_response=1 (servers that know neither ignore them).
func denyPartial(params map[string][]string) {
	params["partial_response"] = []string{"false"}
	params["deny_partial_response"] = []string{"1"}
}

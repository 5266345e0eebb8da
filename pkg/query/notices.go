package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Who holds the names a query reads, as EmptyNotice says it.
const (
	HolderEndpoints  = "the selected endpoints expose"
	HolderPrometheus = "the Prometheus server holds"
)

// EmptyNotice says why a query that selected endpoints has no series. exposes reports whether holder (HolderEndpoints
// in direct mode, HolderPrometheus) has a signal under one of its names. Names held with nothing counted in the range
// are not names missing: "no transfers in range" (or events) is said then; where every vLLM name the measures read is
// in no release, the notice says which vLLM they need, and where they are all vLLM names of later releases than the
// oldest read, from which release (and with what the entries need besides) they exist.
func EmptyNotice(q Query, exposes func(vllm.Signal) bool, holder string) string {
	what := string(q.QueryType) + "/" + strings.Join(q.MeasureList(), ",")
	var sigs []vllm.Signal
	var needs []string
	for _, e := range measure.Select(q.QueryType, q.Measure) {
		sigs = append(sigs, e.Signals()...)
		for _, n := range e.Needs {
			if !slices.Contains(needs, n) {
				needs = append(needs, n)
			}
		}
	}
	if exposes != nil {
		for _, s := range sigs {
			if exposes(s) {
				none := "no events in range"
				if q.QueryType == TypeKVOffload || q.QueryType == TypeKVTransfer {
					none = "no transfers in range"
				}
				return fmt.Sprintf("%s: %s what %s reads and nothing was counted in this range", none, holder, what)
			}
		}
	}
	first, unreleased := releaseNeed(sigs)
	if unreleased {
		return fmt.Sprintf("%s needs vLLM newer than %s (its metrics are on vLLM main only)", what, vllm.NewestRelease())
	}
	missing := fmt.Sprintf("no selected endpoint exposes what %s needs", what)
	if holder == HolderPrometheus {
		missing = fmt.Sprintf("the Prometheus server holds none of the metrics %s needs", what)
	}
	if first == "" {
		return missing
	}
	with := ""
	if len(needs) > 0 {
		with = " with " + strings.Join(needs, " or ")
	}
	return fmt.Sprintf("%s needs vLLM %s or newer%s: %s", what, first, with, missing)
}

// oldestRead is the first vLLM release of the provenance table ("0.6.0" there means 0.6.0 or earlier), from which
// no release need is worth saying.
const oldestRead = "0.6.0"

// releaseNeed looks at the vLLM names the signals have (Ray Serve's re-exports aside): unreleased when every one is in
// no release; else, when every name is vLLM's and all are released after oldestRead, the first release that has one
// of them; else "".
func releaseNeed(sigs []vllm.Signal) (first string, unreleased bool) {
	onlyUnreleased, onlyVLLM, seen := true, true, false
	for _, s := range sigs {
		for _, n := range s.Names {
			o, ok := vllm.Provenance(n)
			switch {
			case ok && o.Ray:
				continue
			case !ok || o.Project != vllm.ProjectVLLM:
				onlyVLLM = false
				continue
			}
			seen = true
			if o.Unreleased != "" {
				continue
			}
			onlyUnreleased = false
			if first == "" || vllm.CompareReleases(o.First, first) < 0 {
				first = o.First
			}
		}
	}
	switch {
	case !seen:
		return "", false
	case onlyUnreleased:
		return "", true
	case !onlyVLLM || vllm.CompareReleases(first, oldestRead) <= 0:
		return "", false
	}
	return first, false
}

package query

import (
	"fmt"
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
// in no release, the notice says which vLLM they need.
func EmptyNotice(q Query, exposes func(vllm.Signal) bool, holder string) string {
	what := string(q.QueryType) + "/" + strings.Join(q.MeasureList(), ",")
	var sigs []vllm.Signal
	for _, e := range measure.Select(q.QueryType, q.Measure) {
		sigs = append(sigs, e.Signals()...)
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
	if n := unreleasedNeed(sigs); n != "" {
		return fmt.Sprintf("%s needs %s", what, n)
	}
	if holder == HolderPrometheus {
		return fmt.Sprintf("the Prometheus server holds none of the metrics %s needs", what)
	}
	return fmt.Sprintf("no selected endpoint exposes what %s needs", what)
}

// unreleasedNeed is "vLLM newer than <the newest release read>" when every vLLM name the signals have is in no
// release (the provenance table), else "".
func unreleasedNeed(sigs []vllm.Signal) string {
	unreleased := false
	for _, s := range sigs {
		for _, n := range s.Names {
			o, ok := vllm.Provenance(n)
			if !ok || o.Ray || o.Project != vllm.ProjectVLLM {
				continue
			}
			if o.Unreleased == "" {
				return ""
			}
			unreleased = true
		}
	}
	if !unreleased {
		return ""
	}
	return "vLLM newer than " + vllm.NewestRelease() + " (its metrics are on vLLM main only)"
}

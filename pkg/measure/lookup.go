package measure

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Lookup returns the entry of one measure of a query type.
func Lookup(t Type, name string) (*Entry, bool) {
	for _, e := range Catalog {
		if e.Type == t && e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Select returns the entries a query returns: the measure it names, or its type's defaults when it names none.
func Select(t Type, name string) []*Entry {
	var out []*Entry
	for _, e := range Catalog {
		if e.Type == t && (e.Name == name || name == "" && e.Default) {
			out = append(out, e)
		}
	}
	return out
}

// Names lists a query type's measures in catalog order.
func Names(t Type) []string {
	var out []string
	for _, e := range Catalog {
		if e.Type == t {
			out = append(out, e.Name)
		}
	}
	return out
}

// Defaults lists the measures a query of type t without a measure returns.
func Defaults(t Type) []string {
	var out []string
	for _, e := range Select(t, "") {
		out = append(out, e.Name)
	}
	return out
}

// Known reports whether t is a query type.
func Known(t Type) bool {
	for _, ti := range Types {
		if ti.Type == t {
			return true
		}
	}
	return false
}

// TypeNames lists the query types in the editor's order.
func TypeNames() []string {
	out := make([]string, len(Types))
	for i, ti := range Types {
		out[i] = string(ti.Type)
	}
	return out
}

// LatencySignal is the histogram a latency query's metric names: a family, or timer:<vllm_profiling_* histogram>.
func LatencySignal(metric string) (vllm.Signal, error) {
	for _, f := range Families {
		if f.Name == metric {
			return f.Signal, nil
		}
	}
	name, isTimer := strings.CutPrefix(metric, TimerPrefix)
	if !isTimer {
		return vllm.Signal{}, fmt.Errorf("latency metric %q is unknown", metric)
	}
	sig, ok := vllm.TimerSignal(name)
	if !ok {
		return vllm.Signal{}, fmt.Errorf("timer %q is not a vllm_profiling_* histogram", name)
	}
	return sig, nil
}

// Resolve is the output's field name and unit for a query whose metric is metric, of unit metricUnit.
func (o Output) Resolve(metric, metricUnit string) (name, unit string) {
	name = strings.ReplaceAll(o.Name, MetricName, metric)
	unit = o.Unit
	if unit == MetricUnit {
		unit = metricUnit
	}
	return name, unit
}

// Outputs are the outputs a query returns for its entries: all of them, or only the one named score (a
// dp_balance score, without the per-rank loads, for alert rules and balance panels).
func Outputs(entries []*Entry, score string) []Output {
	var out []Output
	for _, e := range entries {
		for _, o := range e.Outputs {
			if score == "" || o.Name == score {
				out = append(out, o)
			}
		}
	}
	return out
}

// ReadsRates reports whether the outputs' formulas take rates over a window (of counters, or a histogram's buckets,
// sum or count), where engines' rate semantics differ.
func ReadsRates(outs []Output) bool {
	return Reads(outs, func(n Node) bool { return shapeOf(n).rates })
}

// ReadsQuantiles reports whether the outputs' formulas read the query's quantiles.
func ReadsQuantiles(outs []Output) bool {
	return Reads(outs, func(n Node) bool { return slices.Contains(shapeOf(n).fields, FieldQuantiles) })
}

// ReadsNode reports whether any of the outputs has a node of type T, e.g. ReadsNode[*PD].
func ReadsNode[T Node](outs []Output) bool {
	return Reads(outs, func(n Node) bool { _, ok := n.(T); return ok })
}

// Reads reports whether any of the outputs has a node for which f is true.
func Reads(outs []Output, f func(Node) bool) bool {
	found := false
	for _, o := range outs {
		Walk(o.Node, func(n Node) { found = found || f(n) })
	}
	return found
}

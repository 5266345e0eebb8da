package promapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Large fleets make the server compute the same rates on every refresh of every viewer: rate() over every bucket
// series of a latency histogram, a window of samples each, per panel. Recording rules compute each rate once per
// evaluation; a query then reads one recorded sample per step. The rules below are generated from the catalog, and
// Generate reads a recorded series wherever the server holds it at the query's window.

// RecordedPrefix starts the name of every series the generated recording rules write.
const RecordedPrefix = "inferscope:"

// RecordedWindows are the rate windows the rules record: those the shipped dashboards ask for. A query at another
// window computes its rates as before.
var RecordedWindows = []time.Duration{time.Minute, 5 * time.Minute}

// RecordedName is the series a generated rule writes for rate(name[window]), every label of the rated series kept.
func RecordedName(name string, window time.Duration) string {
	return RecordedPrefix + name + ":rate" + model.Duration(window).String()
}

// Summed series: a rate summed over a fleet's endpoints and engines, every other label kept (model_name, le,
// finished_reason, …). A query per model or for the fleet that selects every endpoint and engine reads these: for a
// latency histogram tens of series instead of one per bucket and engine, tens of thousands on a large fleet.

// EndpointLabels are the labels a summed series drops: those that tell one endpoint's (or engine's) series from
// another's. A query that filters or groups by one of them reads the per-series rates.
var EndpointLabels = []string{"instance", "job", "engine", "pid"}

// SummedName is the series a generated rule writes for sum without (EndpointLabels) (RecordedName(name, window)).
func SummedName(name string, window time.Duration) string {
	return RecordedName(name, window) + ":sum_endpoints"
}

// RuleSet chooses the rules RuleGroupsOf writes.
type RuleSet int

const (
	// AllRules are the rates and their sums, each window's in one group: the sums follow the rates they read,
	// evaluated in order at the same time, so a sum is exactly that of the recorded rates.
	AllRules RuleSet = iota
	// RateRules are the rates alone.
	RateRules
	// SumRules are the sums alone (for Prometheus's rule importer, which cannot evaluate a rule over another rule's
	// series in one pass).
	SumRules
)

// RatedNames lists, sorted, every sample name the generated PromQL may take a rate of: the catalog's counters, and
// the _bucket, _sum and _count series of its histograms and of every latency family. Ray Serve's copies are left
// out: their servers have their own rules.
func RatedNames() []string {
	seen := map[string]bool{}
	add := func(s vllm.Signal) {
		for _, n := range s.Names {
			if strings.HasPrefix(n, "ray_") {
				continue
			}
			switch s.Kind {
			case vllm.Counter:
				seen[n] = true
			case vllm.Histogram:
				seen[n+"_bucket"], seen[n+"_sum"], seen[n+"_count"] = true, true, true
			}
		}
	}
	for _, e := range measure.Catalog {
		for _, s := range e.Signals() {
			add(s)
		}
	}
	for _, f := range measure.Families {
		add(f.Signal)
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// RuleGroups is the `groups:` list of a Prometheus rules file recording RatedNames at every RecordedWindows and
// their sums over endpoints (SummedName), evaluated every interval (the scrape interval: a recorded rate is then at
// most one scrape older than a computed one), indented by indent spaces.
func RuleGroups(interval time.Duration, indent int) string {
	return RuleGroupsOf(interval, indent, AllRules)
}

// RuleGroupsOf is RuleGroups with only the rules of one set.
func RuleGroupsOf(interval time.Duration, indent int, set RuleSet) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	fmt.Fprintf(&b, "%sgroups:\n", pad)
	rule := func(record, expr string) {
		fmt.Fprintf(&b, "%s      - record: %s\n%s        expr: %s\n", pad, strconv.Quote(record), pad, strconv.Quote(expr))
	}
	for _, w := range RecordedWindows {
		name := "inferscope-rates-" + model.Duration(w).String()
		if set == SumRules {
			name = "inferscope-sums-" + model.Duration(w).String()
		}
		fmt.Fprintf(&b, "%s  - name: %s\n%s    interval: %s\n%s    rules:\n", pad, name, pad, model.Duration(interval), pad)
		if set != SumRules {
			for _, n := range RatedNames() {
				rule(RecordedName(n, w), "rate({__name__="+strconv.Quote(n)+"}["+model.Duration(w).String()+"])")
			}
		}
		if set != RateRules {
			for _, n := range RatedNames() {
				rule(SummedName(n, w), "sum without ("+strings.Join(EndpointLabels, ", ")+") ({__name__="+strconv.Quote(RecordedName(n, w))+"})")
			}
		}
	}
	return b.String()
}

// swapName puts recorded in place of name in a selector sel that Generate printed for name.
func swapName(sel, name, recorded string) string {
	if rest, ok := strings.CutPrefix(sel, name); ok && (rest == "" || rest[0] == '{') {
		return recorded + rest
	}
	return strings.Replace(sel, "__name__="+strconv.Quote(name), "__name__="+strconv.Quote(recorded), 1)
}

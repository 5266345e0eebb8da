package promapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Large fleets make the server compute the same rates on every refresh of every viewer: rate() over every bucket
// series of a latency histogram, a window of samples each, per panel. Recording rules compute each rate once per
// evaluation; a query then reads one recorded sample per step. The rules below are generated from the catalog, and
// Generate reads a recorded series wherever the server holds it at the query's window.

// RecordedPrefix starts the name of every series the generated recording rules write.
const RecordedPrefix = "inferscope:"

// RecordedWindows are the rate windows the rules record: those the shipped dashboards ask for (but the sleep-mode
// panel's, TestRecordedWindowsCoverTheDashboards). A query at another window computes its rates as before.
var RecordedWindows = []time.Duration{time.Minute, 5 * time.Minute}

// BucketWindows are the RecordedWindows at which the rules also record histogram buckets and their quantiles: the
// shipped dashboards read latency histograms over 5 minutes only (1m is the token rates'), and a bucket series'
// rate, its sums and its quantiles are most of what the rules cost the server (a latency histogram has a series per
// bound and engine). Elsewhere a bucket's rate is computed, as without the rules.
var BucketWindows = []time.Duration{5 * time.Minute}

// RecordedName is the series a generated rule writes for rate(name[window]), every label of the rated series kept.
func RecordedName(name string, window time.Duration) string {
	return RecordedPrefix + name + ":rate" + model.Duration(window).String()
}

// Summed series: a rate summed over a fleet's endpoints and engines, every other label kept (model_name, le,
// finished_reason, …). A query per model or for the fleet that selects every endpoint and engine reads these: for a
// latency histogram tens of series instead of one per bucket and engine, tens of thousands on a large fleet. The
// rules sum the per-endpoint sums (below), which hold half the series the rates do on a fleet of two engines per
// endpoint.

// EndpointLabels are the labels a summed series drops: those that tell one endpoint's (or engine's) series from
// another's. A query that filters or groups by one of them reads the per-series rates.
var EndpointLabels = []string{"instance", "job", "engine", "pid"}

// SummedName is the series a generated rule writes for sum without (EndpointLabels) (RecordedName(name, window)).
func SummedName(name string, window time.Duration) string {
	return RecordedName(name, window) + ":sum_endpoints"
}

// Per-endpoint sums: a rate summed over each endpoint's engines, the endpoint's own labels (instance, job) and every
// other label kept. A query per endpoint, or per model over some of the endpoints, reads these: one series per
// endpoint and bucket instead of one per engine and bucket (eight for a DP8 endpoint).

// EngineLabels are the labels a per-endpoint sum drops: those that tell one engine of an endpoint from another. A
// query that filters or groups by one of them reads the per-series rates.
var EngineLabels = []string{"engine", "pid"}

// EndpointSumName is the series a generated rule writes for sum without (EngineLabels) (RecordedName(name, window)).
func EndpointSumName(name string, window time.Duration) string {
	return RecordedName(name, window) + ":sum_engines"
}

// Recorded quantiles: a latency histogram's quantiles per endpoint and model, as the per-endpoint top lists and
// heatmaps of a fleet read them, and per engine, as the diagnosis and the endpoint pages read them. A query at one
// of these quantiles and windows reads one series per group instead of summing every bucket at each step.

// RecordedQuantiles are the quantiles the rules record: those the shipped dashboards and the diagnosis ask per
// endpoint or per engine (TestRecordedQuantilesCoverTheDashboards). Each quantile rule sums every bucket series of
// its histogram at its level again, so a quantile nothing asks there would cost the server that much for nothing;
// per model and for the fleet the quantiles are computed from the sums over endpoints, which are few.
var RecordedQuantiles = []float64{0.95}

// QuantiledFamilies are the latency families (measure.Family.Name) whose quantiles the rules record: those the
// shipped dashboards and the diagnosis ask quantiles of per endpoint or per engine (tpot, which the minimal
// dashboard asks, is itl under its old name).
var QuantiledFamilies = []string{"ttft", "itl"}

// QuantileLevel is a grouping the rules record quantiles at: a latency query's groups at that level (its labels).
type QuantileLevel struct {
	Group  query.Group
	Labels []string
	// From is the recorded rate the rule reads: the per-endpoint sums where the level keeps no engine label.
	From func(name string, window time.Duration) string
}

// QuantileLevels are the levels the rules record quantiles at.
var QuantileLevels = []QuantileLevel{
	{query.GroupEndpoint, []string{"instance", "model_name"}, EndpointSumName},
	{query.GroupEngine, []string{"instance", "model_name", "engine"}, RecordedName},
}

// QuantileName is the series a generated rule writes for histogram_quantile(q, sum by (labels, le)
// (rate(hist_bucket[window]))) at a level, hist a histogram's base name: p95 for 0.95, p999 for 0.999, and the
// level's group (p95_endpoint, p95_engine).
func QuantileName(hist string, q float64, window time.Duration, level query.Group) string {
	digits := strings.TrimPrefix(strconv.FormatFloat(q, 'f', -1, 64), "0.")
	for len(digits) < 2 {
		digits += "0"
	}
	return RecordedPrefix + hist + ":rate" + model.Duration(window).String() + ":p" + digits + "_" + string(level)
}

// QuantiledNames lists, sorted, the histograms (base names) whose quantiles the rules record: vLLM's own names of
// QuantiledFamilies, labelled by engine and model_name as QuantileLevels assume.
func QuantiledNames() []string {
	var out []string
	for _, f := range measure.Families {
		if !slices.Contains(QuantiledFamilies, f.Name) {
			continue
		}
		for _, n := range f.Signal.Names {
			if src, _ := vllm.RankLabel(n); src == "engine" && strings.HasPrefix(n, vllm.VLLMPrefix) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Recorded DP-balance scores: a score of a dp_balance measure per endpoint reads every engine's gauges over the
// query's range several times over (the score's max, mean and the guard against an idle endpoint are each a
// reading; PromQL shares no subexpression), which made the fleet overview's DP-balance panel its costliest in
// Prometheus mode. A rule evaluates the score once per evaluation, and such a query reads one series per endpoint.

// BalanceScore is a dp_balance measure's score the rules record per endpoint.
type BalanceScore struct{ Measure, Score string }

// RecordedBalanceScores are the scores the rules record: those the shipped dashboards and the diagnosis ask per
// endpoint of a measure whose rank load reads gauges only, so that one rule answers every rate window
// (TestRecordedBalanceScoresCoverTheDashboards).
var RecordedBalanceScores = []BalanceScore{
	{measure.DPBalanceRunningWaiting.Name, measure.ScoreMaxOverMean},
	{measure.DPBalanceRunningWaiting.Name, measure.ScoreCV},
	{measure.DPBalanceRunningWaiting.Name, measure.ScoreIdleWhileWaiting},
	{measure.DPBalanceKVUsage.Name, measure.ScoreMaxOverMean},
	{measure.DPBalanceRouterDecodeBlocks.Name, measure.ScoreMaxOverMean},
	{measure.DPBalanceRouterDecodeBlocks.Name, measure.ScoreIdleWhileWaiting},
}

// BalanceScoreName is the series a generated rule writes for a dp_balance measure's score per endpoint.
func BalanceScoreName(b BalanceScore) string {
	return RecordedPrefix + "dp_balance:" + b.Measure + ":" + b.Score + "_endpoint"
}

// balanceScoreQuery is the query whose PromQL a balance score's rule evaluates: the score per endpoint over every
// endpoint, model and engine.
func balanceScoreQuery(b BalanceScore) query.Query {
	return query.Query{QueryType: query.TypeDPBalance, Measure: b.Measure, Score: b.Score, GroupBy: query.GroupEndpoint}
}

// balanceRule is the expression of a balance score's rule: the PromQL Generate writes for its query on a server
// holding every name the measure may read, so that each endpoint answers by its preferred name as it would alone.
func balanceRule(b BalanceScore) (string, error) {
	q := balanceScoreQuery(b)
	if err := q.Validate(); err != nil {
		return "", err
	}
	entry, ok := measure.Lookup(q.QueryType, q.Measure)
	if !ok {
		return "", fmt.Errorf("no dp_balance measure %q", b.Measure)
	}
	names := Names{}
	for _, sig := range entry.Signals() {
		for _, n := range sig.Names {
			names[n] = true
			if sig.Kind == vllm.Histogram {
				names[vllm.BucketName(n)] = true
			}
		}
	}
	exprs, err := Generate(q, names, nil, 0)
	if err != nil {
		return "", err
	}
	if len(exprs) != 1 {
		return "", fmt.Errorf("%s %s: %d expressions, want one", b.Measure, b.Score, len(exprs))
	}
	return exprs[0].PromQL, nil
}

// Recorded bucket layouts: a query reading a histogram's buckets first looks up how many of its series have each
// bound (Discovery.Layouts, at most once per DefaultNamesTTL), over every bucket series of the histogram. On a cold
// dashboard each latency panel waits for that count before it sends its query, and at 256 endpoints each count took
// 200–320 ms of a server busy with the refresh's other queries and the rules. A rule counts them once per
// evaluation, and the lookup reads its few series instead.

// LayoutsName is the series a generated rule writes for the series count of each bucket bound of each of
// LayoutNames (LayoutLabel names the bucket series, le the bound).
const LayoutsName = RecordedPrefix + "bucket_series"

// LayoutLabel holds the bucket name (x_bucket) on LayoutsName.
const LayoutLabel = "histogram"

// LayoutsInterval is the least evaluation interval of the layouts' group: a count over every bucket series of every
// histogram is too costly at each scrape, and the data source asks again only every DefaultNamesTTL.
const LayoutsInterval = 15 * time.Second

// layoutsGroup is the group of the recorded layouts.
const layoutsGroup = RuleGroupPrefix + "layouts"

// LayoutNames lists, sorted, the bucket names whose layouts the rules record: those of BucketedSignals (the
// histograms the shipped queries read by bucket), Ray Serve's copies left out as in RatedNames. Counting the series of
// every histogram would cost the server twice as much at 256 endpoints (0.79 s an evaluation against about 0.4: 138 000
// bucket series, 75 000 of them these); an ad-hoc query's other histograms are counted by the lookup itself.
func LayoutNames() []string {
	var out []string
	for _, s := range BucketedSignals {
		for _, n := range s.Names {
			if !strings.HasPrefix(n, "ray_") && !slices.Contains(out, vllm.BucketName(n)) {
				out = append(out, vllm.BucketName(n))
			}
		}
	}
	slices.Sort(out)
	return out
}

// layoutCount is the PromQL counting the series of each bound of each of the bucket names.
func layoutCount(names []string) string {
	return "count by (__name__, le) ({__name__=~" + strconv.Quote(AnyOf(names)) + "})"
}

// layoutsRule is the expression of the layouts' rule: layoutCount of LayoutNames, the name kept in LayoutLabel (a
// recorded series takes the rule's name).
func layoutsRule() string {
	return "label_replace(" + layoutCount(LayoutNames()) + ", " + strconv.Quote(LayoutLabel) + `, "$1", "__name__", "(.+)")`
}

// EvaluatedName is each generated group's heartbeat: one series per group (EvaluatedGroupLabel names it), written
// by the group's last rule, so a sample of it at t tells that the group's evaluation at t is committed whole, and that
// the group writes nothing stamped at or before t any more (Horizon). Its rule reads nothing: it always has a sample.
const EvaluatedName = RecordedPrefix + "rules_evaluated"

// EvaluatedGroupLabel is the label holding the group's name on EvaluatedName.
const EvaluatedGroupLabel = "rule_group"

// RuleGroupPrefix starts the name of every generated rule group.
const RuleGroupPrefix = "inferscope-"

// balanceGroup is the group of the balance scores.
const balanceGroup = RuleGroupPrefix + "balance"

// RuleSet chooses the rules RuleGroupsOf writes.
type RuleSet int

const (
	// AllRules are the rates, their sums and the quantiles, each window's in one group: each rule follows the
	// rules it reads, evaluated in order at the same time, so a sum is exactly that of the recorded rates.
	AllRules RuleSet = iota
	// RateRules are the rates alone, and the balance scores and the layouts (which read raw series).
	RateRules
	// EngineSumRules are the sums per endpoint alone (for Prometheus's rule importer, which cannot evaluate a rule
	// over another rule's series in one pass).
	EngineSumRules
	// DerivedRules are the sums over endpoints, which read the sums per endpoint, and the recorded quantiles, which
	// read the rates and the sums per endpoint.
	DerivedRules
)

// BucketedSignals are the histograms whose _bucket series the rules record, at BucketWindows: those a shipped
// dashboard, alert rule or the diagnosis reads by bucket (quantiles, SLO attainment, bucket rates) at such a window
// (TestRecordedBucketsCoverTheShippedQueries holds the two to each other). A histogram's bucket rates and their two
// sums are a series per bound and engine each, most of what the rules cost the server, so a histogram that only an
// ad-hoc query reads by bucket (prefill, decode and inference time, the request TPOT, the Ascend profiler's, whose
// panels follow the step) is not recorded: such a query computes its bucket rates, as without the rules, and
// answers the same.
var BucketedSignals = []vllm.Signal{
	vllm.TTFT, vllm.ITL, vllm.E2E, vllm.QueueTime,
	vllm.PromptTokensHist, vllm.GenerationTokensHist, vllm.IterationTokens, vllm.PrefillKVComputed,
	vllm.KVBlockLifetime, vllm.KVBlockIdleBeforeEvict, vllm.KVBlockReuseGap, vllm.NixlXferTime,
}

// RatedNames lists, sorted, every sample name the rules record a rate of: the catalog's counters, the _sum and
// _count series of its histograms and of every latency family, and the _bucket series of BucketedSignals. A
// histogram the catalog only averages (the request parameters) is rated by its _sum and _count alone. Ray Serve's
// copies are left out: their servers have their own rules.
func RatedNames() []string {
	seen := map[string]bool{}
	add := func(s vllm.Signal, buckets bool) {
		for _, n := range s.Names {
			if strings.HasPrefix(n, "ray_") {
				continue
			}
			switch s.Kind {
			case vllm.Counter:
				seen[n] = true
			case vllm.Histogram:
				seen[n+"_sum"], seen[n+"_count"] = true, true
				if buckets {
					seen[n+"_bucket"] = true
				}
			}
		}
	}
	for _, e := range measure.Catalog {
		for _, s := range e.Signals() {
			add(s, false)
		}
	}
	for _, f := range measure.Families {
		add(f.Signal, false)
	}
	for _, s := range BucketedSignals {
		add(s, true)
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// RatedNamesAt is RatedNames at a recorded window: without the _bucket series where the window is not one of
// BucketWindows.
func RatedNamesAt(window time.Duration) []string {
	names := RatedNames()
	if slices.Contains(BucketWindows, window) {
		return names
	}
	return slices.DeleteFunc(names, func(n string) bool { return strings.HasSuffix(n, "_bucket") })
}

// RuleGroups is the `groups:` list of a Prometheus rules file recording RatedNamesAt every RecordedWindows, their
// sums per endpoint (EndpointSumName) and over endpoints (SummedName, from the sums per endpoint), and, at
// BucketWindows, the RecordedQuantiles of QuantiledNames at each of QuantileLevels (QuantileName), evaluated every
// interval (the scrape interval: a recorded rate is then at most one scrape older than a computed one), with the
// balance scores and, at LayoutsInterval or more, the layouts (LayoutsName) in groups of their own, indented by
// indent spaces.
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
	group := func(name string, interval time.Duration) {
		fmt.Fprintf(&b, "%s  - name: %s\n%s    interval: %s\n%s    rules:\n", pad, name, pad, model.Duration(interval), pad)
	}
	// evaluated ends each group with its heartbeat (EvaluatedName), written after the group's other rules.
	evaluated := func(name string) {
		fmt.Fprintf(&b, "%s      - record: %s\n%s        expr: \"vector(1)\"\n%s        labels:\n%s          %s: %s\n", pad,
			strconv.Quote(EvaluatedName), pad, pad, pad, EvaluatedGroupLabel, strconv.Quote(name))
	}
	if set == AllRules || set == RateRules {
		// The balance scores read raw gauges only: a group of their own, at no window.
		group(balanceGroup, interval)
		for _, bs := range RecordedBalanceScores {
			expr, err := balanceRule(bs)
			if err != nil {
				panic("recording rules: " + err.Error()) // the catalog's own measures: TestRecordingRuleFiles fails first
			}
			rule(BalanceScoreName(bs), expr)
		}
		evaluated(balanceGroup)
		// The layouts read raw series only, like the scores, at an interval of their own.
		group(layoutsGroup, max(interval, LayoutsInterval))
		rule(LayoutsName, layoutsRule())
		evaluated(layoutsGroup)
	}
	for _, w := range RecordedWindows {
		names := RatedNamesAt(w)
		name := RuleGroupPrefix + "rates-" + model.Duration(w).String()
		switch set {
		case EngineSumRules:
			name = RuleGroupPrefix + "endpoint-sums-" + model.Duration(w).String()
		case DerivedRules:
			name = RuleGroupPrefix + "derived-" + model.Duration(w).String()
		}
		group(name, interval)
		if set == AllRules || set == RateRules {
			for _, n := range names {
				rule(RecordedName(n, w), "rate({__name__="+strconv.Quote(n)+"}["+model.Duration(w).String()+"])")
			}
		}
		if set == AllRules || set == EngineSumRules {
			for _, n := range names {
				rule(EndpointSumName(n, w), "sum without ("+strings.Join(EngineLabels, ", ")+") ({__name__="+strconv.Quote(RecordedName(n, w))+"})")
			}
		}
		if set == AllRules || set == DerivedRules {
			// The endpoint labels a per-endpoint sum still has: EndpointLabels less the EngineLabels it dropped.
			rest := slices.DeleteFunc(slices.Clone(EndpointLabels), func(l string) bool { return slices.Contains(EngineLabels, l) })
			for _, n := range names {
				rule(SummedName(n, w), "sum without ("+strings.Join(rest, ", ")+") ({__name__="+strconv.Quote(EndpointSumName(n, w))+"})")
			}
			if slices.Contains(BucketWindows, w) {
				for _, l := range QuantileLevels {
					by := strings.Join(append(slices.Clone(l.Labels), "le"), ", ")
					for _, n := range QuantiledNames() {
						for _, q := range RecordedQuantiles {
							rule(QuantileName(n, q, w, l.Group), "histogram_quantile("+strconv.FormatFloat(q, 'g', -1, 64)+", sum by ("+by+
								") ({__name__="+strconv.Quote(l.From(vllm.BucketName(n), w))+"}))")
						}
					}
				}
			}
		}
		evaluated(name)
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

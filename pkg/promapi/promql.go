package promapi

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Expr is one PromQL expression answering one measure of a query.
type Expr struct {
	Measure string
	Unit    string
	// Labels are added to every series of the answer, e.g. quantile="0.95".
	Labels map[string]string
	PromQL string
}

// CacheConfig is one distinct (num_gpu_blocks, block_size) pair of vllm:cache_config_info: PromQL cannot turn a
// label into a value, so the pool size is written into the expression per pair the server holds.
type CacheConfig struct {
	NumGPUBlocks, BlockSize string
}

// Generate returns the PromQL for every measure of a query, using only names the server holds, so the
// expression fits the fleet: V1, deprecated, V0, Ascend or Dynamo names, or an `or` of them per endpoint
// (instance), the preferred name winning where an endpoint exposes several. window is the rate window
// (query.Resolution). Labels follow direct mode: instance is reported as endpoint by the caller.
func Generate(q query.Query, names Names, configs []CacheConfig, window time.Duration) ([]Expr, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	g := &gen{q: q, names: names, configs: configs, w: model.Duration(window).String()}
	g.rankRe, _ = regexp.Compile("^(?:" + q.Engine + ")$")
	var out []Expr
	for _, m := range q.MeasureList() {
		exprs, err := g.measure(m)
		if err != nil {
			return nil, err
		}
		for _, e := range exprs {
			if e.PromQL != "" {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

type gen struct {
	q       query.Query
	names   Names
	configs []CacheConfig
	w       string
	rankRe  *regexp.Regexp
}

func (g *gen) measure(m string) ([]Expr, error) {
	switch g.q.QueryType {
	case query.TypeKVCacheUsage:
		return g.kvCache(m), nil
	case query.TypeSpecDecode:
		return g.specDecode(m), nil
	case query.TypeDPBalance:
		return g.dpBalance(m), nil
	case query.TypeLatency:
		return g.latency(m)
	case query.TypeThroughput:
		return g.throughput(m), nil
	case query.TypeQueue:
		return g.queue(m), nil
	case query.TypeCache:
		return g.cache(m), nil
	case query.TypeCapacity:
		return g.capacity(), nil
	case query.TypeRaw:
		return g.raw(), nil
	}
	return nil, fmt.Errorf("query type %q is not available in Prometheus mode", g.q.QueryType)
}

// held returns the names of a signal the server holds (histograms by base name), preferred first, leaving
// out names without a rank label when the engine filter cannot match an empty rank.
func (g *gen) held(sig vllm.Signal) []string {
	var out []string
	for _, n := range sig.Names {
		probe := n
		if sig.Kind == vllm.Histogram {
			probe = n + "_bucket"
		}
		if !g.names.Has(probe) {
			continue
		}
		if src, _ := vllm.RankLabel(n); src == "" && g.q.Engine != "" && !g.rankRe.MatchString("") {
			continue
		}
		out = append(out, n)
	}
	return out
}

var plainName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// sel is the selector of one sample name with the query's endpoint, model, engine and label matchers.
func (g *gen) sel(name string, extra ...string) string {
	var m []string
	add := func(label, re string) {
		if re != "" {
			m = append(m, label+"=~"+strconv.Quote(re))
		}
	}
	add("instance", g.q.Endpoint)
	modelLabel := "model_name"
	if strings.HasPrefix(name, "dynamo_") {
		modelLabel = "model"
	}
	add(modelLabel, g.q.Model)
	if src, _ := vllm.RankLabel(name); src != "" {
		add(src, g.q.Engine)
	}
	keys := make([]string, 0, len(g.q.Labels))
	for k := range g.q.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(k, g.q.Labels[k])
	}
	m = append(m, extra...)
	if plainName.MatchString(name) {
		if len(m) == 0 {
			return name
		}
		return name + "{" + strings.Join(m, ", ") + "}"
	}
	return "{" + strings.Join(append([]string{"__name__=" + strconv.Quote(name)}, m...), ", ") + "}"
}

// presence selects any series of the given names on the selected endpoints: the right side of `unless on
// (instance)`, which keeps each endpoint on its preferred name.
func (g *gen) presence(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	m := []string{"__name__=~" + strconv.Quote(strings.Join(quoted, "|"))}
	if g.q.Endpoint != "" {
		m = append(m, "instance=~"+strconv.Quote(g.q.Endpoint))
	}
	return "{" + strings.Join(m, ", ") + "}"
}

// norm reports Dynamo's labels as direct mode does: dp_rank as engine, model as model_name.
func norm(name, expr string) string {
	if strings.HasPrefix(name, vllm.DynamoComponentPrefix) {
		expr = `label_replace(` + expr + `, "engine", "$1", "dp_rank", "(.+)")`
	}
	if strings.HasPrefix(name, "dynamo_") {
		expr = `label_replace(` + expr + `, "model_name", "$1", "model", "(.+)")`
	}
	return expr
}

// terms is the `or` of inner(selector) over the held names, each endpoint answered by its preferred name and
// not at all when it has a name of exclude (a better source); suffix is added to histogram base names.
func (g *gen) terms(names []string, suffix string, exclude []string, inner func(sel string) string) string {
	var parts []string
	for i, n := range names {
		t := norm(n, inner(g.sel(n+suffix)))
		var better []string
		for _, p := range names[:i] {
			better = append(better, p+suffix)
		}
		better = append(better, exclude...)
		if len(better) > 0 {
			t += " unless on (instance) " + g.presence(better)
		}
		parts = append(parts, t)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, " or ")
}

// by is the label list series are aggregated by, as the engine's groupBy keeps them; names give the rank label.
func (g *gen) by(names []string, extra ...string) string {
	var l []string
	switch g.q.GroupBy {
	case query.GroupEngine:
		l = append(l, "instance", "model_name")
		seen := map[string]bool{}
		for _, n := range names {
			if _, out := vllm.RankLabel(n); out != "" && !seen[out] {
				seen[out] = true
				l = append(l, out)
			}
		}
	case query.GroupEndpoint:
		l = append(l, "instance", "model_name")
	case query.GroupModel:
		l = append(l, "model_name")
	}
	l = append(l, extra...)
	return "(" + strings.Join(l, ", ") + ")"
}

func instant(sel string) string { return sel }

func (g *gen) rangeRate(sel string) string { return "rate(" + sel + "[" + g.w + "])" }

// gauge is agg by (…) of a gauge, series differing only by the multi-API-server pid label folded with max.
func (g *gen) gauge(sig vllm.Signal, agg string, exclude []string, extraBy ...string) string {
	names := g.held(sig)
	if len(names) == 0 {
		return ""
	}
	return agg + " by " + g.by(names, extraBy...) + " (max without (pid) (" + g.terms(names, "", exclude, instant) + "))"
}

// rate is sum by (…) (rate(x[w])) over a counter, or a histogram's _sum / _count with suffix.
func (g *gen) rate(sig vllm.Signal, suffix string, extraBy ...string) string {
	names := g.held(sig)
	if len(names) == 0 {
		return ""
	}
	return "sum by " + g.by(names, extraBy...) + " (" + g.terms(names, suffix, nil, g.rangeRate) + ")"
}

// ratio divides two aggregated expressions, guarded against a zero denominator as direct mode's Ratio is.
func ratio(num, den string) string {
	if num == "" || den == "" {
		return ""
	}
	return num + " / (" + den + " != 0)"
}

func scale(expr string, f string) string {
	if expr == "" {
		return ""
	}
	return "(" + expr + ") * " + f
}

func or(exprs ...string) string {
	var parts []string
	for _, e := range exprs {
		if e != "" {
			parts = append(parts, "("+e+")")
		}
	}
	if len(parts) == 1 {
		return strings.TrimSuffix(strings.TrimPrefix(parts[0], "("), ")")
	}
	return strings.Join(parts, " or ")
}

func (g *gen) kvCache(m string) []Expr {
	if m == "blocks" {
		return []Expr{
			{Measure: "total_blocks", Unit: "short", PromQL: or(g.gauge(vllm.AscendTotalBlocks, "sum", nil), g.gauge(vllm.DynamoTotalBlocks, "sum", nil), g.cacheConfig(false))},
			{Measure: "free_blocks", Unit: "short", PromQL: g.gauge(vllm.AscendFreeBlocks, "sum", nil)},
			{Measure: "allocated_blocks", Unit: "short", PromQL: or(g.gauge(vllm.AscendAllocatedBlocks, "sum", nil), g.gauge(vllm.DynamoActiveBlocks, "sum", nil))},
		}
	}
	return []Expr{{Measure: "kv_usage", Unit: "percent", PromQL: g.kvUsage()}}
}

// kvUsage takes each endpoint's best source: Ascend's per-dp blocks, else vLLM's gauge, else Dynamo's.
func (g *gen) kvUsage() string {
	var ascend string
	free, total := g.gauge(vllm.AscendFreeBlocks, "sum", nil), g.gauge(vllm.AscendTotalBlocks, "sum", nil)
	if free != "" && total != "" {
		ascend = "(1 - " + free + " / (" + total + " > 0)) * 100"
	}
	ascendNames := g.held(vllm.AscendFreeBlocks)
	v := scale(g.gauge(vllm.KVUsage, "avg", ascendNames), "100")
	d := scale(g.gauge(vllm.DynamoKVUsage, "avg", append(ascendNames, g.held(vllm.KVUsage)...)), "100")
	return or(ascend, v, d)
}

// cacheConfig is num_gpu_blocks (or × block_size for the pool in tokens) per engine from the info gauge's labels.
func (g *gen) cacheConfig(tokens bool) string {
	if !g.names.Has(vllm.CacheConfig.Names[0]) {
		return ""
	}
	var parts []string
	for _, c := range g.configs {
		blocks, err1 := strconv.ParseFloat(c.NumGPUBlocks, 64)
		size, err2 := strconv.ParseFloat(c.BlockSize, 64)
		if err1 != nil || !(blocks > 0) || (tokens && (err2 != nil || !(size > 0))) {
			continue
		}
		v := blocks
		m := []string{"num_gpu_blocks=" + strconv.Quote(c.NumGPUBlocks)}
		if tokens {
			v = blocks * size
			m = append(m, "block_size="+strconv.Quote(c.BlockSize))
		}
		parts = append(parts, g.sel(vllm.CacheConfig.Names[0], m...)+" * 0 + "+strconv.FormatFloat(v, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return ""
	}
	return "sum by " + g.by(vllm.CacheConfig.Names) + " (max without (pid) (" + strings.Join(parts, " or ") + "))"
}

func (g *gen) specDecode(m string) []Expr {
	switch m {
	case "acceptance_rate":
		r := ratio(g.rate(vllm.SpecAcceptedTokens, ""), g.rate(vllm.SpecDraftTokens, ""))
		v0 := g.gauge(vllm.V0AcceptanceRate, "avg", g.held(vllm.SpecDraftTokens))
		return []Expr{{Measure: "acceptance_rate", Unit: "percentunit", PromQL: or(r, v0)}}
	case "acceptance_length":
		r := ratio(g.rate(vllm.SpecAcceptedTokens, ""), g.rate(vllm.SpecDrafts, ""))
		if r != "" {
			r = "1 + " + r
		}
		return []Expr{{Measure: "acceptance_length", Unit: "short", PromQL: r}}
	case "per_position":
		num, den := g.rate(vllm.SpecAcceptedPerPos, "", "position"), g.rate(vllm.SpecDrafts, "")
		e := ""
		if num != "" && den != "" {
			e = num + " / ignoring (position) group_left () (" + den + " != 0)"
		}
		return []Expr{{Measure: "acceptance_per_position", Unit: "percentunit", PromQL: e}}
	case "num_spec_tokens":
		return []Expr{{Measure: "num_spec_tokens", Unit: "short", PromQL: g.gauge(vllm.AscendNumSpecTokens, "avg", nil)}}
	case "efficiency":
		return []Expr{{Measure: "efficiency", Unit: "percentunit", PromQL: g.gauge(vllm.V0Efficiency, "avg", nil)}}
	}
	return nil
}

func (g *gen) latencySignal() (vllm.Signal, error) {
	if sig, ok := vllm.LatencyMetrics[g.q.Metric]; ok {
		return sig, nil
	}
	name, isTimer := strings.CutPrefix(g.q.Metric, "timer:")
	if !isTimer {
		return vllm.Signal{}, fmt.Errorf("latency metric %q is unknown", g.q.Metric)
	}
	sig, ok := vllm.TimerSignal(name)
	if !ok {
		return vllm.Signal{}, fmt.Errorf("timer %q is not a vllm_profiling_* histogram", name)
	}
	return sig, nil
}

func (g *gen) latency(m string) ([]Expr, error) {
	sig, err := g.latencySignal()
	if err != nil {
		return nil, err
	}
	if m == "mean" {
		return []Expr{{Measure: g.q.Metric + "_mean", Unit: sig.Unit, PromQL: ratio(g.rate(sig, "_sum"), g.rate(sig, "_count"))}}, nil
	}
	return g.quantiles(g.held(sig), g.q.Metric, sig.Unit), nil
}

// quantiles is histogram_quantile(q, sum by (le, …) (rate(x_bucket[w]))) per quantile.
func (g *gen) quantiles(names []string, measure, unit string) []Expr {
	if len(names) == 0 {
		return nil
	}
	buckets := "sum by " + g.by(names, "le") + " (" + g.terms(names, "_bucket", nil, g.rangeRate) + ")"
	var out []Expr
	for _, q := range g.q.Quantiles {
		out = append(out, Expr{Measure: measure, Unit: unit, Labels: map[string]string{"quantile": query.FormatQuantile(q)},
			PromQL: "histogram_quantile(" + strconv.FormatFloat(q, 'g', -1, 64) + ", " + buckets + ")"})
	}
	return out
}

func (g *gen) throughput(m string) []Expr {
	switch m {
	case "generation_tokens":
		return []Expr{{Measure: "generation_tokens_per_second", Unit: "short", PromQL: g.rate(vllm.GenerationTokens, "")}}
	case "prompt_tokens":
		return []Expr{{Measure: "prompt_tokens_per_second", Unit: "short", PromQL: g.rate(vllm.PromptTokens, "")}}
	case "requests":
		return []Expr{{Measure: "requests_per_second", Unit: "reqps", PromQL: g.rate(vllm.RequestSuccess, "", "finished_reason")}}
	case "ascend_input":
		return []Expr{{Measure: "input_tokens_per_second", Unit: "short", PromQL: g.rate(vllm.AscendInputTokens, "")}}
	case "ascend_output":
		return []Expr{{Measure: "output_tokens_per_second", Unit: "short", PromQL: g.rate(vllm.AscendOutputTokens, "")}}
	}
	return nil
}

func (g *gen) queue(m string) []Expr {
	switch m {
	case "running":
		return []Expr{{Measure: "running", Unit: "short", PromQL: g.gauge(vllm.Running, "sum", nil)}}
	case "waiting":
		return []Expr{{Measure: "waiting", Unit: "short", PromQL: g.gauge(vllm.Waiting, "sum", nil)}}
	case "waiting_by_reason":
		return []Expr{{Measure: "waiting", Unit: "short", PromQL: g.gauge(vllm.WaitingByReason, "sum", nil, "reason")}}
	case "swapped":
		return []Expr{{Measure: "swapped", Unit: "short", PromQL: g.gauge(vllm.Swapped, "sum", nil)}}
	case "ascend_batch_size", "ascend_waiting_batch_size":
		sig := vllm.AscendBatchSize
		if m == "ascend_waiting_batch_size" {
			sig = vllm.AscendWaitingBatchSize
		}
		return []Expr{{Measure: m + "_avg", Unit: "short", PromQL: ratio(g.rate(sig, "_sum"), g.rate(sig, "_count"))}}
	}
	return nil
}

func (g *gen) cache(m string) []Expr {
	switch m {
	case "preemptions":
		return []Expr{{Measure: "preemptions_per_second", Unit: "short", PromQL: g.rate(vllm.Preemptions, "")}}
	case "prefix_hit_rate":
		r := ratio(g.rate(vllm.PrefixHits, ""), g.rate(vllm.PrefixQueries, ""))
		v0 := g.gauge(vllm.V0PrefixHitRate, "avg", g.held(vllm.PrefixQueries))
		return []Expr{{Measure: "prefix_hit_rate", Unit: "percentunit", PromQL: or(r, v0)}}
	case "external_prefix_hit_rate":
		return []Expr{{Measure: m, Unit: "percentunit", PromQL: ratio(g.rate(vllm.ExternalPrefixHits, ""), g.rate(vllm.ExternalPrefixQueries, ""))}}
	case "mm_hit_rate":
		return []Expr{{Measure: m, Unit: "percentunit", PromQL: ratio(g.rate(vllm.MMCacheHits, ""), g.rate(vllm.MMCacheQueries, ""))}}
	}
	return nil
}

// dpBalance is each rank's load and, per score group, max/mean, CV and idle ranks while others wait, with
// direct mode's conventions: max/mean is 1 and CV 0 when every rank is idle.
func (g *gen) dpBalance(m string) []Expr {
	lg := *g
	lg.q.GroupBy = query.GroupEngine
	var load string
	unit := "short"
	switch m {
	case "running":
		load = lg.gauge(vllm.Running, "sum", nil)
	case "waiting":
		load = lg.gauge(vllm.Waiting, "sum", nil)
	case "running_waiting":
		r, w := lg.gauge(vllm.Running, "sum", nil), lg.gauge(vllm.Waiting, "sum", nil)
		if r != "" && w != "" {
			load = r + " + " + w
		}
	case "kv_usage":
		load, unit = lg.kvUsage(), "percent"
	case "generation_tps":
		load = lg.rate(vllm.GenerationTokens, "")
	}
	if load == "" {
		return nil
	}
	var s string
	switch g.q.GroupBy {
	case query.GroupEndpoint:
		s = "(instance)"
	case query.GroupModel:
		s = "(model_name)"
	default:
		s = "()"
	}
	L := "(" + load + ")"
	avg := "avg by " + s + " " + L
	out := []Expr{
		{Measure: "load", Unit: unit, PromQL: load},
		{Measure: "max_over_mean", Unit: "short", PromQL: "max by " + s + " " + L + " / (" + avg + " != 0) or (" + avg + " == 0) * 0 + 1"},
		{Measure: "cv", Unit: "short", PromQL: "stddev by " + s + " " + L + " / (" + avg + " != 0) or (" + avg + " == 0)"},
	}
	if w := lg.gauge(vllm.Waiting, "sum", nil); w != "" {
		// Waiting of the ranks that carry a load, and for each rank the waiting of the other ranks in its group.
		W := "(" + w + " and on (instance, engine) " + L + ")"
		others := "(sum by " + s + " " + W + " - on " + s + " group_right () " + W + ")"
		idle := "count by " + s + " (" + L + " == 0 and on (instance, engine) " + others + " > 0) or count by " + s + " " + L + " * 0"
		out = append(out, Expr{Measure: "idle_while_waiting", Unit: "short", PromQL: idle})
	}
	if g.q.Score != "" {
		// One score, without the loads, for alert rules and the dashboards' balance panels.
		for _, e := range out {
			if e.Measure == g.q.Score {
				return []Expr{e}
			}
		}
		return nil
	}
	return out
}

// capacity is the KV pool in tokens, the mean tokens per request, and pool ÷ mean × (1 − headroom).
func (g *gen) capacity() []Expr {
	pool := g.cacheConfig(true)
	p, gn, c := g.rate(vllm.PromptTokensHist, "_sum"), g.rate(vllm.GenerationTokensHist, "_sum"), g.rate(vllm.PromptTokensHist, "_count")
	mean := ""
	if p != "" && gn != "" && c != "" {
		mean = "(" + p + " + " + gn + ") / (" + c + " != 0)"
	}
	capReq := ""
	if pool != "" && mean != "" {
		capReq = "(" + pool + ") / (" + mean + " > 0) * " + strconv.FormatFloat(1-*g.q.Headroom, 'g', -1, 64)
	}
	return []Expr{
		{Measure: "kv_pool_tokens", Unit: "short", PromQL: pool},
		{Measure: "capacity_requests", Unit: "short", PromQL: capReq},
		{Measure: "mean_tokens_per_request", Unit: "short", PromQL: mean},
	}
}

// raw returns a series by name: histograms as summed buckets or quantiles, others with every label kept
// except the job Prometheus adds.
func (g *gen) raw() []Expr {
	name := g.q.Metric
	switch {
	case g.names.Has(name+"_bucket") && g.q.Histogram == "quantiles":
		return g.quantiles([]string{name}, name, "")
	case g.names.Has(name + "_bucket"):
		return []Expr{{Measure: name + "_bucket", PromQL: "sum by " + g.by([]string{name}, "le") + " (max without (pid) (" + norm(name, g.sel(name+"_bucket")) + "))"}}
	case g.names.Has(name):
		drop := []string{"job"}
		switch g.q.GroupBy {
		case query.GroupEndpoint:
			drop = append(drop, "engine", "dp")
		case query.GroupModel:
			drop = append(drop, "instance", "engine", "dp")
		case query.GroupFleet:
			drop = append(drop, "instance", "engine", "dp", "model_name")
		}
		return []Expr{{Measure: name, PromQL: "sum without (" + strings.Join(drop, ", ") + ") (" + norm(name, g.sel(name)) + ")"}}
	}
	return nil
}

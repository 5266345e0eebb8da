package promapi

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
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
	// AsIs marks the user's own PromQL: its series keep the server's labels and a refusal is the user's to fix.
	AsIs bool
	// Quantiles, when set, make PromQL the summed bucket rates (sum by (…, le)) of one histogram, read once, and the
	// answer these quantiles of it, computed as histogram_quantile does (BucketQuantiles).
	Quantiles []float64
	// Ratio, when set, makes the answer one computed from two other expressions' answers of the same query instead of
	// asked of the server (PromQL is then only what the query inspector shows): a capacity, whose pool and mean the
	// query also answers, would otherwise have the server evaluate both twice.
	Ratio *Ratio
}

// Ratio is Num ÷ (Den > 0) × Factor between the answers of two expressions (indices into the same list), series
// matched on all their labels, as PromQL's one-to-one division matches them.
type Ratio struct {
	Num, Den int
	Factor   float64
}

// CacheConfig is one distinct (num_gpu_blocks, block_size) pair of vllm:cache_config_info: PromQL cannot turn a
// label into a value, so the pool size is written into the expression per pair the server holds.
type CacheConfig struct {
	NumGPUBlocks, BlockSize string
}

// Facts are what a query's PromQL needs to know of the server's series beyond their names, because PromQL cannot
// turn a label into a value: the cache configurations a pool size multiplies, and the bucket bounds an SLO
// threshold lies between (Evaluator.Eval reads both before it generates).
type Facts struct {
	CacheConfigs []CacheConfig
	// Bounds are the upper bounds of the selected series of the latency histogram (query.Query.Threshold).
	Bounds []float64
	// Layouts are Discovery.Layouts: each histogram bucket name's one layout, or "" where its series differ; nil
	// when not asked, which keeps the common-bucket clean-up wherever a group spans endpoints.
	Layouts map[string]string
}

// Generate returns the PromQL for every measure of a query, using only names the server holds, so the
// expression fits the fleet: V1, deprecated, V0, Ascend or Dynamo names, or an `or` of them per endpoint
// (instance), the preferred name winning where an endpoint exposes several. window is the rate window
// (query.Resolution); facts may be nil when the query needs none. Labels follow direct mode: instance is
// reported as endpoint by the caller.
func Generate(q query.Query, names Names, facts *Facts, window time.Duration) ([]Expr, error) {
	if err := q.EnsureValid(); err != nil {
		return nil, err
	}
	outputs := q.Outputs()
	if len(outputs) == 0 {
		return nil, fmt.Errorf("query type %q has no generated PromQL", q.QueryType)
	}
	if facts == nil {
		facts = &Facts{}
	}
	var failed error
	g := &gen{q: q, names: names, configs: facts.CacheConfigs, bounds: facts.Bounds, layouts: facts.Layouts, w: model.Duration(window).String(), window: window,
		rankRe: q.Matchers().Engine, err: &failed}
	metricUnit := q.LatencySignal().Unit
	perOutput := make([][]Expr, len(outputs))
	for i, o := range outputs {
		name, unit := o.Resolve(q.Metric, metricUnit)
		for _, e := range g.exprs(o.Node) {
			if e.PromQL == "" {
				continue
			}
			if name != "" {
				e.Measure, e.Unit = name, unit
			}
			perOutput[i] = append(perOutput[i], e)
		}
	}
	var out []Expr
	first := make([]int, len(outputs)) // where each output's expressions start in out
	at := map[measure.Node]int{}       // an output's node, where it is one expression, and that expression's index
	for i, o := range outputs {
		first[i] = len(out)
		if len(perOutput[i]) == 1 {
			at[o.Node] = len(out)
		}
		out = append(out, perOutput[i]...)
	}
	for i, o := range outputs {
		c, ok := o.Node.(*measure.Capacity)
		if !ok || len(perOutput[i]) != 1 {
			continue
		}
		num, okNum := at[c.Pool]
		den, okDen := at[c.Mean]
		if !okNum || !okDen {
			continue
		}
		f := 1 - *q.Headroom
		e := &out[first[i]]
		e.Ratio = &Ratio{Num: num, Den: den, Factor: f}
		e.PromQL = "# computed from the answers of " + out[num].Measure + " and " + out[den].Measure + ": " +
			out[num].Measure + " / (" + out[den].Measure + " > 0) * " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return out, failed
}

type gen struct {
	q       query.Query
	names   Names
	configs []CacheConfig
	bounds  []float64
	layouts map[string]string
	w       string
	window  time.Duration
	rankRe  *regexp.Regexp
	// perSeries is set while printing terms that need every series' own labels (an `or` of names kept apart per
	// instance, the common-bucket clean-up's counts of series): no rate is read from a sum over endpoints there.
	perSeries bool
	// err is where print records a node it cannot print (shared by the copies a printer makes for sub-terms).
	err *error
}

// fail records the first node print could not print.
func (g *gen) fail(err error) {
	if g.err != nil && *g.err == nil {
		*g.err = err
	}
}

// exprs prints one output's node: one expression, or one per quantile for a histogram quantile.
func (g *gen) exprs(n measure.Node) []Expr {
	switch n := n.(type) {
	case *measure.Quantiles:
		return g.quantiles(g.held(g.signal(n.Signal)), "", "")
	case *measure.Raw:
		return g.raw()
	}
	return []Expr{{PromQL: g.print(n)}}
}

// print is the PromQL of a node over the names the server holds; "" when it reads nothing the server has.
func (g *gen) print(n measure.Node) string {
	switch n := n.(type) {
	case *measure.Gauge:
		var exclude []string
		for _, u := range n.Unless {
			exclude = append(exclude, g.held(u)...)
		}
		e := g.gauge(n.Signal, string(n.Agg), exclude, matchers(n.Match), n.Keep...)
		if n.Scale != 0 && n.Scale != 1 {
			e = scale(e, strconv.FormatFloat(n.Scale, 'g', -1, 64))
		}
		return e
	case *measure.Rate:
		return g.rate(n.Signal, n.Suffix, matchers(n.Match), n.Keep...)
	case *measure.Div:
		num, den := g.print(n.Num), g.print(n.Den)
		if num == "" || den == "" {
			return ""
		}
		switch n.Num.(type) {
		case *measure.Add, *measure.Or: // both bind looser than the division
			num = "(" + num + ")"
		}
		switch {
		case n.Form == measure.UsedPercent:
			return "(1 - " + num + " / (" + den + " > 0)) * 100"
		case n.Ignoring != "":
			return num + " / ignoring (" + n.Ignoring + ") group_left () (" + den + " != 0)"
		case n.Form == measure.OnePlus:
			return "1 + " + ratio(num, den)
		}
		return ratio(num, den)
	case *measure.Add:
		a, b := g.print(n.A), g.print(n.B)
		if a == "" || b == "" {
			return ""
		}
		return a + " + " + b
	case *measure.Or:
		parts := make([]string, len(n.Parts))
		for i, p := range n.Parts {
			parts[i] = g.print(p)
		}
		return or(parts...)
	case *measure.Mean:
		sig := g.signal(n.Signal)
		return ratio(g.rate(sig, "_sum", nil), g.rate(sig, "_count", nil))
	case *measure.Attainment:
		return g.attainment(g.held(g.signal(n.Signal)), n.Goodput)
	case *measure.EngineState:
		if n.Serving {
			return g.serving()
		}
		return g.engineState()
	case *measure.PerGPU:
		return g.perGPU(n)
	case *measure.InfoProduct:
		return g.infoProduct(n)
	case *measure.Balance:
		return g.balance(n)
	case *measure.Capacity:
		pool, mean := g.print(n.Pool), g.print(n.Mean)
		if pool == "" || mean == "" {
			return ""
		}
		return "(" + pool + ") / (" + mean + " > 0) * " + strconv.FormatFloat(1-*g.q.Headroom, 'g', -1, 64)
	case *measure.Quantiles, *measure.Raw, *measure.LoRA, *measure.PD:
		// Quantiles and raw series are whole outputs (exprs); the data source composes LoRA and P/D answers.
		g.fail(fmt.Errorf("internal error: measure node %T cannot be printed inside a formula", n))
	default:
		g.fail(measure.Unhandled(n))
	}
	return ""
}

// signal is the node's signal, or the query's latency family when the node names none.
func (g *gen) signal(s vllm.Signal) vllm.Signal {
	if len(s.Names) == 0 {
		return g.q.LatencySignal()
	}
	return s
}

// matchers are a node's catalog matchers as PromQL label matchers.
func matchers(ms []measure.Matcher) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Label + "=~" + strconv.Quote(m.Regex)
	}
	return out
}

// held returns the names of a signal the server holds (histograms by base name), preferred first, leaving
// out names without a rank label when the engine filter cannot match an empty rank.
func (g *gen) held(sig vllm.Signal) []string {
	var out []string
	for _, n := range sig.Names {
		probe := n
		if sig.Kind == vllm.Histogram {
			probe = vllm.BucketName(n)
		}
		if !g.names.Has(probe) {
			continue
		}
		if src, _ := vllm.RankLabel(n); src == "" && g.rankRe != nil && !g.rankRe.MatchString("") {
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
		if !query.MatchesAll(re) {
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
	if g.q.QueryType != query.TypeRaw && vllm.RouterLookalikes[name] {
		m = append(m, vllm.RouterLabel+`=""`) // not a production-stack router's look-alike (vllm.RouterSeries)
	}
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
	if !query.MatchesAll(g.q.Endpoint) {
		m = append(m, "instance=~"+strconv.Quote(g.q.Endpoint))
	}
	return "{" + strings.Join(m, ", ") + "}"
}

// norm reports Dynamo's and Ray Serve's labels as direct mode does: dp_rank (worker_id/dp_rank on the frontend's
// per-worker gauges) or ReplicaId as engine, model as model_name.
func norm(name, expr string) string {
	if strings.HasPrefix(name, vllm.DynamoComponentPrefix) {
		expr = `label_replace(` + expr + `, "engine", "$1", "dp_rank", "(.+)")`
	}
	if w := vllm.RankWorker(name); w != "" {
		src, out := vllm.RankLabel(name)
		expr = `label_join(` + expr + `, "` + out + `", "` + vllm.RankSeparator + `", "` + w + `", "` + src + `")`
	}
	if strings.HasPrefix(name, "dynamo_") {
		expr = `label_replace(` + expr + `, "model_name", "$1", "model", "(.+)")`
	}
	if src, out := vllm.RankLabel(name); src == vllm.RayRankLabel {
		expr = `label_replace(` + expr + `, "` + out + `", "$1", "` + src + `", "(.+)")`
	}
	return expr
}

// terms is the `or` of inner(selector) over the held names, each endpoint answered by its preferred name and
// not at all when it has a name of exclude (a better source); suffix is added to histogram base names.
func (g *gen) terms(names []string, suffix string, exclude, extra []string, inner func(name, sel string) string) string {
	if len(names) > 1 || len(exclude) > 0 {
		defer g.seriesApart()() // unless on (instance) needs each series' instance
	}
	var parts []string
	for i, n := range names {
		parts = append(parts, g.unlessBetter(norm(n, inner(n+suffix, g.sel(n+suffix, extra...))), names[:i], suffix, exclude))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, " or ")
}

// unlessBetter is t left out on the endpoints that have one of the better names (suffix added) or of exclude: the
// `or` of a signal's names answers each endpoint by its preferred name.
func (g *gen) unlessBetter(t string, better []string, suffix string, exclude []string) string {
	var held []string
	for _, p := range better {
		held = append(held, p+suffix)
	}
	held = append(held, exclude...)
	if len(held) == 0 {
		return t
	}
	return t + " unless on (instance) " + g.presence(held)
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

func instant(_, sel string) string { return sel }

// sameLe writes integral le bounds without ".0", so "1.0" and "1" are one bucket to sum by (le) and count by (le).
func sameLe(expr string) string {
	return `label_replace(` + expr + `, "le", "$1", "le", "(.+)\\.0")`
}

// rangeRate is rate(sel[w]) of one sample name, or the series a generated recording rule writes for it where the
// server holds one at this window (RecordedName): an instant read of one sample per step instead of a window's.
func (g *gen) rangeRate(name, sel string) string {
	if slices.Contains(RecordedWindows, g.window) {
		if r := SummedName(name, g.window); g.names.Has(r) && g.acrossEndpoints() {
			return swapName(sel, name, r)
		}
		if r := EndpointSumName(name, g.window); g.names.Has(r) && g.acrossEngines() {
			return swapName(sel, name, r)
		}
		if r := RecordedName(name, g.window); g.names.Has(r) {
			return swapName(sel, name, r)
		}
	}
	return "rate(" + sel + "[" + g.w + "])"
}

// acrossEndpoints reports whether a rate may be read from its recorded sum over endpoints (SummedName): the terms
// are summed per model or for the fleet, over every endpoint and engine, and need no series' own endpoint labels.
func (g *gen) acrossEndpoints() bool {
	if g.perSeries || g.q.GroupBy != query.GroupModel && g.q.GroupBy != query.GroupFleet ||
		!query.MatchesAll(g.q.Endpoint) || !query.MatchesAll(g.q.Engine) {
		return false
	}
	for k := range g.q.Labels {
		if slices.Contains(EndpointLabels, k) {
			return false
		}
	}
	return true
}

// acrossEngines reports whether a rate may be read from its recorded sum over each endpoint's engines
// (EndpointSumName): the terms are summed per endpoint, per model or for the fleet, over every engine, and need no
// engine's own labels.
func (g *gen) acrossEngines() bool {
	switch g.q.GroupBy {
	case query.GroupEndpoint, query.GroupModel, query.GroupFleet:
	default:
		return false
	}
	if g.perSeries || !query.MatchesAll(g.q.Engine) {
		return false
	}
	for k := range g.q.Labels {
		if slices.Contains(EngineLabels, k) {
			return false
		}
	}
	return true
}

// seriesApart sets perSeries until the returned function restores it.
func (g *gen) seriesApart() func() {
	was := g.perSeries
	g.perSeries = true
	return func() { g.perSeries = was }
}

// gauge is agg by (…) of a gauge, series differing only by the multi-API-server pid label folded with max.
func (g *gen) gauge(sig vllm.Signal, agg string, exclude, match []string, extraBy ...string) string {
	names := g.held(sig)
	if len(names) == 0 {
		return ""
	}
	return agg + " by " + g.by(names, extraBy...) + " (max without (pid) (" + g.terms(names, "", exclude, match, instant) + "))"
}

// rate is sum by (…) (rate(x[w])) over a counter, or a histogram's _sum / _count with suffix.
func (g *gen) rate(sig vllm.Signal, suffix string, match []string, extraBy ...string) string {
	names := g.held(sig)
	if len(names) == 0 {
		return ""
	}
	return "sum by " + g.by(names, extraBy...) + " (" + g.terms(names, suffix, nil, match, g.rangeRate) + ")"
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

// infoProduct is the product of an info gauge's numeric labels per series, written into the expression for each
// label combination the server holds (PromQL cannot turn a label into a value): num_gpu_blocks, or × block_size
// for the pool in tokens.
func (g *gen) infoProduct(n *measure.InfoProduct) string {
	held := g.held(n.Signal)
	if len(held) == 0 {
		return ""
	}
	// The info gauge names no model: select it without the model filter and take model_name (and the filter)
	// from ModelFrom's series of the same endpoint and engine.
	info := *g
	if len(n.ModelFrom.Names) > 0 {
		info.q.Model = ""
	}
	var parts []string
	for _, c := range g.configs {
		v := 1.0
		var m []string
		for _, l := range n.Labels {
			x, err := strconv.ParseFloat(c.value(l), 64)
			if err != nil || !(x > 0) {
				v = math.NaN()
				break
			}
			v *= x
			m = append(m, l+"="+strconv.Quote(c.value(l)))
		}
		if math.IsNaN(v) {
			continue
		}
		for _, name := range held {
			parts = append(parts, norm(name, info.sel(name, m...)+" * 0 + "+strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	pool := "max without (pid) (" + strings.Join(parts, " or ") + ")"
	if len(n.ModelFrom.Names) > 0 {
		from := g.held(n.ModelFrom)
		if len(from) == 0 {
			return ""
		}
		pool += " * on (instance, engine) group_left (model_name) group by (instance, engine, model_name) (" +
			g.terms(from, "", nil, nil, instant) + ")"
	}
	return "sum by " + g.by(n.Signal.Names) + " (" + pool + ")"
}

// value is the config's value of one cache_config_info label.
func (c CacheConfig) value(label string) string {
	switch label {
	case "num_gpu_blocks":
		return c.NumGPUBlocks
	case "block_size":
		return c.BlockSize
	}
	return ""
}

// quantiles is histogram_quantile(q, sum by (le, …) (rate(x_bucket[w]))) per quantile.
func (g *gen) quantiles(names []string, name, unit string) []Expr {
	if len(names) == 0 {
		return nil
	}
	if recorded := g.recordedQuantiles(names, name, unit); recorded != nil {
		return recorded
	}
	// Only the bucket bounds every histogram of a group has are summed (as many series at the bound as at +Inf),
	// as direct mode does: mixed layouts would otherwise be repaired differently by each engine. Bounds are
	// compared as numbers there; here le is written one way first ("1.0", as Python and Prometheus 3 write it,
	// becomes "1", as Dynamo's Rust exporter writes it), or equal bounds would count as different buckets.
	group, withLe := g.by(names), g.by(names, "le")
	uniform := g.oneLayoutPerGroup(names)
	if !uniform {
		defer g.seriesApart()() // the clean-up counts each group's series
	}
	buckets := "sum by " + withLe + " (" + g.terms(names, "_bucket", nil, nil, g.rangeRate) + ")"
	if !uniform {
		rates := sameLe(g.terms(names, "_bucket", nil, nil, g.rangeRate))
		infs := g.terms(names, "_bucket", nil, []string{`le="+Inf"`}, g.rangeRate)
		buckets = "sum by " + withLe + " (" + rates + ") and on " + withLe + " (count by " + withLe + " (" + rates + ") == on " +
			group + " group_left () count by " + group + " (" + infs + "))"
	}
	if len(g.q.Quantiles) > 1 && (g.q.GroupBy == query.GroupModel || g.q.GroupBy == query.GroupFleet) {
		// Several quantiles of a few groups: the server sums the bucket rates once and the quantiles are taken here,
		// instead of the server reading every bucket series once per quantile. Per endpoint or engine the groups'
		// buckets would outweigh the quantiles, and the server takes them.
		return []Expr{{Measure: name, Unit: unit, PromQL: buckets, Quantiles: g.q.Quantiles}}
	}
	var out []Expr
	for _, q := range g.q.Quantiles {
		out = append(out, Expr{Measure: name, Unit: unit, Labels: map[string]string{"quantile": query.FormatQuantile(q)},
			PromQL: "histogram_quantile(" + strconv.FormatFloat(q, 'g', -1, 64) + ", " + buckets + ")"})
	}
	return out
}

// recordedQuantiles reads the quantiles the generated rules record (QuantileName), nil unless the query asks what
// they hold (at one of QuantileLevels, filtered by the level's labels only, every engine where the level keeps none,
// at a recorded window) and the server holds them for one of the histogram's names at every quantile asked. Each
// endpoint answers by its preferred name, as the computed sum's `or` has it: a name's recorded quantiles where
// held, else its computed ones.
func (g *gen) recordedQuantiles(names []string, name, unit string) []Expr {
	i := slices.IndexFunc(QuantileLevels, func(l QuantileLevel) bool { return l.Group == g.q.GroupBy })
	if i < 0 || !slices.Contains(RecordedWindows, g.window) {
		return nil
	}
	level := QuantileLevels[i]
	if !query.MatchesAll(g.q.Engine) && !slices.Contains(level.Labels, "engine") {
		return nil
	}
	for k := range g.q.Labels {
		if !slices.Contains(level.Labels, k) {
			return nil
		}
	}
	recorded := func(n string) bool {
		for _, q := range g.q.Quantiles {
			if !g.names.Has(QuantileName(n, q, g.window, level.Group)) {
				return false
			}
		}
		return true
	}
	if !slices.ContainsFunc(names, recorded) {
		return nil
	}
	var engine []string // a recorded name has no rank label of its own for sel to filter
	if !query.MatchesAll(g.q.Engine) {
		engine = append(engine, "engine=~"+strconv.Quote(g.q.Engine))
	}
	group, withLe := g.by(names), g.by(names, "le")
	var out []Expr
	for _, q := range g.q.Quantiles {
		qs := strconv.FormatFloat(q, 'g', -1, 64)
		parts := make([]string, len(names))
		for i, n := range names {
			if recorded(n) {
				// The sum drops the series' name and job, as the computed quantile's sum by does: one series per group.
				parts[i] = "sum by " + group + " (" + g.sel(QuantileName(n, q, g.window, level.Group), engine...) + ")"
			} else {
				parts[i] = "histogram_quantile(" + qs + ", sum by " + withLe + " (" + g.terms([]string{n}, "_bucket", nil, nil, g.rangeRate) + "))"
			}
			if i > 0 {
				parts[i] = "(" + g.unlessBetter(parts[i], names[:i], "_bucket", nil) + ")"
			}
		}
		out = append(out, Expr{Measure: name, Unit: unit, Labels: map[string]string{"quantile": query.FormatQuantile(q)},
			PromQL: strings.Join(parts, " or ")})
	}
	return out
}

// oneLayoutPerGroup reports whether every group of the held histograms' series has one bucket layout written one
// way: grouped by engine or endpoint (one exporter, one release), or wherever the server holds every one of them on a
// single layout, the same for all (Facts.Layouts). The common-bucket clean-up (as many series at a bound as at
// +Inf, le written one way) cannot change such a sum, and leaving it out spares the server reading every bucket
// rate three times and relabelling each bucket series.
func (g *gen) oneLayoutPerGroup(names []string) bool {
	if g.q.GroupBy == query.GroupEngine || g.q.GroupBy == query.GroupEndpoint {
		return true
	}
	layout := ""
	for i, n := range names {
		l := g.layouts[n+"_bucket"]
		if l == "" || i > 0 && l != layout {
			return false
		}
		layout = l
	}
	return len(names) > 0
}

// attainment is derive.SLOAttainment in PromQL: the bucket counts at the bounds around the threshold (those every
// histogram of a group has, as many series at the bound as at +Inf, as in quantiles) interpolated linearly, over
// the +Inf count.
func (g *gen) attainment(names []string, goodput bool) string {
	if len(names) == 0 || len(g.bounds) == 0 {
		return ""
	}
	t := *g.q.Threshold
	b := derive.BoundsAround(g.bounds, t)
	group := g.by(names)
	uniform := g.oneLayoutPerGroup(names)
	if !uniform {
		defer g.seriesApart()() // the clean-up counts each group's series
	}
	inf := "sum by " + group + " (" + g.terms(names, "_bucket", nil, []string{`le="+Inf"`}, g.rangeRate) + ")"
	infCount := "count by " + group + " (" + g.terms(names, "_bucket", nil, []string{`le="+Inf"`}, g.rangeRate) + ")"
	at := func(le float64) string {
		// A bound is matched in every form exporters write it (Python 1.0, Rust 1), as direct mode compares numbers.
		m := "le=~" + strconv.Quote(leForms(le))
		rates := g.terms(names, "_bucket", nil, []string{m}, g.rangeRate)
		if uniform {
			return "sum by " + group + " (" + rates + ")"
		}
		return "(sum by " + group + " (" + rates + ") and on " + group + " (count by " + group + " (" + rates + ") == on " + group + " " + infCount + "))"
	}
	var count string
	switch {
	case math.IsInf(b.Hi, 1) && b.Lo == 0:
		return ""
	case math.IsInf(b.Hi, 1):
		count = at(b.Lo)
	case b.Lo == 0:
		count = at(b.Hi) + " * " + strconv.FormatFloat(t/b.Hi, 'g', -1, 64)
	default:
		f := strconv.FormatFloat((t-b.Lo)/(b.Hi-b.Lo), 'g', -1, 64)
		count = "(" + at(b.Lo) + " + (" + at(b.Hi) + " - " + at(b.Lo) + ") * " + f + ")"
	}
	if goodput {
		return count
	}
	return count + " / (" + inf + " > 0)"
}

// engineState is measure.EngineState in PromQL: per engine 3 − asleep, 1 where engine_healthy is 0 (read without the
// model filter: it names no model), the lowest per group otherwise.
func (g *gen) engineState() string {
	names := g.held(vllm.EngineSleepState)
	if len(names) == 0 {
		return ""
	}
	rg := *g
	rg.q.GroupBy = query.GroupEngine
	asleep := "max by " + rg.by(names) + " (" + rg.terms(names, "", nil, matchers(measure.AsleepMatch), instant) + ")"
	state := "(" + strconv.Itoa(measure.StateOnline) + " - " + asleep + ")"
	if healthy := g.held(vllm.EngineHealthy); len(healthy) > 0 {
		hg := rg
		hg.q.Model = ""
		sick := "(min by (instance, engine) (" + hg.terms(healthy, "", nil, nil, instant) + ") == 0)"
		state = "(" + state + " unless on (instance, engine) " + sick + " or " + state + " * 0 + " +
			strconv.Itoa(measure.StateUnhealthy) + " and on (instance, engine) " + sick + ")"
	}
	if g.q.GroupBy == query.GroupEngine {
		return state
	}
	return "min by " + g.by(names) + " (" + state + ")"
}

// serving is measure.EngineState's Serving count in PromQL: the group's engines online, or 0 where its engines
// reported within the window (last_over_time skips the stale markers of failed scrapes) but none is online.
func (g *gen) serving() string {
	perEngine := *g
	perEngine.q.GroupBy = query.GroupEngine
	state := perEngine.engineState()
	if state == "" {
		return ""
	}
	names := g.held(vllm.EngineSleepState)
	online := "count by " + g.by(names) + " (" + state + " == " + strconv.Itoa(measure.StateOnline) + ")"
	known := "group by " + g.by(names) + " (" + g.terms(names, "", nil, nil, func(_, sel string) string {
		return "last_over_time(" + sel + "[" + g.w + "])"
	}) + ")"
	return online + " or " + known + " * 0"
}

// perGPU is measure.PerGPU in PromQL: the counters' summed rates over the peak, where their summed value is above 0.
func (g *gen) perGPU(n *measure.PerGPU) string {
	var rates, totals []string
	for _, sig := range n.Signals {
		names := g.held(sig)
		if len(names) == 0 {
			return ""
		}
		rates = append(rates, g.rate(sig, "", nil))
		totals = append(totals, "sum by "+g.by(names)+" ("+g.terms(names, "", nil, nil, instant)+")")
	}
	e := "(" + strings.Join(rates, " + ") + ")"
	switch n.Peak {
	case measure.PeakFlops:
		e += " / " + strconv.FormatFloat(*g.q.PeakTFLOPS*1e12, 'g', -1, 64)
	case measure.PeakBandwidth:
		e += " / " + strconv.FormatFloat(*g.q.PeakMemoryTBps*1e12, 'g', -1, 64)
	}
	return e + " and (" + strings.Join(totals, " + ") + " > 0)"
}

// leForms matches the ways exporters write a bucket bound: Go's shortest form, and Python's with a trailing .0 for
// whole numbers.
func leForms(le float64) string {
	s := strconv.FormatFloat(le, 'g', -1, 64)
	out := []string{regexp.QuoteMeta(s)}
	if f := strconv.FormatFloat(le, 'f', -1, 64); f != s {
		out = append(out, regexp.QuoteMeta(f))
	}
	if le == math.Trunc(le) && math.Abs(le) < 1e16 {
		out = append(out, regexp.QuoteMeta(strconv.FormatFloat(le, 'f', 1, 64)))
	}
	return strings.Join(out, "|")
}

// balance is a rank's load (the load node per engine / DP rank) or one score over each group's ranks, with
// direct mode's conventions: max/mean is 1 and CV 0 when every rank is idle.
func (g *gen) balance(n *measure.Balance) string {
	if r := g.recordedBalance(n); r != "" {
		return r
	}
	lg := *g
	lg.q.GroupBy = query.GroupEngine
	load := lg.print(n.Load)
	if load == "" || n.Score == "" {
		return load
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
	switch n.Score {
	case measure.ScoreMaxOverMean:
		return "max by " + s + " " + L + " / (" + avg + " != 0) or (" + avg + " == 0) * 0 + 1"
	case measure.ScoreCV:
		return "stddev by " + s + " " + L + " / (" + avg + " != 0) or (" + avg + " == 0)"
	case measure.ScoreIdleWhileWaiting:
		w := lg.print(n.Waiting)
		if w == "" {
			return ""
		}
		// Waiting of the ranks that carry a load, and for each rank the waiting of the other ranks in its group.
		W := "(" + w + " and on (instance, engine) " + L + ")"
		others := "(sum by " + s + " " + W + " - on " + s + " group_right () " + W + ")"
		return "count by " + s + " (" + L + " == 0 and on (instance, engine) " + others + " > 0) or count by " + s + " " + L + " * 0"
	}
	return ""
}

// recordedBalance reads a score the generated rules record per endpoint (BalanceScoreName), "" unless the query asks
// what they hold: the score per endpoint over every model and engine, filtered by endpoint only, on a server holding
// the recorded series.
func (g *gen) recordedBalance(n *measure.Balance) string {
	if n.Score == "" || g.q.GroupBy != query.GroupEndpoint || !query.MatchesAll(g.q.Model) || !query.MatchesAll(g.q.Engine) || len(g.q.Labels) > 0 {
		return ""
	}
	name := BalanceScoreName(BalanceScore{g.q.Measure, n.Score})
	if !g.names.Has(name) {
		return ""
	}
	// max by (instance): one series per endpoint, as the computed score's, without the recorded series' name.
	return "max by (instance) (" + g.sel(name) + ")"
}

// raw returns a series by name: histograms as summed buckets or quantiles, others with every label kept
// except the job Prometheus adds.
func (g *gen) raw() []Expr {
	name := g.q.Metric
	switch {
	case g.names.Has(name+"_bucket") && g.q.Histogram == query.HistogramQuantiles:
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

package query

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// eval evaluates one node of a catalog formula over the selected endpoints' history, as Prometheus evaluates
// the PromQL pkg/promapi prints for the same node. Results are memoized per node: a subtree shared by several
// outputs (a balance's load, capacity's pool) is read once. Callers must not modify what it returns.
func (c *evalCtx) eval(n measure.Node) []Output {
	if outs, ok := c.memo[n]; ok {
		return outs
	}
	var outs []Output
	switch n := n.(type) {
	case *measure.Gauge:
		outs = c.gauge(c.fetchUnless(n.Signal, n.Unless, n.Match, n.Keep), aggOf(n.Agg), scaleOf(n.Scale))
	case *measure.Rate:
		outs = c.rate(c.fetch(n.Signal, n.Suffix, n.Match, c.rateReads(), n.Keep...))
	case *measure.Div:
		outs = join(c.eval(n.Num), c.eval(n.Den), n.Ignoring, divide(n.Form))
	case *measure.Add:
		outs = join(c.eval(n.A), c.eval(n.B), "", func(a, b float64) (float64, bool) { return a + b, true })
	case *measure.Or:
		for _, p := range n.Parts {
			outs = append(outs, c.eval(p)...)
		}
	case *measure.Quantiles:
		outs = c.quantiles(c.fetch(c.signal(n.Signal), "_bucket", nil, c.rateReads()), c.q.Quantiles)
	case *measure.Attainment:
		sig := c.signal(n.Signal)
		outs = c.attainment(c.fetch(sig, "_bucket", nil, c.rateReads()), derive.BoundsAround(c.bucketBounds(sig), *c.q.Threshold), n.Goodput)
	case *measure.Mean:
		sig := c.signal(n.Signal)
		outs = join(c.rate(c.fetch(sig, "_sum", nil, c.rateReads())), c.rate(c.fetch(sig, "_count", nil, c.rateReads())), "", derive.HistogramMean)
	case *measure.InfoProduct:
		outs = c.gauge(c.infoProduct(n), aggSum, 1)
	case *measure.Balance:
		outs = c.balance(n)
	case *measure.Capacity:
		outs = join(c.eval(n.Pool), c.eval(n.Mean), "", func(pool, mean float64) (float64, bool) {
			return derive.ConcurrentCapacity(pool, mean, *c.q.Headroom)
		})
	case *measure.Raw:
		outs = c.raw()
	case *measure.EngineState:
		if n.Serving {
			outs = c.serving()
		} else {
			outs = c.engineState()
		}
	case *measure.PerGPU:
		outs = c.perGPU(n)
	case *measure.LoRA, *measure.PD:
		// CheckEngineQuery refuses the queries that read them: the data source composes their answers.
		c.fail(fmt.Errorf("internal error: measure node %T is answered by the data source, not by an engine", n))
	default:
		c.fail(measure.Unhandled(n))
	}
	c.memo[n] = outs
	return outs
}

// fail stops the evaluation with err unless it has already stopped.
func (c *evalCtx) fail(err error) {
	if c.budget.err == nil {
		c.budget.err = err
	}
}

func aggOf(a measure.Agg) aggregation {
	if a == measure.Avg {
		return aggAvg
	}
	return aggSum
}

func scaleOf(f float64) float64 {
	if f == 0 {
		return 1
	}
	return f
}

// divide is a Div's form as a step function; like derive.Ratio it gives no value rather than ±Inf.
func divide(f measure.Form) func(n, d float64) (float64, bool) {
	switch f {
	case measure.OnePlus:
		return derive.MeanAcceptanceLength
	case measure.UsedPercent:
		return derive.KVUsagePercentFromBlocks
	}
	return derive.Ratio
}

// signal is the node's signal, or the query's latency family when the node names none.
func (c *evalCtx) signal(s vllm.Signal) vllm.Signal {
	if len(s.Names) == 0 {
		return c.q.LatencySignal()
	}
	return s
}

// join combines two evaluated nodes step by step on equal reported labels (ignoring one label of the left side,
// which the result keeps), as PromQL's binary operators match series; f may refuse a step (a zero divisor). Every
// ratio of the catalog is one, run for each series at each new step: the series are matched by key without a copy
// of their labels, and their points by walking both in time order.
func join(left, right []Output, ignoring string, f func(l, r float64) (float64, bool)) []Output {
	index := make(map[string][]derive.Point, len(right))
	for _, r := range right {
		index[LabelKey(r.Labels)] = byTime(r.Points)
	}
	var keep func(string) bool // nil: every label
	if ignoring != "" {
		keep = func(k string) bool { return k != ignoring }
	}
	var outs []Output
	for _, l := range left {
		rp, ok := index[labelKey(l.Labels, keep)]
		if !ok {
			continue
		}
		o := Output{Labels: l.Labels}
		j := 0
		for i, p := range l.Points {
			if i > 0 && p.T < l.Points[i-1].T { // out of time order: look from the start
				j = 0
			}
			for j < len(rp) && rp[j].T < p.T {
				j++
			}
			if j == len(rp) || rp[j].T != p.T {
				continue
			}
			if v, ok := f(p.V, rp[j].V); ok {
				if o.Points == nil {
					o.Points = make([]derive.Point, 0, len(l.Points)-i)
				}
				o.Points = append(o.Points, derive.Point{T: p.T, V: v})
			}
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

// byTime is pts in increasing time, one point per time (the last of those at one time, as a map by time would keep):
// pts itself, as evaluated series are, or else a sorted copy.
func byTime(pts []derive.Point) []derive.Point {
	ordered := true
	for i := 1; i < len(pts) && ordered; i++ {
		ordered = pts[i].T > pts[i-1].T
	}
	if ordered {
		return pts
	}
	sorted := slices.Clone(pts)
	slices.SortStableFunc(sorted, func(a, b derive.Point) int { return cmp.Compare(a.T, b.T) })
	out := sorted[:0]
	for _, p := range sorted {
		if len(out) > 0 && out[len(out)-1].T == p.T {
			out[len(out)-1] = p
			continue
		}
		out = append(out, p)
	}
	return out
}

// fetchUnless fetches a gauge on the endpoints that expose none of unless: a fleet mixing versions gets each
// endpoint's value from the best source it has, which another node of the formula reads.
func (c *evalCtx) fetchUnless(sig vllm.Signal, unless []vllm.Signal, match []measure.Matcher, keep []string) []input {
	var m nameMemo
	unlessMemo := make([]nameMemo, len(unless))
	return c.fetchNamed(func(ep endpointNames) (string, bool) {
		for i, u := range unless {
			if _, ok := unlessMemo[i].resolve(ep, u); ok {
				return "", false
			}
		}
		return m.resolve(ep, sig)
	}, match, c.instantReads(), keep...)
}

// infoProduct turns an info gauge's numeric labels into a value per series: their product, where all are positive.
// Each series takes the model of ModelFrom's series on its endpoint and engine, which also applies the model filter.
func (c *evalCtx) infoProduct(n *measure.InfoProduct) []input {
	unfiltered := *c // the info gauge names no model: read it without the model filter (budget and memo shared)
	unfiltered.modelRe = nil
	ins := unfiltered.fetch(n.Signal, "", nil, c.instantReads())
	var models map[string]string // endpoint \x00 engine → model_name
	if len(n.ModelFrom.Names) > 0 {
		models = map[string]string{}
		for _, m := range c.fetch(n.ModelFrom, "", nil, c.instantReads()) {
			models[m.endpoint+"\x00"+m.labels[vllm.RankOutputLabel]] = m.labels["model_name"]
		}
	}
	out := ins[:0:0]
	for _, in := range ins {
		if models != nil {
			model, ok := models[in.endpoint+"\x00"+in.labels[vllm.RankOutputLabel]]
			if !ok {
				continue
			}
			in.relabel(copyLabels(in.labels))
			delete(in.labels, "model_name")
			if model != "" {
				in.labels["model_name"] = model
			}
		}
		v := 1.0
		for _, l := range n.Labels {
			x, err := strconv.ParseFloat(in.series.Labels.Get(l), 64)
			if err != nil || !(x > 0) {
				v = math.NaN()
				break
			}
			v *= x
		}
		if math.IsNaN(v) {
			continue
		}
		pts := make([]derive.Point, len(in.series.Points))
		for i, p := range in.series.Points {
			pts[i] = derive.Point{T: p.T, V: v}
			if derive.IsStale(p.V) {
				pts[i].V = p.V
			}
		}
		out = append(out, in.withPoints(pts))
	}
	return out
}

// balance evaluates a dp_balance output: each rank's load (the load node per engine / DP rank, Ascend's
// API-server process left out) or, across the ranks of each reported group (all selected ranks, or per endpoint
// or model), one imbalance score: max/mean, coefficient of variation, or idle ranks while others queue.
func (c *evalCtx) balance(n *measure.Balance) []Output {
	rc := c.perRank()
	loads := schedulerRanks(rc.eval(n.Load))
	if n.Score == "" {
		return loads
	}
	waitingOf := map[string][]derive.Point{}
	for _, w := range schedulerRanks(rc.eval(n.Waiting)) {
		waitingOf[rankKey(w.Labels)] = w.Points
	}
	groups := map[string][]Output{}
	var order []string
	for _, l := range loads {
		k := LabelKey(c.scoreLabels(l.Labels))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], l)
	}
	var outs []Output
	var ranks []derive.RankLoad
	for _, k := range order {
		members := groups[k]
		o := Output{Labels: c.scoreLabels(members[0].Labels)}
		// Each rank's load and waiting queue are read at the steps in turn, so a cursor into each of their points
		// (ascending, one per step) finds a step's point without searching.
		load, waiting := make([]cursor, len(members)), make([]cursor, len(members))
		keys := make([]string, len(members))
		for j, mem := range members {
			keys[j] = rankKey(mem.Labels)
			load[j].points, waiting[j].points = mem.Points, waitingOf[keys[j]]
		}
		for _, t := range c.steps {
			ranks = ranks[:0]
			for j := range members {
				v, ok := load[j].at(t)
				if !ok {
					continue
				}
				w, _ := waiting[j].at(t)
				ranks = append(ranks, derive.RankLoad{Rank: keys[j], Load: v, Waiting: w})
			}
			b, ok := derive.DPBalance(ranks)
			if !ok || math.IsNaN(b.MaxOverMean) {
				continue
			}
			v := b.MaxOverMean
			switch n.Score {
			case measure.ScoreCV:
				v = b.CV
			case measure.ScoreIdleWhileWaiting:
				v = float64(b.IdleWhileWaiting)
			}
			o.Points = append(o.Points, derive.Point{T: t, V: v})
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

// perRank is this evaluation grouped per engine / DP rank, sharing the read budget and memoizing on its own.
func (c *evalCtx) perRank() *evalCtx {
	if c.q.GroupBy == GroupEngine {
		return c
	}
	if c.rankCtx == nil {
		rc := *c
		rc.q.GroupBy = GroupEngine
		rc.memo = map[measure.Node][]Output{}
		c.rankCtx = &rc
	}
	return c.rankCtx
}

// engineState evaluates measure.EngineState: per engine 3 − asleep, or unhealthy where engine_healthy is 0, then
// the lowest per reported group.
func (c *evalCtx) engineState() []Output {
	rc := c.perRank()
	asleep := rc.gauge(rc.fetch(vllm.EngineSleepState, "", measure.AsleepMatch, rc.instantReads()), aggMax, 1)
	anyModel := *rc // engine_healthy names no model: a model filter must not hide an unhealthy engine
	anyModel.modelRe = nil
	unhealthy := map[string]map[int64]bool{}
	for _, h := range anyModel.gauge(anyModel.fetch(vllm.EngineHealthy, "", nil, rc.instantReads()), aggMin, 1) {
		at := map[int64]bool{}
		for _, p := range h.Points {
			at[p.T] = p.V == 0
		}
		unhealthy[h.Labels["endpoint"]+"\xff"+h.Labels[vllm.RankOutputLabel]] = at
	}
	groups := map[string]*Output{}
	var order []string
	for _, a := range asleep {
		l := c.groupLabels(a.Labels)
		k := LabelKey(l)
		g, ok := groups[k]
		if !ok {
			g = &Output{Labels: l}
			groups[k] = g
			order = append(order, k)
		}
		sick := unhealthy[a.Labels["endpoint"]+"\xff"+a.Labels[vllm.RankOutputLabel]]
		for _, p := range a.Points {
			v := float64(measure.StateOnline) - p.V
			if sick[p.T] {
				v = measure.StateUnhealthy
			}
			g.Points = append(g.Points, derive.Point{T: p.T, V: v})
		}
	}
	outs := make([]Output, 0, len(order))
	for _, k := range order {
		outs = append(outs, Output{Labels: groups[k].Labels, Points: lowestPerStep(groups[k].Points)})
	}
	return outs
}

// serving turns per-group states into measure.EngineState's Serving count: at each step, the group's engines
// online; 0 where none is but one reported within the window (a stale marker ends an engine's points when its
// endpoint's scrapes fail).
func (c *evalCtx) serving() []Output {
	engines := c.perRank().engineState()
	groups := map[string]*Output{}
	var order []string
	perGroup := map[string][]map[int64]float64{}
	for _, e := range engines {
		l := c.groupLabels(e.Labels)
		k := LabelKey(l)
		if _, ok := groups[k]; !ok {
			groups[k] = &Output{Labels: l}
			order = append(order, k)
		}
		at := make(map[int64]float64, len(e.Points))
		for _, p := range e.Points {
			at[p.T] = p.V
		}
		perGroup[k] = append(perGroup[k], at)
	}
	outs := make([]Output, 0, len(order))
	for _, k := range order {
		g := groups[k]
		last := int64(math.MinInt64) // the newest step any engine of the group reported at
		for _, t := range c.steps {
			n, seen := 0, false
			for _, at := range perGroup[k] {
				if v, ok := at[t]; ok {
					seen = true
					if v == measure.StateOnline {
						n++
					}
				}
			}
			if seen {
				last = t
			} else if last == math.MinInt64 || t-last >= c.window {
				continue
			}
			g.Points = append(g.Points, derive.Point{T: t, V: float64(n)})
		}
		if len(g.Points) > 0 {
			outs = append(outs, *g)
		}
	}
	return outs
}

// perGPU evaluates measure.PerGPU: the counters' summed rates over the peak, where their summed value is above 0.
func (c *evalCtx) perGPU(n *measure.PerGPU) []Output {
	add := func(a, b float64) (float64, bool) { return a + b, true }
	var rates, totals []Output
	for i, sig := range n.Signals {
		r := c.rate(c.fetch(sig, "", nil, c.rateReads()))
		t := c.gauge(c.fetch(sig, "", nil, c.instantReads()), aggSum, 1)
		if i == 0 {
			rates, totals = r, t
			continue
		}
		rates, totals = join(rates, r, "", add), join(totals, t, "", add)
	}
	peak := 1.0
	switch n.Peak {
	case measure.PeakFlops:
		peak = *c.q.PeakTFLOPS * 1e12
	case measure.PeakBandwidth:
		peak = *c.q.PeakMemoryTBps * 1e12
	}
	return join(rates, totals, "", func(rate, total float64) (float64, bool) { return rate / peak, total > 0 })
}

// lowestPerStep keeps, of points of several series, the lowest value at each step, in time order.
func lowestPerStep(pts []derive.Point) []derive.Point {
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	out := pts[:0]
	for _, p := range pts {
		if n := len(out); n > 0 && out[n-1].T == p.T {
			out[n-1].V = math.Min(out[n-1].V, p.V)
			continue
		}
		out = append(out, p)
	}
	return out
}

// schedulerRanks drops Ascend's API-server process (dp="-1"), which is not a DP rank.
func schedulerRanks(outs []Output) []Output {
	kept := outs[:0:0]
	for _, o := range outs {
		if o.Labels[vllm.AscendRankOutputLabel] != vllm.APIServerDP {
			kept = append(kept, o)
		}
	}
	return kept
}

// scoreLabels are the labels an imbalance score is reported under.
func (c *evalCtx) scoreLabels(l map[string]string) map[string]string {
	out := map[string]string{}
	switch c.q.GroupBy {
	case GroupEndpoint:
		out["endpoint"] = l["endpoint"]
	case GroupModel:
		out["model_name"] = l["model_name"]
	}
	return out
}

// rankKey identifies a rank across endpoints, since ranks behind different API servers reuse the same index.
func rankKey(l map[string]string) string {
	r := l[vllm.RankOutputLabel]
	if r == "" {
		r = l[vllm.AscendRankOutputLabel]
	}
	return l["endpoint"] + "/" + r
}

// cursor reads a series' points (ascending by time) at ascending times.
type cursor struct {
	points []derive.Point
	next   int
}

// at returns the value of the point at time t, if there is one; t never decreases between calls.
func (c *cursor) at(t int64) (float64, bool) {
	for c.next < len(c.points) && c.points[c.next].T < t {
		c.next++
	}
	if c.next < len(c.points) && c.points[c.next].T == t {
		return c.points[c.next].V, true
	}
	return 0, false
}

// raw returns any series by name: gauges and counters as exposed, histograms as bucket values or quantiles.
func (c *evalCtx) raw() []Output {
	name := c.q.Metric
	// Inputs of every endpoint are aggregated together, so groupBy model or fleet sums across endpoints as
	// Prometheus mode's sum does.
	buckets := func(ep endpointNames) (string, bool) { return name + "_bucket", ep.names[name+"_bucket"] }
	var quantileIns, bucketIns, plainIns []input
	if c.q.Histogram == HistogramQuantiles {
		quantileIns = c.fetchNamed(buckets, nil, c.rateReads())
	} else {
		bucketIns = c.fetchNamed(buckets, nil, c.instantReads(), "le")
	}
	for _, ep := range c.endpoints {
		if !ep.names[name+"_bucket"] && ep.names[name] {
			plainIns = append(plainIns, c.rawInputs(ep.name, name)...)
		}
	}
	var outs []Output
	if len(quantileIns) > 0 {
		outs = append(outs, named(c.quantiles(quantileIns, c.q.Quantiles), name)...)
	}
	if len(bucketIns) > 0 {
		outs = append(outs, named(c.gauge(bucketIns, aggSum, 1), name+"_bucket")...)
	}
	if len(plainIns) > 0 {
		outs = append(outs, named(c.gauge(plainIns, aggSum, 1), name)...)
	}
	return outs
}

func named(outs []Output, measure string) []Output {
	for i := range outs {
		outs[i].Measure = measure
	}
	return outs
}

func (c *evalCtx) rawInputs(endpoint, name string) []input {
	ins := c.fetchName(endpoint, name, nil, c.instantReads())
	for i := range ins {
		ins[i].relabel(copyLabels(ins[i].labels)) // fetchName's maps may be shared between series
		for _, l := range ins[i].series.Labels {
			if _, ok := ins[i].labels[l.Name]; !ok && l.Value != "" { // empty is absent, as in Prometheus
				ins[i].labels[l.Name] = l.Value
			}
		}
	}
	return ins
}

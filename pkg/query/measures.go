package query

import (
	"fmt"
	"math"
	"strconv"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// measure dispatches one measure of the query's type.
func (c *evalCtx) measure(m string) ([]Output, error) {
	switch c.q.QueryType {
	case TypeKVCacheUsage:
		return c.kvCache(m), nil
	case TypeSpecDecode:
		return c.specDecode(m), nil
	case TypeDPBalance:
		return c.dpBalance(m), nil
	case TypeLatency:
		return c.latency(m)
	case TypeThroughput:
		return c.throughput(m), nil
	case TypeQueue:
		return c.queue(m), nil
	case TypeCache:
		return c.cache(m), nil
	case TypeCapacity:
		return c.capacity(), nil
	case TypeRaw:
		return c.raw(), nil
	}
	return nil, fmt.Errorf("query type %q is not supported", c.q.QueryType)
}

// kvCache reports KV-cache usage percent from whichever source each endpoint has: the Ascend profiler's
// per-DP block gauges where present (they are what Ascend operators watch), else vLLM's own gauge (V1 name, then
// the pre-0.9 name), else Dynamo's.
func (c *evalCtx) kvCache(m string) []Output {
	if m == "blocks" {
		var outs []Output
		for _, s := range []struct {
			sig     vllm.Signal
			measure string
		}{
			{vllm.AscendTotalBlocks, "total_blocks"}, {vllm.AscendFreeBlocks, "free_blocks"},
			{vllm.AscendAllocatedBlocks, "allocated_blocks"}, {vllm.DynamoTotalBlocks, "total_blocks"},
			{vllm.DynamoActiveBlocks, "allocated_blocks"},
		} {
			outs = append(outs, c.gauge(c.fetch(s.sig, ""), aggSum, s.measure, "short", 1)...)
		}
		return append(outs, c.gauge(c.cacheConfigBlocks(), aggSum, "total_blocks", "short", 1)...)
	}
	var outs []Output
	for _, ep := range c.endpointsBySource() {
		switch {
		case ep.ascend:
			free := c.onEndpoint(ep.name, vllm.AscendFreeBlocks, "")
			total := c.onEndpoint(ep.name, vllm.AscendTotalBlocks, "")
			outs = append(outs, c.gaugeRatio(free, total, "kv_usage", "percent", func(f, t float64) (float64, bool) {
				return derive.KVUsagePercentFromBlocks(f, t)
			})...)
		case ep.vllm:
			outs = append(outs, c.gauge(c.onEndpoint(ep.name, vllm.KVUsage, ""), aggAvg, "kv_usage", "percent", 100)...)
		case ep.dynamo:
			outs = append(outs, c.gauge(c.onEndpoint(ep.name, vllm.DynamoKVUsage, ""), aggAvg, "kv_usage", "percent", 100)...)
		}
	}
	return outs
}

type endpointSource struct {
	name                 string
	ascend, vllm, dynamo bool
}

// endpointsBySource says which KV-usage source each selected endpoint has.
func (c *evalCtx) endpointsBySource() []endpointSource {
	var out []endpointSource
	for _, ep := range c.endpoints {
		has := func(n string) bool { return ep.names[n] }
		_, ascend := vllm.AscendFreeBlocks.Name(has)
		_, v := vllm.KVUsage.Name(has)
		_, d := vllm.DynamoKVUsage.Name(has)
		out = append(out, endpointSource{name: ep.name, ascend: ascend, vllm: v, dynamo: d})
	}
	return out
}

// fetchUnless fetches a V0 gauge only on endpoints that lack the V1 counter that replaced it, so a fleet mixing
// versions gets each endpoint's value from the best source it has.
func (c *evalCtx) fetchUnless(gauge, counter vllm.Signal) []input {
	var out []input
	for _, ep := range c.endpoints {
		has := func(n string) bool { return ep.names[n] }
		if _, ok := counter.Name(has); ok {
			continue
		}
		if base, ok := gauge.Name(has); ok {
			out = append(out, c.fetchName(ep.name, base)...)
		}
	}
	return out
}

// onEndpoint fetches a signal on one endpoint only.
func (c *evalCtx) onEndpoint(endpoint string, sig vllm.Signal, suffix string, keep ...string) []input {
	for _, ep := range c.endpoints {
		if ep.name != endpoint {
			continue
		}
		if base, ok := sig.Name(func(n string) bool { return ep.names[n] }); ok {
			return c.fetchName(endpoint, base+suffix, keep...)
		}
	}
	return nil
}

// cacheConfigBlocks turns vllm:cache_config_info's num_gpu_blocks label into a gauge per engine.
func (c *evalCtx) cacheConfigBlocks() []input {
	ins := c.fetch(vllm.CacheConfig, "")
	out := ins[:0:0]
	for _, in := range ins {
		n, err := strconv.ParseFloat(in.series.Labels.Get("num_gpu_blocks"), 64)
		if err != nil || n <= 0 {
			continue
		}
		pts := make([]derive.Point, len(in.series.Points))
		for i, p := range in.series.Points {
			pts[i] = derive.Point{T: p.T, V: n}
			if derive.IsStale(p.V) {
				pts[i].V = p.V
			}
		}
		in.series.Points = pts
		out = append(out, in)
	}
	return out
}

// gaugeRatio combines two grouped gauges step by step, joined on their reported labels.
func (c *evalCtx) gaugeRatio(num, den []input, measure, unit string, f func(n, d float64) (float64, bool)) []Output {
	ns := c.gauge(num, aggSum, "", "", 1)
	ds := c.gauge(den, aggSum, "", "", 1)
	dIndex := map[string]map[int64]float64{}
	for _, d := range ds {
		m := map[int64]float64{}
		for _, p := range d.Points {
			m[p.T] = p.V
		}
		dIndex[LabelKey(d.Labels)] = m
	}
	var outs []Output
	for _, n := range ns {
		dm, ok := dIndex[LabelKey(n.Labels)]
		if !ok {
			continue
		}
		o := Output{Measure: measure, Labels: n.Labels, Unit: unit}
		for _, p := range n.Points {
			if d, ok := dm[p.T]; ok {
				if v, ok := f(p.V, d); ok {
					o.Points = append(o.Points, derive.Point{T: p.T, V: v})
				}
			}
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

// specDecode reports speculative-decoding effectiveness from V1's counters, or V0's gauges where that is all.
func (c *evalCtx) specDecode(m string) []Output {
	switch m {
	case "acceptance_rate":
		outs := c.ratio(c.fetch(vllm.SpecAcceptedTokens, ""), c.fetch(vllm.SpecDraftTokens, ""), "acceptance_rate", "percentunit", derive.AcceptanceRate)
		return append(outs, c.gauge(c.fetchUnless(vllm.V0AcceptanceRate, vllm.SpecDraftTokens), aggAvg, "acceptance_rate", "percentunit", 1)...)
	case "acceptance_length":
		return c.ratio(c.fetch(vllm.SpecAcceptedTokens, ""), c.fetch(vllm.SpecDrafts, ""), "acceptance_length", "short", derive.MeanAcceptanceLength)
	case "per_position":
		// Per-position acceptance is accepted-at-position over drafts; drafts carry no position label, so the
		// denominator is joined without it.
		num := c.fetch(vllm.SpecAcceptedPerPos, "", "position")
		den := c.fetch(vllm.SpecDrafts, "")
		var outs []Output
		byPos := map[string][]input{}
		var order []string
		for _, in := range num {
			p := in.labels["position"]
			if _, ok := byPos[p]; !ok {
				order = append(order, p)
			}
			delete(in.labels, "position")
			byPos[p] = append(byPos[p], in)
		}
		for _, p := range order {
			for _, o := range c.ratio(byPos[p], den, "acceptance_per_position", "percentunit", derive.Ratio) {
				o.Labels = copyLabels(o.Labels)
				o.Labels["position"] = p
				outs = append(outs, o)
			}
		}
		return outs
	case "num_spec_tokens":
		return c.gauge(c.fetch(vllm.AscendNumSpecTokens, ""), aggAvg, "num_spec_tokens", "short", 1)
	case "efficiency":
		return c.gauge(c.fetch(vllm.V0Efficiency, ""), aggAvg, "efficiency", "percentunit", 1)
	}
	return nil
}

// latency reports quantiles (or the mean) of a latency histogram.
func (c *evalCtx) latency(m string) ([]Output, error) {
	sig, ok := vllm.LatencyMetrics[c.q.Metric]
	if !ok {
		name, isTimer := cutPrefix(c.q.Metric, "timer:")
		if !isTimer {
			return nil, fmt.Errorf("latency metric %q is unknown", c.q.Metric)
		}
		if sig, ok = vllm.TimerSignal(name); !ok {
			return nil, fmt.Errorf("timer %q is not a vllm_profiling_* histogram", name)
		}
	}
	measure := c.q.Metric
	if m == "mean" {
		return c.ratio(c.fetch(sig, "_sum"), c.fetch(sig, "_count"), measure+"_mean", sig.Unit, derive.HistogramMean), nil
	}
	return c.quantiles(c.fetch(sig, "_bucket"), measure, sig.Unit, c.q.Quantiles), nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// throughput reports token and request rates.
func (c *evalCtx) throughput(m string) []Output {
	switch m {
	case "generation_tokens":
		return c.rate(c.fetch(vllm.GenerationTokens, ""), "generation_tokens_per_second", "short")
	case "prompt_tokens":
		return c.rate(c.fetch(vllm.PromptTokens, ""), "prompt_tokens_per_second", "short")
	case "requests":
		return c.rate(c.fetch(vllm.RequestSuccess, "", "finished_reason"), "requests_per_second", "reqps")
	case "ascend_input":
		return c.rate(c.fetch(vllm.AscendInputTokens, ""), "input_tokens_per_second", "short")
	case "ascend_output":
		return c.rate(c.fetch(vllm.AscendOutputTokens, ""), "output_tokens_per_second", "short")
	}
	return nil
}

// queue reports scheduler queues.
func (c *evalCtx) queue(m string) []Output {
	switch m {
	case "running":
		return c.gauge(c.fetch(vllm.Running, ""), aggSum, "running", "short", 1)
	case "waiting":
		return c.gauge(c.fetch(vllm.Waiting, ""), aggSum, "waiting", "short", 1)
	case "waiting_by_reason":
		return c.gauge(c.fetch(vllm.WaitingByReason, "", "reason"), aggSum, "waiting", "short", 1)
	case "swapped":
		return c.gauge(c.fetch(vllm.Swapped, ""), aggSum, "swapped", "short", 1)
	case "ascend_batch_size", "ascend_waiting_batch_size":
		sig := vllm.AscendBatchSize
		if m == "ascend_waiting_batch_size" {
			sig = vllm.AscendWaitingBatchSize
		}
		return c.ratio(c.fetch(sig, "_sum"), c.fetch(sig, "_count"), m+"_avg", "short", derive.HistogramMean)
	}
	return nil
}

// cache reports preemptions and cache hit rates.
func (c *evalCtx) cache(m string) []Output {
	switch m {
	case "preemptions":
		return c.rate(c.fetch(vllm.Preemptions, ""), "preemptions_per_second", "short")
	case "prefix_hit_rate":
		outs := c.ratio(c.fetch(vllm.PrefixHits, ""), c.fetch(vllm.PrefixQueries, ""), "prefix_hit_rate", "percentunit", derive.PrefixCacheHitRate)
		return append(outs, c.gauge(c.fetchUnless(vllm.V0PrefixHitRate, vllm.PrefixQueries), aggAvg, "prefix_hit_rate", "percentunit", 1)...)
	case "external_prefix_hit_rate":
		return c.ratio(c.fetch(vllm.ExternalPrefixHits, ""), c.fetch(vllm.ExternalPrefixQueries, ""), "external_prefix_hit_rate", "percentunit", derive.PrefixCacheHitRate)
	case "mm_hit_rate":
		return c.ratio(c.fetch(vllm.MMCacheHits, ""), c.fetch(vllm.MMCacheQueries, ""), "mm_hit_rate", "percentunit", derive.PrefixCacheHitRate)
	}
	return nil
}

// dpBalance reports each rank's load and, across the selected ranks (per endpoint or model with groupBy),
// the imbalance: max/mean, coefficient of variation, and idle ranks while others queue.
func (c *evalCtx) dpBalance(m string) []Output {
	loadQ := *c
	loadQ.q.GroupBy = GroupEngine
	lc := &loadQ
	var loads []Output
	switch m {
	case "running":
		loads = lc.gauge(lc.schedulerRanks(lc.fetch(vllm.Running, "")), aggSum, "load", "short", 1)
	case "waiting":
		loads = lc.gauge(lc.schedulerRanks(lc.fetch(vllm.Waiting, "")), aggSum, "load", "short", 1)
	case "running_waiting":
		loads = lc.gauge(lc.schedulerRanks(append(lc.fetch(vllm.Running, ""), lc.fetch(vllm.Waiting, "")...)), aggSum, "load", "short", 1)
	case "kv_usage":
		loads = lc.kvCache("usage")
		for i := range loads {
			loads[i].Measure = "load"
		}
	case "generation_tps":
		loads = lc.rate(lc.schedulerRanks(lc.fetch(vllm.GenerationTokens, "")), "load", "short")
	}
	waiting := lc.gauge(lc.schedulerRanks(lc.fetch(vllm.Waiting, "")), aggSum, "waiting", "short", 1)
	waitingAt := map[string]map[int64]float64{}
	for _, w := range waiting {
		m := map[int64]float64{}
		for _, p := range w.Points {
			m[p.T] = p.V
		}
		waitingAt[rankKey(w.Labels)] = m
	}

	// Scores are computed per reported group: all selected ranks, or per endpoint / model.
	scoreGroups := map[string][]Output{}
	var order []string
	for _, l := range loads {
		k := LabelKey(c.scoreLabels(l.Labels))
		if _, ok := scoreGroups[k]; !ok {
			order = append(order, k)
		}
		scoreGroups[k] = append(scoreGroups[k], l)
	}
	var outs []Output
	if c.q.Score == "" {
		outs = append(outs, loads...)
	}
	for _, k := range order {
		members := scoreGroups[k]
		labels := c.scoreLabels(members[0].Labels)
		maxMean := Output{Measure: "max_over_mean", Labels: labels, Unit: "short"}
		cv := Output{Measure: "cv", Labels: labels, Unit: "short"}
		idle := Output{Measure: "idle_while_waiting", Labels: labels, Unit: "short"}
		for _, t := range c.steps {
			var ranks []derive.RankLoad
			for _, mem := range members {
				v, ok := pointAt(mem.Points, t)
				if !ok {
					continue
				}
				rk := rankKey(mem.Labels)
				ranks = append(ranks, derive.RankLoad{Rank: rk, Load: v, Waiting: waitingAt[rk][t]})
			}
			b, ok := derive.DPBalance(ranks)
			if !ok || math.IsNaN(b.MaxOverMean) {
				continue
			}
			maxMean.Points = append(maxMean.Points, derive.Point{T: t, V: b.MaxOverMean})
			cv.Points = append(cv.Points, derive.Point{T: t, V: b.CV})
			idle.Points = append(idle.Points, derive.Point{T: t, V: float64(b.IdleWhileWaiting)})
		}
		for _, o := range []Output{maxMean, cv, idle} {
			if len(o.Points) > 0 && (c.q.Score == "" || c.q.Score == o.Measure) {
				outs = append(outs, o)
			}
		}
	}
	return outs
}

// schedulerRanks drops Ascend's API-server process (dp="-1"), which is not a DP rank.
func (c *evalCtx) schedulerRanks(ins []input) []input {
	out := ins[:0:0]
	for _, in := range ins {
		if in.labels[vllm.AscendRankOutputLabel] != vllm.APIServerDP {
			out = append(out, in)
		}
	}
	return out
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

func pointAt(points []derive.Point, t int64) (float64, bool) {
	for _, p := range points {
		if p.T == t {
			return p.V, true
		}
	}
	return 0, false
}

// capacity applies the planning formula: KV pool tokens ÷ mean tokens per request, less headroom.
func (c *evalCtx) capacity() []Output {
	pool := c.poolTokens()
	prompt := c.fetch(vllm.PromptTokensHist, "_sum")
	gen := c.fetch(vllm.GenerationTokensHist, "_sum")
	count := c.fetch(vllm.PromptTokensHist, "_count")
	pg, gg, cg := c.groupInputs(prompt), c.groupInputs(gen), c.groupInputs(count)
	pr, gr, cr := c.rates(pg), c.rates(gg), c.rates(cg)
	index := func(gs []*group) map[string]int {
		m := map[string]int{}
		for i, g := range gs {
			m[g.key] = i
		}
		return m
	}
	gi, ci := index(gg), index(cg)
	var outs []Output
	poolByKey := map[string]Output{}
	for _, p := range pool {
		poolByKey[LabelKey(p.Labels)] = p
		outs = append(outs, p)
	}
	for i, g := range pg {
		j, ok1 := gi[g.key]
		k, ok2 := ci[g.key]
		if !ok1 || !ok2 {
			continue
		}
		mean := Output{Measure: "mean_tokens_per_request", Labels: g.labels, Unit: "short"}
		capOut := Output{Measure: "capacity_requests", Labels: g.labels, Unit: "short"}
		p, hasPool := poolByKey[g.key]
		for _, t := range c.steps {
			pv, ok1 := pr[i][t]
			gv, ok2 := gr[j][t]
			cv, ok3 := cr[k][t]
			if !ok1 || !ok2 || !ok3 {
				continue
			}
			m, ok := derive.MeanTokensPerRequest(pv, gv, cv)
			if !ok {
				continue
			}
			mean.Points = append(mean.Points, derive.Point{T: t, V: m})
			if !hasPool {
				continue
			}
			if poolTokens, ok := pointAt(p.Points, t); ok {
				if v, ok := derive.ConcurrentCapacity(poolTokens, m, *c.q.Headroom); ok {
					capOut.Points = append(capOut.Points, derive.Point{T: t, V: v})
				}
			}
		}
		for _, o := range []Output{capOut, mean} {
			if len(o.Points) > 0 {
				outs = append(outs, o)
			}
		}
	}
	return outs
}

// poolTokens is num_gpu_blocks × block_size per engine from vllm:cache_config_info.
func (c *evalCtx) poolTokens() []Output {
	ins := c.fetch(vllm.CacheConfig, "")
	out := ins[:0:0]
	for _, in := range ins {
		blocks, err1 := strconv.ParseFloat(in.series.Labels.Get("num_gpu_blocks"), 64)
		size, err2 := strconv.ParseFloat(in.series.Labels.Get("block_size"), 64)
		if err1 != nil || err2 != nil || blocks <= 0 || size <= 0 {
			continue
		}
		pts := make([]derive.Point, len(in.series.Points))
		for i, p := range in.series.Points {
			pts[i] = derive.Point{T: p.T, V: derive.KVPoolTokens(blocks, size)}
			if derive.IsStale(p.V) {
				pts[i].V = p.V
			}
		}
		in.series.Points = pts
		out = append(out, in)
	}
	return c.gauge(out, aggSum, "kv_pool_tokens", "short", 1)
}

// raw returns any series by name: gauges and counters as exposed, histograms as bucket values or quantiles.
func (c *evalCtx) raw() []Output {
	name := c.q.Metric
	// Inputs of every endpoint are aggregated together, so groupBy model or fleet sums across endpoints as
	// Prometheus mode's sum does.
	var quantileIns, bucketIns, plainIns []input
	for _, ep := range c.endpoints {
		switch {
		case ep.names[name+"_bucket"] && c.q.Histogram == "quantiles":
			quantileIns = append(quantileIns, c.fetchName(ep.name, name+"_bucket")...)
		case ep.names[name+"_bucket"]:
			bucketIns = append(bucketIns, c.fetchName(ep.name, name+"_bucket", "le")...)
		case ep.names[name]:
			plainIns = append(plainIns, c.rawInputs(ep.name, name)...)
		}
	}
	var outs []Output
	if len(quantileIns) > 0 {
		outs = append(outs, c.quantiles(quantileIns, name, "", c.q.Quantiles)...)
	}
	if len(bucketIns) > 0 {
		outs = append(outs, c.gauge(bucketIns, aggSum, name+"_bucket", "", 1)...)
	}
	if len(plainIns) > 0 {
		outs = append(outs, c.gauge(plainIns, aggSum, name, "", 1)...)
	}
	return outs
}

func (c *evalCtx) rawInputs(endpoint, name string) []input {
	ins := c.fetchName(endpoint, name)
	for i := range ins {
		for _, l := range ins[i].series.Labels {
			if _, ok := ins[i].labels[l.Name]; !ok && l.Value != "" { // empty is absent, as in Prometheus
				ins[i].labels[l.Name] = l.Value
			}
		}
	}
	return ins
}

package promapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Evaluator answers InferScope queries from a Prometheus-compatible server.
type Evaluator struct {
	Client    *Client
	Discovery *Discovery
	// ScrapeInterval is how often the server scrapes vLLM; it sets the minimum step and rate window.
	ScrapeInterval time.Duration

	replicas replicaCache // whether series come twice, from an HA pair without deduplication
	stores   storeCache   // the stores Thanos Query leaves out of every answer
	configs  configCache  // the cache configurations the KV pool's queries name
}

// Answer is a query's result with the PromQL that produced it.
type Answer struct {
	Result *query.Result
	Exprs  []Expr
}

// PromQL is the generated expressions, one per line with the measure they answer, for the query inspector.
func (a *Answer) PromQL() string {
	var b strings.Builder
	for i, e := range a.Exprs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# %s", e.Measure)
		if q := e.Labels["quantile"]; q != "" {
			fmt.Fprintf(&b, " quantile=%s", q)
		}
		if len(e.Quantiles) > 0 {
			qs := make([]string, len(e.Quantiles))
			for i, q := range e.Quantiles {
				qs[i] = query.FormatQuantile(q)
			}
			fmt.Fprintf(&b, " quantiles %s, histogram_quantile of", strings.Join(qs, ", "))
		}
		b.WriteString("\n" + e.PromQL)
	}
	return b.String()
}

// Eval generates the PromQL of a measure query for the names the server holds, runs every expression as a range
// query at direct mode's step and alignment, and returns outputs shaped as direct mode's.
func (ev *Evaluator) Eval(ctx context.Context, q query.Query, r query.Request) (*Answer, error) {
	res, rng, err := ev.begin(&q, r)
	if err != nil {
		return nil, err
	}
	from, to, window := rng.From, rng.To, rng.Window
	names, err := ev.Discovery.Names(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range scopes {
		if s.applies(q) {
			if q, err = s.narrow(ev, ctx, q); err != nil {
				return nil, err
			}
		}
	}
	facts, err := ev.facts(ctx, q, names, from, to, window)
	if err != nil {
		return nil, err
	}
	if q.Threshold != nil && q.ReadsAttainment() {
		if n := query.AttainmentNotice(q, q.LatencySignal(), facts.Bounds); n != "" {
			res.Notices = append(res.Notices, n)
		}
	}
	exprs, err := Generate(q, names, facts, window)
	if err != nil {
		return nil, err
	}
	if len(exprs) == 0 {
		res.Notices = append(res.Notices, query.EmptyNotice(q, func(vllm.Signal) bool { return false }, query.HolderPrometheus))
	}
	held := func(s vllm.Signal) bool { _, ok := s.Name(names.Has); return ok }
	// The replica check is a round trip of its own the first time: it runs beside the queries, and its notices go
	// where they always stood, before the queries' own.
	replicas := make(chan []string, 1)
	go func() { replicas <- ev.replicas.notices(ctx, ev.Client, to) }()
	at := len(res.Notices)
	rates := q.QueryType == query.TypeRaw && q.Histogram == query.HistogramQuantiles || measure.ReadsRates(q.Outputs())
	ans, err := ev.run(ctx, q, r, rng, res, exprs, held, rates)
	res.Notices = slices.Insert(res.Notices, at, <-replicas...)
	return ans, err
}

// facts looks up what a query's PromQL depends on besides the names: the KV cache configurations, the SLO
// attainment's bucket bounds and the summed histograms' layouts. The lookups run side by side: the first time, each
// is a round trip to a server busy answering the dashboard's other panels.
func (ev *Evaluator) facts(ctx context.Context, q query.Query, names Names, from, to time.Time, window time.Duration) (*Facts, error) {
	facts := &Facts{}
	var lookups []func() error
	if held := heldNames(names, vllm.CacheConfig); needsCacheConfig(q) && len(held) > 0 {
		lookups = append(lookups, func() (err error) {
			facts.CacheConfigs, err = ev.cacheConfigs(ctx, q, held, from.Add(-window-query.Lookback), to)
			return err
		})
	}
	if q.Threshold != nil && q.ReadsAttainment() {
		lookups = append(lookups, func() (err error) {
			facts.Bounds, err = ev.bucketBounds(ctx, q, names, from.Add(-window), to)
			return err
		})
	}
	if q.GroupBy != query.GroupEngine && q.GroupBy != query.GroupEndpoint {
		if buckets := summedBuckets(q, names); len(buckets) > 0 {
			lookups = append(lookups, func() (err error) {
				facts.Layouts, err = ev.Discovery.Layouts(ctx, buckets)
				return err
			})
		}
	}
	// The first error in the order above, whichever lookup failed first.
	for _, err := range parallel.Map(lookups, func(lookup func() error) error { return lookup() }) {
		if err != nil {
			return nil, err
		}
	}
	return facts, nil
}

// EvalPromQL runs a promql query's expression as it is (Grafana's interval macros expanded) at direct mode's step
// and alignment; series keep the server's labels.
func (ev *Evaluator) EvalPromQL(ctx context.Context, q query.Query, r query.Request) (*Answer, error) {
	res, rng, err := ev.begin(&q, r)
	if err != nil {
		return nil, err
	}
	exprs := []Expr{{PromQL: ExpandMacros(q.Expr, r.Interval, rng.Step, rng.Window, r.To.Sub(r.From)), AsIs: true}}
	return ev.run(ctx, q, r, rng, res, exprs, nil, true)
}

// begin checks a query and resolves its range; the result carries the range's notice.
func (ev *Evaluator) begin(q *query.Query, r query.Request) (*query.Result, query.Range, error) {
	if err := query.CheckEngineQuery(q); err != nil {
		return nil, query.Range{}, err
	}
	rng, err := query.ResolveRange(*q, r, ev.ScrapeInterval)
	if err != nil {
		return nil, rng, err
	}
	res := &query.Result{Step: rng.Step, Window: rng.Window}
	if rng.Notice != "" {
		res.Notices = append(res.Notices, rng.Notice)
	}
	return res, rng, nil
}

// scopes narrow a measure query to the targets direct mode would read, on a server that also scrapes others.
var scopes = []struct {
	applies func(query.Query) bool
	narrow  func(*Evaluator, context.Context, query.Query) (query.Query, error)
}{
	{func(q query.Query) bool { return q.QueryType == query.TypeRaw && q.Metric == vllm.Up }, (*Evaluator).restrictUpToVLLMJobs},
	{readsAPIServer, (*Evaluator).restrictToVLLMInstances},
}

// run sends the expressions as range queries at once and gathers their outputs; held (nil for the user's own
// PromQL) says which signals the server holds, for the notice of an empty answer; rates says the formulas take rates.
func (ev *Evaluator) run(ctx context.Context, q query.Query, r query.Request, rng query.Range, res *query.Result, exprs []Expr, held func(vllm.Signal) bool, rates bool) (*Answer, error) {
	from, to, step := rng.From, rng.To, rng.Step
	ans := &Answer{Result: res, Exprs: exprs}
	down := ev.stores.get(ctx, ev.Client)
	if len(down) > 0 && ev.Client.DenyPartial {
		return ans, DownStoresError(down)
	}
	type answer struct {
		m    model.Matrix
		warn []string
		err  error
	}
	answers := parallel.Map(exprs, func(e Expr) (a answer) {
		if e.Ratio != nil {
			return a // computed below, from the answers it divides
		}
		a.m, a.warn, a.err = ev.Client.QueryRange(ctx, e.PromQL, from, to, step)
		return a
	})
	var warnings []string
	for i, e := range exprs {
		if r := e.Ratio; r != nil && answers[r.Num].err == nil && answers[r.Den].err == nil {
			answers[i].m = divide(answers[r.Num].m, answers[r.Den].m, r.Factor)
		}
		warnings = append(warnings, answers[i].warn...)
	}
	for i, e := range exprs {
		if answers[i].err != nil {
			return ans, queryError(q, e, answers[i].err)
		}
		if len(e.Quantiles) > 0 {
			res.Outputs = append(res.Outputs, BucketQuantiles(q, e, answers[i].m)...)
			continue
		}
		res.Outputs = append(res.Outputs, Outputs(q, e, answers[i].m)...)
	}
	notices, truncated := WarningNotices(warnings, down)
	res.Notices = append(res.Notices, notices...)
	if len(res.Outputs) > query.MaxSeriesPerQuery {
		res.Outputs, truncated = res.Outputs[:query.MaxSeriesPerQuery], true
	}
	if truncated {
		res.Notices = append(res.Notices, query.TruncatedNotice(len(res.Outputs)))
	}
	res.Notices = append(res.Notices, ev.engineNotices(r, rates)...)
	if len(res.Outputs) == 0 && len(exprs) > 0 && held != nil {
		res.Notices = append(res.Notices, query.EmptyNotice(q, held, query.HolderPrometheus))
	}
	return ans, nil
}

// divide is num / (den > 0) * factor as PromQL evaluates it at each step: series matched on all their labels, a
// step answered where both have it and den is above zero, with num's labels.
func divide(num, den model.Matrix, factor float64) model.Matrix {
	byLabels := make(map[model.Fingerprint]*model.SampleStream, len(den))
	for _, s := range den {
		byLabels[s.Metric.Fingerprint()] = s
	}
	var out model.Matrix
	for _, n := range num {
		d := byLabels[n.Metric.Fingerprint()]
		if d == nil || !d.Metric.Equal(n.Metric) {
			continue
		}
		var vals []model.SamplePair
		j := 0
		for _, p := range n.Values {
			for j < len(d.Values) && d.Values[j].Timestamp < p.Timestamp {
				j++
			}
			if j < len(d.Values) && d.Values[j].Timestamp == p.Timestamp && d.Values[j].Value > 0 {
				vals = append(vals, model.SamplePair{Timestamp: p.Timestamp, Value: p.Value / d.Values[j].Value * model.SampleValue(factor)})
			}
		}
		if len(vals) > 0 {
			out = append(out, &model.SampleStream{Metric: n.Metric, Values: vals})
		}
	}
	return out
}

// How VictoriaMetrics' answers differ from Prometheus's (README "Engines"), said on the queries they affect.
const (
	// VictoriaRateNotice is on queries whose formulas take rates: MetricsQL's rate() does not extrapolate to the
	// window's edges and counts the sample before the window.
	VictoriaRateNotice = "VictoriaMetrics computes rates without Prometheus's extrapolation and counts the sample before the window: " +
		"values differ from Prometheus and direct mode by a few percent, more on sparse counters"
	// VictoriaLatencyOffset is VictoriaMetrics' default -search.latencyOffset.
	VictoriaLatencyOffset = 30 * time.Second
	// VictoriaRecentNotice is on ranges ending within the latency offset of now.
	VictoriaRecentNotice = "VictoriaMetrics leaves out the newest 30 s by default (-search.latencyOffset): the last steps of this range are empty"
)

// engineNotices say where the server's engine answers differently from Prometheus for this query.
func (ev *Evaluator) engineNotices(r query.Request, rates bool) []string {
	if !ev.Client.VictoriaMetrics() {
		return nil
	}
	var out []string
	if rates {
		out = append(out, VictoriaRateNotice)
	}
	if time.Since(r.To) < VictoriaLatencyOffset {
		out = append(out, VictoriaRecentNotice)
	}
	return out
}

// queryError names what failed; a rejected expression is reported as such, with the server's message, and still
// unwraps to the server's *Error.
func queryError(q query.Query, e Expr, err error) error {
	var pe *Error
	if errors.As(err, &pe) && pe.BadQuery() {
		if e.AsIs {
			return &rejected{"invalid PromQL: " + pe.Message, pe}
		}
		return &rejected{fmt.Sprintf("the server rejected the generated PromQL for %s (%s): %s", q.QueryType, e.Measure, pe.Message), pe}
	}
	return err
}

// rejected is an expression the server refused, described for the user.
type rejected struct {
	msg string
	err *Error
}

func (r *rejected) Error() string { return r.msg }
func (r *rejected) Unwrap() error { return r.err }

// restrictUpToVLLMJobs adds a job matcher to a raw `up` query (unless it has one) so that it covers the targets
// of the jobs that expose vLLM families, the way direct mode's up covers its configured endpoints.
func (ev *Evaluator) restrictUpToVLLMJobs(ctx context.Context, q query.Query) (query.Query, error) {
	if q.Labels["job"] != "" {
		return q, nil
	}
	jobs, err := ev.Discovery.Jobs(ctx)
	if err != nil || len(jobs) == 0 {
		return q, err
	}
	quoted := make([]string, len(jobs))
	for i, j := range jobs {
		quoted[i] = regexp.QuoteMeta(j)
	}
	labels := map[string]string{"job": strings.Join(quoted, "|")}
	for k, v := range q.Labels {
		labels[k] = v
	}
	q.Labels = labels
	return q, nil
}

// restrictToVLLMInstances adds an instance matcher (unless the query has one) so that the API server's other
// families count only on the instances that expose vLLM families, the way direct mode reads its configured
// endpoints only.
func (ev *Evaluator) restrictToVLLMInstances(ctx context.Context, q query.Query) (query.Query, error) {
	if q.Labels["instance"] != "" {
		return q, nil
	}
	instances, err := ev.Discovery.Instances(ctx)
	if err != nil || len(instances) == 0 {
		return q, err
	}
	labels := map[string]string{"instance": AnyOf(instances)}
	for k, v := range q.Labels {
		labels[k] = v
	}
	q.Labels = labels
	return q, nil
}

// readsAPIServer reports whether a query's measures read one of the API server's families besides vLLM's own
// (vllm.APIServerFamilies), which other targets of a shared server expose too: like up, they count only on vLLM's
// jobs.
func readsAPIServer(q query.Query) bool {
	for _, e := range measure.Select(q.QueryType, q.Measure) {
		for _, s := range e.Signals() {
			for _, n := range s.Names {
				if slices.Contains(vllm.APIServerFamilies, n) {
					return true
				}
			}
		}
	}
	return false
}

// needsCacheConfig reports whether the query's formulas read cache_config_info's labels as values.
func needsCacheConfig(q query.Query) bool {
	return measure.Reads(q.Outputs(), func(n measure.Node) bool {
		info, ok := n.(*measure.InfoProduct)
		return ok && info.Signal.ID == vllm.CacheConfig.ID
	})
}

// heldNames are the names of a signal the server holds, preferred first.
func heldNames(names Names, sig vllm.Signal) []string {
	var out []string
	for _, n := range sig.Names {
		if names.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// cacheConfigs lists the distinct num_gpu_blocks / block_size pairs of the selected endpoints, under any of the info
// gauge's held names.
func (ev *Evaluator) cacheConfigs(ctx context.Context, q query.Query, held []string, start, end time.Time) (out []CacheConfig, err error) {
	sels := make([]string, len(held))
	for i, sel := range held {
		if q.Endpoint != "" {
			sel += "{instance=~" + strconv.Quote(q.Endpoint) + "}"
		}
		sels[i] = sel
	}
	key := strings.Join(sels, "\n")
	switch out, a := ev.configs.get(key, start, end, time.Now()); a {
	case fresh:
		return out, nil
	case stale:
		ev.configs.lookup.start(ctx, func(ctx context.Context) {
			if out, err := ev.lookupConfigs(ctx, sels, start, end); err == nil {
				ev.configs.put(key, start, end, time.Now(), out)
			}
		})
		return out, nil
	}
	if out, err = ev.lookupConfigs(ctx, sels, start, end); err != nil {
		return nil, err
	}
	ev.configs.put(key, start, end, time.Now(), out)
	return out, nil
}

// lookupConfigs asks the server for the distinct cache configurations of the series sels select over start..end,
// sorted.
func (ev *Evaluator) lookupConfigs(ctx context.Context, sels []string, start, end time.Time) ([]CacheConfig, error) {
	var out []CacheConfig
	set := map[CacheConfig]bool{}
	tooMany := false
	_, err := ev.Client.EachSeries(ctx, sels, start, end, func(s model.Metric) error {
		c := CacheConfig{NumGPUBlocks: string(s["num_gpu_blocks"]), BlockSize: string(s["block_size"])}
		if !set[c] {
			if len(out) == maxCacheConfigs {
				tooMany = true
				return errStop
			}
			set[c] = true
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if tooMany {
		return nil, &Error{Message: fmt.Sprintf("the selected endpoints hold more than %d cache configurations (num_gpu_blocks, block_size); select fewer endpoints", maxCacheConfigs)}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].NumGPUBlocks+"/"+out[i].BlockSize < out[j].NumGPUBlocks+"/"+out[j].BlockSize
	})
	return out, nil
}

// maxCacheConfigs bounds the distinct cache configurations a KV-pool query writes into its PromQL, a term each: a
// fleet whose engines profiled their memory apart holds about one per engine.
const maxCacheConfigs = 4096

// configCache keeps cacheConfigs' answers for DefaultNamesTTL: every refresh of the capacity panels asked the server
// for the series of every engine's cache_config_info over the whole range (a tenth of Prometheus mode's CPU on a
// 256-endpoint fleet), for a handful of pairs that change when an engine restarts with another configuration. An
// answer serves a range it covers but for its newest DefaultNamesTTL: a pair no longer in the range only adds a term
// that selects nothing, and one that appears shows up within the TTL, as a new name does in Discovery. Past the TTL
// it serves while a background lookup asks again (lookup.go).
type configCache struct {
	mu      sync.Mutex
	answers map[string]configAnswer
	lookup  revalidator
}

// configAnswer is one selection's pairs over start..end, asked at fetched.
type configAnswer struct {
	start, end, fetched time.Time
	out                 []CacheConfig
}

// maxConfigAnswers bounds the selections kept (one per endpoint filter the panels use).
const maxConfigAnswers = 64

// get is the answer kept for key over start..end and how it stands: by when it was asked and by how much of the
// range's newest part it has not seen, whichever is older; expired for a range starting before it.
func (c *configCache) get(key string, start, end, now time.Time) ([]CacheConfig, age) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.answers[key]
	if !ok || start.Before(a.start) {
		return nil, expired
	}
	seen := fresh // a range ending before the answer's is covered
	if end.After(a.end) {
		seen = ageOf(a.end, end, DefaultNamesTTL)
	}
	return a.out, min(ageOf(a.fetched, now, DefaultNamesTTL), seen)
}

func (c *configCache) put(key string, start, end, now time.Time, out []CacheConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil || len(c.answers) >= maxConfigAnswers {
		c.answers = map[string]configAnswer{}
	}
	c.answers[key] = configAnswer{start: start, end: end, fetched: now, out: out}
}

// bucketBounds lists the upper bounds of the selected series of the query's latency histogram (their le values), as
// direct mode reads them from its series' labels (derive.BoundsAround picks the two around an SLO threshold).
func (ev *Evaluator) bucketBounds(ctx context.Context, q query.Query, names Names, start, end time.Time) ([]float64, error) {
	g := &gen{q: q, names: names, rankRe: q.Matchers().Engine}
	var sels []string
	for _, n := range g.held(q.LatencySignal()) {
		sels = append(sels, g.sel(n+"_bucket"))
	}
	if len(sels) == 0 {
		return nil, nil
	}
	// The le values alone: tens of strings, where the series call would list every bucket series of the fleet.
	les, _, err := ev.Client.LabelValues(ctx, "le", sels, start, end)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, s := range les {
		if le, ok := derive.ParseUpperBound(s); ok && !slices.Contains(out, le) {
			out = append(out, le)
		}
	}
	sort.Float64s(out)
	return out, nil
}

// Outputs turns a range-query answer into direct mode's outputs: instance reported as endpoint, the
// expression's own labels added, NaN steps (no data, as direct mode leaves them out) dropped.
func Outputs(q query.Query, e Expr, m model.Matrix) []query.Output {
	var outs []query.Output
	for _, s := range m {
		labels := make(map[string]string, len(s.Metric)+len(e.Labels))
		measure := e.Measure
		for k, v := range s.Metric {
			switch {
			case v == "":
				// An empty label is an absent one, as in Prometheus; VictoriaMetrics' label_replace writes them.
				continue
			case k == model.MetricNameLabel:
				if measure == "" {
					measure = string(v)
				}
				continue
			case k == model.InstanceLabel && !e.AsIs:
				labels["endpoint"] = string(v)
				continue
			}
			labels[string(k)] = string(v)
		}
		for k, v := range e.Labels {
			labels[k] = v
		}
		if measure == "" {
			measure = "value"
		}
		o := query.Output{Measure: measure, Labels: labels, Unit: e.Unit, Points: make([]derive.Point, 0, len(s.Values))}
		for _, p := range s.Values {
			if math.IsNaN(float64(p.Value)) {
				continue
			}
			o.Points = append(o.Points, derive.Point{T: int64(p.Timestamp), V: float64(p.Value)})
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	// Stable order by label set, as direct mode sorts its groups, so panels keep their colours between refreshes.
	keys := make([]string, len(outs))
	for i, o := range outs {
		keys[i] = query.LabelKey(o.Labels)
	}
	sort.Sort(byKey{outs, keys})
	return outs
}

// BucketQuantiles turns summed bucket rates (series differing by le within each group) into the outputs of
// histogram_quantile(q, …) for each of e.Quantiles, in that order, as the server would answer them one by one:
// derive.HistogramQuantile is Prometheus 3's bucketQuantile (equal bounds summed, monotonicity repaired within its
// tolerance, no answer without a +Inf bucket or observations).
func BucketQuantiles(q query.Query, e Expr, m model.Matrix) []query.Output {
	type group struct {
		metric  model.Metric
		buckets map[model.Time][]derive.Bucket
	}
	groups := map[model.Fingerprint]*group{}
	var order []model.Fingerprint
	for _, s := range m {
		le, ok := derive.ParseUpperBound(string(s.Metric[model.BucketLabel]))
		if !ok {
			continue // as histogram_quantile ignores a series without a valid le
		}
		metric := s.Metric.Clone()
		delete(metric, model.BucketLabel)
		fp := metric.Fingerprint()
		g, ok := groups[fp]
		if !ok {
			g = &group{metric: metric, buckets: map[model.Time][]derive.Bucket{}}
			groups[fp] = g
			order = append(order, fp)
		}
		for _, p := range s.Values {
			g.buckets[p.Timestamp] = append(g.buckets[p.Timestamp], derive.Bucket{UpperBound: le, Count: float64(p.Value)})
		}
	}
	var outs []query.Output
	for _, qt := range e.Quantiles {
		qm := make(model.Matrix, 0, len(order))
		for _, fp := range order {
			g := groups[fp]
			ts := make([]model.Time, 0, len(g.buckets))
			for t := range g.buckets {
				ts = append(ts, t)
			}
			slices.Sort(ts)
			s := &model.SampleStream{Metric: g.metric, Values: make([]model.SamplePair, 0, len(ts))}
			for _, t := range ts {
				s.Values = append(s.Values, model.SamplePair{Timestamp: t, Value: model.SampleValue(derive.HistogramQuantile(qt, g.buckets[t]))})
			}
			qm = append(qm, s)
		}
		one := Expr{Measure: e.Measure, Unit: e.Unit, Labels: map[string]string{"quantile": query.FormatQuantile(qt)}}
		outs = append(outs, Outputs(q, one, qm)...)
	}
	return outs
}

// ExpandMacros replaces Grafana's interval and range macros in a user's PromQL, as Grafana's Prometheus data
// source does: $__rate_interval follows the same rule as InferScope's default rate window.
func ExpandMacros(expr string, interval, step, window, rng time.Duration) string {
	if interval <= 0 {
		interval = step
	}
	d := func(x time.Duration) string { return model.Duration(x.Round(time.Millisecond)).String() }
	r := strings.NewReplacer(
		"${__rate_interval}", d(window), "$__rate_interval", d(window),
		"${__interval_ms}", strconv.FormatInt(interval.Milliseconds(), 10), "$__interval_ms", strconv.FormatInt(interval.Milliseconds(), 10),
		"${__interval}", d(interval), "$__interval", d(interval),
		"${__range_ms}", strconv.FormatInt(rng.Milliseconds(), 10), "$__range_ms", strconv.FormatInt(rng.Milliseconds(), 10),
		"${__range_s}", strconv.FormatInt(int64(rng.Seconds()), 10), "$__range_s", strconv.FormatInt(int64(rng.Seconds()), 10),
		"${__range}", d(rng), "$__range", d(rng),
	)
	return r.Replace(expr)
}

type byKey struct {
	outs []query.Output
	keys []string
}

func (b byKey) Len() int           { return len(b.outs) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.outs[i], b.outs[j] = b.outs[j], b.outs[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

// summedBuckets lists the bucket names (x_bucket) the server holds of the histograms whose bucket rates a query's
// PromQL sums: those of its quantiles and SLO attainments, or a raw histogram's.
func summedBuckets(q query.Query, names Names) []string {
	g := &gen{q: q, names: names, rankRe: q.Matchers().Engine}
	var out []string
	add := func(sig vllm.Signal) {
		for _, n := range g.held(g.signal(sig)) {
			if !slices.Contains(out, n+"_bucket") {
				out = append(out, n+"_bucket")
			}
		}
	}
	for _, o := range q.Outputs() {
		measure.Walk(o.Node, func(n measure.Node) {
			switch n := n.(type) {
			case *measure.Quantiles:
				add(n.Signal)
			case *measure.Attainment:
				add(n.Signal)
			case *measure.Raw:
				if q.Histogram == query.HistogramQuantiles && names.Has(q.Metric+"_bucket") && !slices.Contains(out, q.Metric+"_bucket") {
					out = append(out, q.Metric+"_bucket")
				}
			}
		})
	}
	return out
}

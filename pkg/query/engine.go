package query

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Series is one stored time series of an endpoint: its points, or for a heavy rate read (rateReads) its rates at
// the query's steps, read-only. It is the history's own, so a selection reaches the engine without a copy.
type Series = history.Series

// Source is the scraped history the engine answers from.
type Source interface {
	// Endpoints lists the endpoint names that have history.
	Endpoints() []string
	// Names lists the sample names an endpoint currently exposes.
	Names(endpoint string) []string
	// Select returns the points in [from, to] (ms) of every series named name on endpoint whose labels match
	// (all when match is nil); match sees each series once, in no particular order, before its points are read.
	// When the selection holds more than maxPoints points (0: no bound) it returns nothing and false, without
	// reading them.
	Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool)
	// Bounds is the time span of history held for an endpoint: nothing older than oldest is returned, and every
	// point at or after it that was written is; new scrapes only come after newest.
	Bounds(endpoint string) (oldest, newest int64, ok bool)
	// Revision changes whenever the endpoint's sample names change or a point is written at or before a scrape
	// already held; while it stays the same, history only grows after newest and shrinks from oldest.
	Revision(endpoint string) uint64
}

// LatestSource is a Source that can return, of the points before carry, only each series' newest: what instant
// values at carry or later read, so a gauge's five-minute lookback is not copied for every step evaluated. Reads
// with one filter name share their selection and count what matched as RateSource's do
// (history.Store.SelectLatestShared).
type LatestSource interface {
	SelectLatest(endpoint, name string, from, carry, to int64, filter string, match func(exposition.Labels) bool, maxPoints int) (series []Series, matched int, fits bool)
}

// RateSource is a Source that returns, for a rate read, each series' rates at the steps instead of its points, so
// the queries of a refresh reading the same counters at the same steps share them; reads whose filter has one
// name (not empty) select alike and share the whole selection (history.Store.SelectRatesShared). matched is how
// many series match selected, counted against the query's series budget.
type RateSource interface {
	SelectRates(endpoint, name string, from, to int64, steps []int64, window int64, filter string, match func(exposition.Labels) bool, maxPoints int) (series []Series, matched int, fits bool)
}

// LabelSource is a Source that lists the labels of the series Select's match would see, without counting or
// reading their points (history.Store.SelectLabels): what a histogram's bucket bounds over the range read.
type LabelSource interface {
	SelectLabels(endpoint, name string, from, to int64, each func(exposition.Labels))
}

// SpanSource is a Source that reads an endpoint's Revision and Bounds at once, as every query does for every
// endpoint it selects.
type SpanSource interface {
	Span(endpoint string) (rev uint64, oldest, newest int64, ok bool)
}

// Engine evaluates queries over a Source the way Prometheus evaluates the equivalent PromQL.
type Engine struct {
	Source         Source
	ScrapeInterval time.Duration
	// Cache, when set, keeps the steps of answers that can no longer change (see Cache).
	Cache *Cache
}

// Lookback is how far back an instant value may come from, as Prometheus's default lookback delta; a failed
// scrape or a vanished series writes a staleness marker, so a down endpoint stops at once instead.
const Lookback = 5 * time.Minute

// Request is the time range and resolution of one query.
type Request struct {
	From, To      time.Time
	Interval      time.Duration // Grafana's $__interval
	MaxDataPoints int64
}

// Output is one result series. An answer's labels and points are read-only: the results cache shares them with the
// answers it gives (a refresh of 30 panels at 256 endpoints would otherwise copy every series' labels each time), so
// a reader that changes them makes its own (maps.Clone, slices.Clone).
type Output struct {
	// Measure names what the values are, e.g. "kv_usage" or "ttft"; it becomes the value field's name.
	Measure string
	Labels  map[string]string
	Unit    string
	Points  []derive.Point
}

// Result is a query's answer.
type Result struct {
	Outputs []Output
	// Notices explain missing data without failing the query: ranges beyond retention, unknown metrics.
	Notices []string
	Step    time.Duration
	Window  time.Duration
}

// Eval answers one query; with a Cache, only the steps it does not hold are evaluated.
func (e *Engine) Eval(ctx context.Context, q Query, r Request) (*Result, error) {
	if err := CheckEngineQuery(&q); err != nil {
		return nil, err
	}
	rng, err := ResolveRange(q, r, e.ScrapeInterval)
	if err != nil {
		return nil, err
	}
	outputs := q.Outputs()
	if len(outputs) == 0 {
		return nil, Invalid(fmt.Errorf("query type %q is not evaluated from scraped history", q.QueryType))
	}
	c := e.newEvalCtx(ctx, q, rng, r.From.UnixMilli())
	var groups [][]Output
	if e.Cache != nil {
		groups, err = e.Cache.eval(c, outputs)
	} else {
		var done func()
		if done, err = admit(ctx, len(c.steps)); err != nil {
			return nil, err
		}
		groups, err = c.outputs(outputs)
		done()
	}
	if err != nil {
		return nil, err
	}
	return c.result(groups), nil
}

// outputs evaluates each catalog output at the context's steps; each output's series come in canonical order
// (measure name, then labels, as Prometheus sorts a range query's series), without empty ones.
func (c *evalCtx) outputs(outputs []measure.Output) ([][]Output, error) {
	p, err := c.keyedOutputs(outputs)
	return p.groups, err
}

// keyedOutputs is outputs with each series' canonicalKey, which the cache keeps to merge the next refresh's steps.
func (c *evalCtx) keyedOutputs(outputs []measure.Output) (piece, error) {
	metricUnit := c.q.LatencySignal().Unit
	p := piece{groups: make([][]Output, len(outputs)), keys: make([][]string, len(outputs))}
	for i, o := range outputs {
		name, unit := o.Resolve(c.q.Metric, metricUnit)
		for _, out := range c.eval(o.Node) {
			if len(out.Points) == 0 {
				continue
			}
			if name != "" {
				out.Measure, out.Unit = name, unit
			}
			p.groups[i] = append(p.groups[i], out)
		}
		if err := c.stopped(); err != nil {
			return piece{}, err
		}
		p.keys[i] = sortCanonical(p.groups[i])
	}
	return p, nil
}

// sortCanonical orders one output's series by measure name, then labels (series with equal keys keep their
// order), and returns their canonicalKeys in that order.
func sortCanonical(outs []Output) []string {
	keys := make([]string, len(outs))
	for i, o := range outs {
		keys[i] = canonicalKey(o)
	}
	sortByKeys(outs, keys)
	return keys
}

// sortByKeys is sortCanonical with each series' canonicalKey given; it orders keys with the series.
func sortByKeys(outs []Output, keys []string) {
	if slices.IsSorted(keys) {
		return
	}
	type keyed struct {
		key string
		out Output
	}
	ks := make([]keyed, len(outs))
	for i, o := range outs {
		ks[i] = keyed{keys[i], o}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	for i, k := range ks {
		outs[i], keys[i] = k.out, k.key
	}
}

// canonicalKey is a series' identity within one catalog output.
func canonicalKey(o Output) string { return o.Measure + "\xff" + LabelKey(o.Labels) }

// result assembles the answer: the outputs in catalog order, capped, with the notices about the whole range.
func (c *evalCtx) result(groups [][]Output) *Result {
	res := &Result{Step: time.Duration(c.step) * time.Millisecond, Window: time.Duration(c.window) * time.Millisecond}
	for _, g := range groups {
		res.Outputs = append(res.Outputs, g...)
	}
	if kept := capOutputs(res.Outputs); kept < len(res.Outputs) {
		res.Outputs = res.Outputs[:kept]
		res.Notices = append(res.Notices, TruncatedNotice(kept))
	}
	if c.stepNotice != "" {
		res.Notices = append(res.Notices, c.stepNotice)
	}
	res.Notices = append(res.Notices, c.retentionNotice()...)
	if c.q.Threshold != nil && c.q.ReadsAttainment() {
		sig := c.q.LatencySignal()
		if n := AttainmentNotice(c.q, sig, c.bucketBounds(sig)); n != "" {
			res.Notices = append(res.Notices, n)
		}
	}
	if len(res.Outputs) == 0 && len(c.endpoints) > 0 {
		res.Notices = append(res.Notices, EmptyNotice(c.q, c.exposes, HolderEndpoints))
	}
	return res
}

// exposes reports whether a selected endpoint exposes a signal under one of its names.
func (c *evalCtx) exposes(sig vllm.Signal) bool {
	var m nameMemo
	for _, ep := range c.endpoints {
		if _, ok := m.resolve(ep, sig); ok {
			return true
		}
	}
	return false
}

// nameMemo is the name a signal resolved to on the last endpoint a loop asked about, which the next endpoints with
// the same name set take without probing (a fleet's endpoints mostly expose the same names).
type nameMemo struct {
	id   uint64
	base string
	ok   bool
}

// resolve is sig.Name on ep's names.
func (m *nameMemo) resolve(ep endpointNames, sig vllm.Signal) (string, bool) {
	if ep.namesID != 0 && ep.namesID == m.id {
		return m.base, m.ok
	}
	m.base, m.ok = sig.Name(func(n string) bool { return ep.names[n] })
	m.id = ep.namesID
	return m.base, m.ok
}

// evalCtx is one query's evaluation state.
type evalCtx struct {
	e               *Engine
	q               Query
	steps           []int64
	step, window    int64
	from, to        int64
	lookback        int64
	modelRe, rankRe *regexp.Regexp
	labelRes        map[string]*regexp.Regexp
	// filter names what selects decides besides the sample name and catalog matchers (filterName).
	filter           string
	endpoints        []endpointNames
	requestedFrom    int64
	scrapeIntervalMs int64
	stepNotice       string
	// ctx is checked while series are read, so a cancelled query stops and releases history at once.
	ctx    context.Context
	budget *readBudget
	// memo holds each catalog node's result; rankCtx is this evaluation grouped per rank, for balance loads.
	memo    map[measure.Node][]Output
	rankCtx *evalCtx
	// bounds are bucketBounds' answers by signal: the attainment and its notice read them once.
	bounds map[string][]float64
}

// readBudget counts the stored series and points a query has read, against MaxFetchedSeries and
// MaxFetchedPoints; err is why reading stopped.
type readBudget struct {
	series, fetched int
	err             error
}

// stopped is the reason evaluation must stop: the query was cancelled or read too much.
func (c *evalCtx) stopped() error {
	if c.budget.err == nil && c.ctx != nil {
		c.budget.err = c.ctx.Err()
	}
	return c.budget.err
}

// capOutputs is how many outputs fit MaxSeriesPerQuery and MaxPointsPerQuery.
func capOutputs(outs []Output) int {
	points := 0
	for i, o := range outs {
		if points += len(o.Points); i >= MaxSeriesPerQuery || points > MaxPointsPerQuery {
			return i
		}
	}
	return len(outs)
}

// endpointNames is a selected endpoint as the evaluation saw it: its sample names, revision and held span.
type endpointNames struct {
	name  string
	names map[string]bool
	// namesID identifies names' content: endpoints with one id expose the same names (0: unknown, see nameSet).
	namesID        uint64
	rev            uint64
	oldest, newest int64
	held           bool
}

// newEvalCtx prepares an evaluation over rng of the endpoints q selects; requestedFrom is the range's start before
// alignment, for the retention notice.
func (e *Engine) newEvalCtx(ctx context.Context, q Query, rng Range, requestedFrom int64) *evalCtx {
	scrape := e.ScrapeInterval.Milliseconds()
	if scrape <= 0 {
		scrape = DefaultScrapeInterval.Milliseconds()
	}
	step, window := rng.Step.Milliseconds(), rng.Window.Milliseconds()
	start, end := rng.From.UnixMilli(), rng.To.UnixMilli()
	c := &evalCtx{
		e: e, q: q, step: step, window: window, from: start, to: end, requestedFrom: requestedFrom, stepNotice: rng.Notice,
		lookback: Lookback.Milliseconds(), steps: derive.Steps(start, end, step), scrapeIntervalMs: scrape,
		budget: &readBudget{}, memo: map[measure.Node][]Output{}, ctx: ctx,
	}
	m := q.Matchers()
	c.modelRe, c.rankRe, c.labelRes = m.Model, m.Engine, m.Labels
	c.filter = c.filterName()
	endpointRe := m.Endpoint
	spans, _ := e.Source.(SpanSource)
	eps := e.Source.Endpoints()
	if endpointRe == nil {
		// Every endpoint is selected: sized once (at 256 endpoints, growing it was 7 % of what a refresh allocated).
		c.endpoints = make([]endpointNames, 0, len(eps))
	}
	for _, ep := range eps {
		if endpointRe != nil && !endpointRe.MatchString(ep) {
			continue
		}
		// The revision is read before the names, and before or with the bounds, so a change racing with this query
		// can only make the cache distrust what it stores, never trust what changed.
		en := endpointNames{name: ep}
		if spans != nil {
			en.rev, en.oldest, en.newest, en.held = spans.Span(ep)
		} else {
			en.rev = e.Source.Revision(ep)
			en.oldest, en.newest, en.held = e.Source.Bounds(ep)
		}
		if e.Cache != nil {
			en.names, en.namesID = e.Cache.nameSet(ep, en.rev, e.Source.Names)
		} else {
			en.names = nameSet(e.Source.Names(ep))
		}
		c.endpoints = append(c.endpoints, en)
	}
	return c
}

// nameSet indexes an endpoint's sample names.
func nameSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// retentionNotice says when the range starts before the history any selected endpoint holds.
func (c *evalCtx) retentionNotice() []string {
	var oldest int64 = math.MaxInt64
	for _, ep := range c.endpoints {
		if ep.held && ep.oldest < oldest {
			oldest = ep.oldest
		}
	}
	if oldest == math.MaxInt64 || c.requestedFrom >= oldest-c.scrapeIntervalMs {
		return nil
	}
	return []string{fmt.Sprintf("history is held from %s; the earlier part of the range has no data (direct mode keeps recent history in memory only)",
		time.UnixMilli(oldest).UTC().Format(time.RFC3339))}
}

// input is one stored series with the endpoint it came from and the labels it is reported under.
type input struct {
	endpoint string
	series   *Series           // the selection's; inputs share it, so one changed is copied first (see withPoints)
	labels   map[string]string // output labels before grouping; read-only, shared by a histogram's buckets
	// set, when not nil, is the kept label set labels is the map of, with its grouping keys made; relabel clears it.
	set *labelSet
	le  float64 // bucket bound for _bucket series
}

// relabel gives the input other output labels, which no kept label set's keys describe.
func (in *input) relabel(m map[string]string) { in.labels, in.set = m, nil }

// reads is what the steps of a fetch read before the first: reach is the rate window for rates, the lookback for
// instant values; instant ones read only the newest point at or before each step, the others keep each series'
// rates at the steps instead of its points (derive.StepRates).
type reads struct {
	reach   int64
	instant bool
}

// rateReads reads the rate window before each step, for the series' rates, which the history keeps instead of the
// points (history.Store.SelectRates): a heavy evaluation (a cold hour) holds a sixth of the points' size, decoded one
// endpoint at a time and shared with the refresh's other queries at the same steps; a light one (a warm refresh's
// new steps) takes them from the rate cursors the history keeps between refreshes, which read only the points that
// entered and left each window since the last.
func (c *evalCtx) rateReads() reads { return reads{reach: c.window} }

// eachRate calls f(i, rate at step i) for every step with a rate of a rate read's input, steps ascending.
func (c *evalCtx) eachRate(in input, f func(i int, v float64)) {
	if in.series.Rates != nil {
		in.series.Rates.Each(f)
		return
	}
	derive.RateSteps(in.series.Points, c.steps, c.window, f)
}

// instantReads reads the newest point within the lookback at or before each step.
func (c *evalCtx) instantReads() reads { return reads{reach: c.lookback, instant: true} }

// fetch selects every series of a signal (with a sample-name suffix such as "_bucket") on the selected
// endpoints that match the model and rank filters and the catalog's matchers, with the points the steps read (r).
// keep names the labels carried into the output besides endpoint, model and rank.
func (c *evalCtx) fetch(sig vllm.Signal, suffix string, match []measure.Matcher, r reads, keep ...string) []input {
	var m nameMemo
	return c.fetchNamed(func(ep endpointNames) (string, bool) {
		base, ok := m.resolve(ep, sig)
		return vllm.SampleName(base, suffix), ok
	}, match, r, keep...)
}

// fetchNamed selects, on every selected endpoint for which named answers a sample name, that name's series (see
// fetch): each endpoint's selection is picked first, then the inputs are placed once for all of them.
func (c *evalCtx) fetchNamed(named func(endpointNames) (string, bool), match []measure.Matcher, r reads, keep ...string) []input {
	sels := pickArray()
	for _, ep := range c.endpoints {
		name, ok := named(ep)
		if !ok {
			continue
		}
		p, ok := c.pickName(ep.name, name, match, r)
		if !ok {
			break
		}
		sels = append(sels, p)
	}
	out := c.inputs(sels, keep...)
	releasePicks(sels)
	return out
}

// fetchName selects one sample name on one endpoint (see fetch).
func (c *evalCtx) fetchName(endpoint, name string, catalogMatch []measure.Matcher, r reads, keep ...string) []input {
	p, ok := c.pickName(endpoint, name, catalogMatch, r)
	if !ok {
		return nil
	}
	return c.inputs([]picked{p}, keep...)
}

// picked is one endpoint's selection of one sample name, before its series become inputs.
type picked struct {
	endpoint, name string
	// series hold the points an instant read reads, or a rate read's rates at the steps.
	series []Series
}

// pickName selects name's series on endpoint that match the query's filters and the catalog's matchers, with the
// points or rates r reads, and counts them against the query's read limits; ok is false when reading must stop
// (c.stopped says why).
func (c *evalCtx) pickName(endpoint, name string, catalogMatch []measure.Matcher, r reads) (p picked, ok bool) {
	if c.stopped() != nil {
		return p, false
	}
	// The filters run inside Select, before any point is copied. A plain read counts the series they pass as it goes
	// and stops past the query's limit; a rate or instant read, whose selection another query may share without
	// running them, counts the series its source reports matched. Either way the point bound holds before anything
	// is decoded.
	selects := c.selector(name, catalogMatch)
	b := c.budget
	var selected []Series
	var fits bool
	matched := 0
	rs, rated := c.e.Source.(RateSource)
	rated = rated && !r.instant
	ls, latest := c.e.Source.(LatestSource)
	switch {
	case rated:
		selected, matched, fits = rs.SelectRates(endpoint, name, c.from-r.reach, c.to, c.steps, c.window, c.filterOf(catalogMatch),
			selects, MaxFetchedPoints-b.fetched)
	case latest && r.instant:
		selected, matched, fits = ls.SelectLatest(endpoint, name, c.from-r.reach, c.from, c.to, c.filterOf(catalogMatch),
			selects, MaxFetchedPoints-b.fetched)
	default:
		selected, fits = c.e.Source.Select(endpoint, name, c.from-r.reach, c.to, func(ls exposition.Labels) bool {
			if selects != nil && !selects(ls) {
				return false
			}
			b.series++
			return b.series <= MaxFetchedSeries
		}, MaxFetchedPoints-b.fetched)
	}
	b.series += matched
	for _, s := range selected {
		b.fetched += len(s.Points)
		if s.Rates != nil {
			b.fetched += s.Rates.Points()
		}
	}
	if !fits || b.series > MaxFetchedSeries || b.fetched > MaxFetchedPoints {
		b.err = Invalid(fmt.Errorf("the query reads more than %d stored series or %d points: narrow it with endpoint, model or engine filters, or a shorter range",
			MaxFetchedSeries, MaxFetchedPoints))
		return p, false
	}
	if !r.instant && !rated {
		// Rated here, one endpoint at a time, so a cold hour holds one endpoint's points, not the fleet's.
		pts := make([][]derive.Point, len(selected))
		for i, s := range selected {
			pts[i] = s.Points
		}
		rates := derive.RatesOf(pts, c.steps, c.window)
		ratedSel := make([]Series, len(selected))
		for i, s := range selected {
			ratedSel[i] = Series{Name: s.Name, Labels: s.Labels, Rates: &rates[i]}
		}
		selected = ratedSel
	}
	return picked{endpoint: endpoint, name: name, series: selected}, true
}

// inputs is the picked series as inputs, labelled with their endpoint, model and rank and the labels keep names.
// They are placed once, in an array sized for every endpoint's: a fleet's endpoints differ in size (DP1 beside DP8),
// and sized from the first, the inputs were copied at every doubling after it.
func (c *evalCtx) inputs(sels []picked, keep ...string) []input {
	n := 0
	for _, p := range sels {
		n += len(p.series)
	}
	out := make([]input, 0, n)
	var bounds upperBounds // a fleet's histograms share their bounds: each parsed once
	for _, p := range sels {
		out = c.appendInputs(out, p, &bounds, keep)
	}
	return out
}

// picks holds the arrays fetches pick their endpoints' selections into: a refresh's queries fetch hundreds of
// times, and at 256 endpoints each array is 14 KB.
var picks sync.Pool

// pickArray is an empty array to pick into, from picks when one is there.
func pickArray() []picked {
	if a, ok := picks.Get().(*[]picked); ok {
		return (*a)[:0]
	}
	return nil
}

// releasePicks gives a's array back to picks, holding no selection.
func releasePicks(a []picked) {
	if cap(a) == 0 {
		return
	}
	clear(a)
	a = a[:0]
	picks.Put(&a)
}

// upperBounds are the bucket bounds a fetch parsed, by their le label.
type upperBounds map[string]float64

// of is le parsed (derive.ParseUpperBound), remembered; ok is false for a bound that is no number.
func (u *upperBounds) of(le string) (float64, bool) {
	if v, ok := (*u)[le]; ok {
		return v, !math.IsNaN(v)
	}
	v, ok := derive.ParseUpperBound(le)
	if !ok {
		v = math.NaN()
	}
	if *u == nil {
		*u = upperBounds{}
	}
	(*u)[le] = v
	return v, ok
}

// appendInputs appends one endpoint's picked series to dst as inputs (see inputs).
func (c *evalCtx) appendInputs(dst []input, p picked, bounds *upperBounds, keep []string) []input {
	endpoint, name, selected := p.endpoint, p.name, p.series
	rankSrc, rankOut := vllm.RankLabel(name)
	worker := vllm.RankWorker(name)
	rankOf := func(ls exposition.Labels) string {
		if rankSrc == "" {
			return ""
		}
		if worker != "" {
			return ls.Get(worker) + vllm.RankSeparator + ls.Get(rankSrc)
		}
		return ls.Get(rankSrc)
	}
	out := dst
	bucket := strings.HasSuffix(name, "_bucket")
	var labels map[string]string
	var set *labelSet
	var prevModel, prevRank string
	for si, s := range selected {
		model, rank := modelOf(s.Labels), rankOf(s.Labels)
		// A histogram's buckets come one after another with the same labels: without labels to keep, they share one
		// map (inputs' labels are read-only), and groupInputs keys it once.
		if labels == nil || len(keep) > 0 || model != prevModel || rank != prevRank {
			build := func() map[string]string {
				labels := make(map[string]string, 3+len(keep))
				labels["endpoint"] = endpoint
				if model != "" {
					labels["model_name"] = model
				}
				if rank != "" {
					labels[rankOut] = rank
				}
				for _, k := range keep {
					if v, ok := s.Labels.Lookup(k); ok {
						labels[k] = v
					}
				}
				return labels
			}
			if len(keep) == 0 && c.e.Cache != nil {
				// The refresh's other queries label this engine's series alike: they share one kept map.
				set = c.e.Cache.labelMap(labelMapKey{endpoint: endpoint, model: model, rankLabel: rankOut, rank: rank}, build)
				labels = set.m
			} else {
				labels, set = build(), nil
			}
			prevModel, prevRank = model, rank
		}
		in := input{endpoint: endpoint, series: &selected[si], labels: labels, set: set}
		if bucket {
			le, ok := bounds.of(s.Labels.Get("le"))
			if !ok {
				continue
			}
			in.le = le
		}
		out = append(out, in)
	}
	return out
}

// withPoints is the input with its series' points replaced, the series copied: a Source's selection stays as
// it answered.
func (in input) withPoints(pts []derive.Point) input {
	s := *in.series
	s.Points = pts
	in.series = &s
	return in
}

// modelOf is a series' model: vLLM's model_name, or Dynamo's model.
func modelOf(ls exposition.Labels) string {
	if m := ls.Get("model_name"); m != "" {
		return m
	}
	return ls.Get("model")
}

// filterName is the query's part of a selection's filter name: everything selects reads but the sample name and
// the catalog's matchers. Every part is quoted, so no filter a query sends can spell another's name: a shared
// selection serves every user of the data source.
func (c *evalCtx) filterName() string {
	re := func(r *regexp.Regexp) string {
		if r == nil {
			return ""
		}
		return r.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%t %q %q", c.q.QueryType == TypeRaw, re(c.rankRe), re(c.modelRe))
	for _, name := range slices.Sorted(maps.Keys(c.labelRes)) {
		fmt.Fprintf(&b, " %q=%q", name, re(c.labelRes[name]))
	}
	return b.String()
}

// filterOf names the filter selects applies with the catalog's matchers m (quoted, as in filterName).
func (c *evalCtx) filterOf(m []measure.Matcher) string {
	if len(m) == 0 {
		return c.filter
	}
	var b strings.Builder
	b.WriteString(c.filter)
	for _, x := range m {
		b.WriteString(" catalog ")
		b.WriteString(strconv.Quote(x.Label))
		b.WriteByte('=')
		b.WriteString(strconv.Quote(x.Regex))
	}
	return b.String()
}

// selector reports whether a series of the sample name passes the query's model, rank and label filters and the
// catalog's matchers, with what the name and the query decide decided once. It is nil when it passes every series
// of the name (the dashboards' "All": no filter, no catalog matcher, no router look-alike), so a selection runs
// nothing per series.
func (c *evalCtx) selector(name string, catalogMatch []measure.Matcher) func(exposition.Labels) bool {
	router := c.q.QueryType != TypeRaw && vllm.RouterLookalikes[name] // then the router's label decides, per series
	rankSrc, _ := vllm.RankLabel(name)
	rankRe, modelRe := c.rankRe, c.modelRe
	labels := false // a label matcher of ".*" is nil: it passes everything
	for _, re := range c.labelRes {
		labels = labels || re != nil
	}
	if !router && rankRe == nil && modelRe == nil && !labels && len(catalogMatch) == 0 {
		return nil
	}
	return func(ls exposition.Labels) bool {
		if router && vllm.RouterSeries(name, func(l string) bool { _, ok := ls.Lookup(l); return ok }) {
			return false // a production-stack router's look-alike: the engines report it themselves
		}
		if rankRe != nil {
			rank := ""
			if rankSrc != "" {
				rank = ls.Get(rankSrc)
			}
			if !rankRe.MatchString(rank) {
				return false
			}
		}
		if modelRe != nil && !modelRe.MatchString(modelOf(ls)) || labels && !c.matchLabels(ls) {
			return false
		}
		for _, m := range catalogMatch {
			if !m.Matches(ls.Get(m.Label)) {
				return false
			}
		}
		return true
	}
}

// bucketBounds are the upper bounds of every selected series of a histogram signal over the range and window,
// read from the series' labels without decoding a point.
func (c *evalCtx) bucketBounds(sig vllm.Signal) []float64 {
	if b, ok := c.bounds[sig.ID]; ok {
		return b
	}
	var out []float64
	if c.e.Cache != nil {
		out = c.e.Cache.bucketBounds(c, sig.ID, func() []float64 { return c.readBucketBounds(sig) })
	} else {
		out = c.readBucketBounds(sig)
	}
	if c.bounds == nil {
		c.bounds = map[string][]float64{}
	}
	c.bounds[sig.ID] = out
	return out
}

// readBucketBounds is bucketBounds read from the history.
func (c *evalCtx) readBucketBounds(sig vllm.Signal) []float64 {
	var out []float64
	var m nameMemo
	// found holds the le values already in out as spelled: a fleet's bucket series spell a few bounds thousands of
	// times, and a series whose bound is found cannot add one, so it is neither parsed nor filtered.
	found := map[string]bool{}
	for _, ep := range c.endpoints {
		base, ok := m.resolve(ep, sig)
		if !ok {
			continue
		}
		name := vllm.BucketName(base)
		selects := c.selector(name, nil)
		each := func(ls exposition.Labels) {
			s := ls.Get("le")
			if found[s] {
				return
			}
			if le, ok := derive.ParseUpperBound(s); ok && (selects == nil || selects(ls)) {
				found[s] = true
				if !slices.Contains(out, le) {
					out = append(out, le)
				}
			}
		}
		if src, ok := c.e.Source.(LabelSource); ok {
			src.SelectLabels(ep.name, name, c.from-c.window, c.to, each)
			continue
		}
		c.e.Source.Select(ep.name, name, c.from-c.window, c.to, func(ls exposition.Labels) bool { each(ls); return false }, 0)
	}
	sort.Float64s(out)
	return out
}

func (c *evalCtx) matchLabels(ls exposition.Labels) bool {
	for name, re := range c.labelRes {
		if re != nil && !re.MatchString(ls.Get(name)) {
			return false
		}
	}
	return true
}

// group is the inputs reported as one output series.
type group struct {
	key     string
	labels  map[string]string
	members []input
}

// groupLabels keeps the labels the query's GroupBy reports: l itself, read-only as inputs' labels are, when it
// reports them all.
func (c *evalCtx) groupLabels(l map[string]string) map[string]string {
	return reportedLabels(l, c.reports)
}

// reportedLabels keeps the labels of l that keep accepts: l itself when it accepts them all.
func reportedLabels(l map[string]string, keep func(string) bool) map[string]string {
	all := true
	for k := range l {
		all = all && keep(k)
	}
	if all {
		return l
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// reports tells whether the query's GroupBy keeps the output label k.
func (c *evalCtx) reports(k string) bool { return reportsLabel(c.q.GroupBy, k) }

// reportsLabel tells whether grouping by g keeps the output label k. It tells the groupings apart only as
// groupingOf does.
func reportsLabel(g Group, k string) bool {
	switch {
	case g == GroupEngine:
		return true
	case k == vllm.RankOutputLabel || k == vllm.AscendRankOutputLabel:
		return false
	case k == "endpoint" && (g == GroupModel || g == GroupFleet):
		return false
	case k == "model_name" && g == GroupFleet:
		return false
	}
	return true
}

// groupings are the groupings reportsLabel tells apart, each by one Group that stands for it; groupingOf is g's.
var groupings = [...]Group{GroupEngine, GroupEndpoint, GroupModel, GroupFleet}

func groupingOf(g Group) int {
	if i := slices.Index(groupings[:], g); i >= 0 {
		return i
	}
	return slices.Index(groupings[:], GroupEndpoint) // every other grouping keeps what GroupEndpoint keeps
}

// labelSet is an engine's output labels as a Cache keeps them for every query (labelMap), with the key and the
// reported labels of each grouping made once: a refresh's queries group every engine's inputs, and a kept set
// serves all of them and the next refreshes.
type labelSet struct {
	m  map[string]string
	by [len(groupings)]groupedLabels
}

// groupedLabels is a label set's key and reported labels under one grouping (groupInputs).
type groupedLabels struct {
	key    string
	labels map[string]string
}

func newLabelSet(m map[string]string) *labelSet {
	set := &labelSet{m: m}
	for i, g := range groupings {
		keep := func(k string) bool { return reportsLabel(g, k) }
		set.by[i] = groupedLabels{key: labelKey(m, keep), labels: reportedLabels(m, keep)}
	}
	return set
}

// groupInputs groups inputs by their reported labels, in a stable order.
func (c *evalCtx) groupInputs(ins []input) []*group {
	byKey := map[string]int{}
	var out []*group
	// of[i] is the group of ins[i]; the groups' members are placed once their sizes are known, so a group of a
	// whole fleet's inputs is not copied at every doubling.
	of := make([]int32, len(ins))
	var sizes, starts []int
	g := -1
	var prev uintptr
	grouping := groupingOf(c.q.GroupBy)
	// contiguous stays true while every group's inputs follow one another (grouped by endpoint or engine, or one
	// group for the fleet, as fetch returns them): the groups are then windows onto ins, nothing copied.
	contiguous := true
	for i, in := range ins {
		// Consecutive inputs sharing one label map (a histogram's buckets, see fetchName) join the same group without
		// a key built; a key is built from the input's labels directly, and a group's label map once.
		if m := reflect.ValueOf(in.labels).Pointer(); g < 0 || m != prev {
			var grouped *groupedLabels
			var k string
			if in.set != nil {
				grouped = &in.set.by[grouping]
				k = grouped.key
			} else {
				k = labelKey(in.labels, c.reports)
			}
			last := g
			var ok bool
			if g, ok = byKey[k]; !ok {
				g = len(out)
				byKey[k] = g
				gr := &group{key: k}
				if grouped != nil {
					gr.labels = grouped.labels
				} else {
					gr.labels = c.groupLabels(in.labels)
				}
				out = append(out, gr)
				sizes, starts = append(sizes, 0), append(starts, i)
			} else if g != last {
				contiguous = false
			}
			prev = m
		}
		of[i] = int32(g) // #nosec G115 -- at most one group per input, and inputs are bounded by MaxFetchedSeries
		sizes[g]++
	}
	if contiguous {
		for g, gr := range out {
			// Capped at its end: members are read-only, and an append could not reach the next group's.
			gr.members = ins[starts[g] : starts[g]+sizes[g] : starts[g]+sizes[g]]
		}
		sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
		return out
	}
	for g, gr := range out {
		gr.members = make([]input, 0, sizes[g])
	}
	for i, in := range ins {
		out[of[i]].members = append(out[of[i]].members, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// LabelKey is a label set's identity: names sorted, names and values NUL-separated.
func LabelKey(l map[string]string) string { return labelKey(l, nil) }

// labelKey is LabelKey of the labels of l that keep accepts (all when keep is nil).
func labelKey(l map[string]string, keep func(string) bool) string {
	// Label sets here are small: sorting a stack array and sizing the string once keeps a query's many keys to one
	// allocation each.
	var arr [8]string
	keys, n := arr[:0], 0
	for k, v := range l {
		if keep != nil && !keep(k) {
			continue
		}
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// instant is a gauge's value at t: the newest point at or before t within the lookback, unless it is a
// staleness marker — what a PromQL instant selector returns. next is how many of points lie at or before the
// previous step read (-1 before the first), which it advances: the first step searches, and as steps ascend, the
// later ones pass a series' points once rather than searching at each.
func (c *evalCtx) instant(points []derive.Point, next *int, t int64) (float64, bool) {
	i := *next
	if i < 0 {
		i = sort.Search(len(points), func(i int) bool { return points[i].T > t })
	}
	for i < len(points) && points[i].T <= t {
		i++
	}
	*next = i
	if i == 0 || points[i-1].T <= t-c.lookback || derive.IsStale(points[i-1].V) {
		return 0, false
	}
	return points[i-1].V, true
}

// aggregation combines the members of a group at one step.
type aggregation int

const (
	aggSum aggregation = iota
	aggAvg
	aggMax
	aggMin
)

// gauge evaluates grouped gauges at every step. Series that differ only by the multi-API-server pid label are
// folded first with max, since the freshest process's value is not knowable from the exposition and the
// largest is the safe one for pressure alerts.
func (c *evalCtx) gauge(ins []input, agg aggregation, scale float64) []Output {
	ins = foldPID(ins)
	var outs []Output
	var next []int // per member of a group, where instant goes on
	for _, g := range c.groupInputs(ins) {
		o := Output{Labels: g.labels}
		next = slices.Grow(next[:0], len(g.members))[:len(g.members)]
		for k := range next {
			next[k] = -1
		}
		for _, t := range c.steps {
			var acc float64
			n := 0
			for k, m := range g.members {
				v, ok := c.instant(m.series.Points, &next[k], t)
				if !ok {
					continue
				}
				switch {
				case n == 0:
					acc = v
				case agg == aggMax:
					acc = math.Max(acc, v)
				case agg == aggMin:
					acc = math.Min(acc, v)
				default:
					acc += v
				}
				n++
			}
			if n == 0 {
				continue
			}
			if agg == aggAvg {
				acc /= float64(n)
			}
			o.Points = append(o.Points, derive.Point{T: t, V: acc * scale})
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

// foldPID merges series that differ only by the pid label into one per label set, keeping the larger value.
func foldPID(ins []input) []input {
	hasPID := false
	for _, in := range ins {
		if _, ok := in.series.Labels.Lookup(vllm.PIDLabel); ok {
			hasPID = true
			break
		}
	}
	if !hasPID {
		return ins
	}
	byKey := map[string]int{}
	var out []input
	for _, in := range ins {
		k := in.endpoint + "\x00" + in.series.Labels.KeyWithout(vllm.PIDLabel)
		i, ok := byKey[k]
		if !ok {
			byKey[k] = len(out)
			out = append(out, in)
			continue
		}
		out[i] = out[i].withPoints(maxMerge(out[i].series.Points, in.series.Points))
	}
	return out
}

// maxMerge merges two sorted point lists; at equal timestamps the larger non-stale value wins.
func maxMerge(a, b []derive.Point) []derive.Point {
	out := make([]derive.Point, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].T < b[j].T):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].T < a[i].T:
			out = append(out, b[j])
			j++
		default:
			v := a[i].V
			if derive.IsStale(v) || (!derive.IsStale(b[j].V) && b[j].V > v) {
				v = b[j].V
			}
			out = append(out, derive.Point{T: a[i].T, V: v})
			i, j = i+1, j+1
		}
	}
	return out
}

// bucketRates is derive.BucketRates of a group's bucket series at every step, summed by bound as it goes into bs
// (reset for the group): one pass per series (derive.RateSteps) instead of one per step, and a step's buckets held
// as one sum per bound, not one entry per series (a model's group at 256 endpoints holds 11 000 bucket series: 50 MB
// a group over an hour's steps as entries, against 60 KB as sums).
func (c *evalCtx) bucketRates(bs *bucketSteps, members []input) {
	bs.les = bs.les[:0]
	for _, m := range members {
		bs.les = append(bs.les, m.le)
	}
	bs.reset(bs.les, len(c.steps))
	for j, m := range members {
		if r := m.series.Rates; r != nil {
			bs.addRates(j, bs.slots[j], r)
			continue
		}
		c.eachRate(m, func(i int, v float64) { bs.add(i, j, bs.slots[j], v) })
	}
}

// bucketSteps is a group's bucket rates at each step summed by bound: for step i and slot s (the group's distinct
// bounds, numbered once), sums[s*steps+i] is the sum in member order of the rates of the members with that bound,
// count[s*steps+i] how many had a rate, and first[s*steps+i] the first of them. A member adds its rates to one
// slot's row, step after step, in memory order. One serves a query's groups in turn.
type bucketSteps struct {
	steps        int
	les          []float64 // bucketRates' members' bounds
	slotOf       map[float64]int32
	slots        []int32   // each member's slot
	bounds       []float64 // each slot's bound
	inf          int32     // the +Inf bound's slot, -1 without one
	sums         []float64
	count, first []int32
	buf          []derive.Bucket // common's answer
	order        []int32
}

// reset numbers the distinct bounds of a group's members (les, in member order; slots[j] is member j's bound's
// slot) and makes room for their sums at steps steps, reusing what the previous group held.
func (bs *bucketSteps) reset(les []float64, steps int) {
	if bs.slotOf == nil {
		bs.slotOf = map[float64]int32{}
	}
	clear(bs.slotOf)
	bs.bounds, bs.slots, bs.inf = bs.bounds[:0], bs.slots[:0], -1
	next := int32(0) // the slot after the previous member's: a histogram's buckets come in the order of the one before
	for _, le := range les {
		// A bound has one slot, so a guess whose bound equals le is the map's answer, without hashing: the slot after
		// the previous member's, or the first slot when a histogram starts again.
		var slot int32
		var ok bool
		switch {
		case int(next) < len(bs.bounds) && bs.bounds[next] == le:
			slot, ok = next, true
		case len(bs.bounds) > 0 && bs.bounds[0] == le:
			slot, ok = 0, true
		default:
			slot, ok = bs.slotOf[le]
		}
		if !ok { // NaN never matches: such a member has a slot of its own
			slot = int32(len(bs.bounds)) // #nosec G115 -- one slot per bucket series of a group, far below 2³¹
			bs.slotOf[le] = slot
			bs.bounds = append(bs.bounds, le)
			if math.IsInf(le, 1) {
				bs.inf = slot
			}
		}
		bs.slots = append(bs.slots, slot)
		next = slot + 1
	}
	bs.steps = steps
	n := steps * len(bs.bounds)
	if cap(bs.count) < n {
		bs.sums, bs.count, bs.first = make([]float64, n), make([]int32, n), make([]int32, n)
	}
	// add reads a sum and its first member only once their count is set.
	bs.sums, bs.count, bs.first = bs.sums[:n], bs.count[:n], bs.first[:n]
	clear(bs.count)
}

// add adds member j's rate v at step i to its bound's sum; members come in order.
func (bs *bucketSteps) add(i, j int, slot int32, v float64) {
	at := int(slot)*bs.steps + i
	if bs.count[at] == 0 {
		bs.sums[at], bs.first[at] = v, int32(j) // #nosec G115 -- a group's members, far below 2³¹
	} else {
		bs.sums[at] += v
	}
	bs.count[at]++
}

// addRates adds member j's rates at every step to its bound's sums, as add would step by step: the rates are read
// word by word, not through a callback per step (a fleet's quantile adds a million bucket rates).
func (bs *bucketSteps) addRates(j int, slot int32, r *derive.StepRates) {
	off, v, has := r.Parts()
	for w, word := range has {
		for word != 0 {
			k := w*64 + bits.TrailingZeros64(word)
			bs.add(off+k, j, slot, v[k])
			word &= word - 1
		}
	}
}

// common returns the buckets at step i that every histogram of the group has (as many series at that bound as at
// +Inf), each bound's rates summed in member order, in the order of their first member: sum by (le), as
// HistogramQuantile would after its stable sort, on tens of buckets however many histograms the group holds.
// Summing histograms of different layouts (V0's TTFT lacks V1's 20…2560 s buckets) would give a non-monotonic sum
// that Prometheus repairs upwards and VictoriaMetrics downwards (a p99 of 2560 s); the buckets all share answer
// alike everywhere. Prometheus mode generates the same filter (promapi quantiles). With a single histogram every
// bound it has is common. The slice is reused at the next call.
func (bs *bucketSteps) common(i int) []derive.Bucket {
	n := len(bs.bounds)
	at := func(s int32) int { return int(s)*bs.steps + i }
	if bs.inf < 0 || bs.count[at(bs.inf)] == 0 {
		return nil // no histogram complete: no quantile, as in PromQL
	}
	all := bs.count[at(bs.inf)]
	bs.order = bs.order[:0]
	for s := range int32(n) { // #nosec G115 -- slots, far below 2³¹
		if c := bs.count[at(s)]; c > 0 && (c == all || all == 1) {
			bs.order = append(bs.order, s)
		}
	}
	byFirst := func(a, b int32) int { return cmp.Compare(bs.first[at(a)], bs.first[at(b)]) }
	if !slices.IsSortedFunc(bs.order, byFirst) {
		slices.SortFunc(bs.order, byFirst)
	}
	bs.buf = bs.buf[:0]
	for _, s := range bs.order {
		bs.buf = append(bs.buf, derive.Bucket{UpperBound: bs.bounds[s], Count: bs.sums[at(s)]})
	}
	return bs.buf
}

// rate evaluates grouped counters as per-second rates: sum by (...) (rate(x[w])). Members are summed in their
// order at every step, as a step-by-step loop would.
func (c *evalCtx) rate(ins []input) []Output {
	var outs []Output
	sums := make([]float64, len(c.steps))
	seen := make([]bool, len(c.steps))
	for _, g := range c.groupInputs(ins) {
		clear(sums)
		clear(seen)
		n := 0
		for _, m := range g.members {
			c.eachRate(m, func(i int, v float64) {
				sums[i] += v
				if !seen[i] {
					seen[i] = true
					n++
				}
			})
		}
		if n == 0 {
			continue
		}
		o := Output{Labels: g.labels, Points: make([]derive.Point, 0, n)}
		for i, t := range c.steps {
			if seen[i] {
				o.Points = append(o.Points, derive.Point{T: t, V: sums[i]})
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// quantiles evaluates histogram_quantile(q, sum by (le, ...) (rate(x_bucket[w]))) for each quantile.
func (c *evalCtx) quantiles(buckets []input, qs []float64) []Output {
	var outs []Output
	var bs bucketSteps
	var scratch []derive.Bucket // every group's steps sort their buckets in one array
	vs := make([]float64, len(qs))
	for _, g := range c.groupInputs(buckets) {
		c.bucketRates(&bs, g.members)
		perQ := make([]Output, len(qs))
		for i, q := range qs {
			l := copyLabels(g.labels)
			l["quantile"] = formatQuantile(q)
			perQ[i] = Output{Labels: l}
		}
		for si, t := range c.steps {
			b := bs.common(si)
			if len(b) == 0 {
				continue
			}
			scratch = derive.HistogramQuantiles(qs, b, vs, scratch)
			for i, v := range vs {
				if math.IsNaN(v) {
					continue
				}
				perQ[i].Points = append(perQ[i].Points, derive.Point{T: t, V: v})
			}
		}
		for _, o := range perQ {
			if len(o.Points) > 0 {
				outs = append(outs, o)
			}
		}
	}
	return outs
}

// attainment evaluates derive.SLOAttainment of sum by (le, ...) (rate(x_bucket[w])) at the query's threshold,
// between bounds, over the buckets every histogram of a group has (commonBuckets).
func (c *evalCtx) attainment(buckets []input, bounds derive.SLOBounds, goodput bool) []Output {
	var outs []Output
	var bs bucketSteps
	for _, g := range c.groupInputs(buckets) {
		c.bucketRates(&bs, g.members)
		o := Output{Labels: copyLabels(g.labels)}
		for si, t := range c.steps {
			b := bs.common(si)
			v, ok := derive.SLOAttainment(b, bounds, *c.q.Threshold)
			if goodput {
				v, _, ok = derive.CountWithin(b, bounds, *c.q.Threshold)
			}
			if ok {
				o.Points = append(o.Points, derive.Point{T: t, V: v})
			}
		}
		if len(o.Points) > 0 {
			outs = append(outs, o)
		}
	}
	return outs
}

func copyLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l)+1)
	for k, v := range l {
		out[k] = v
	}
	return out
}

func formatQuantile(q float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", q), "0"), ".")
}

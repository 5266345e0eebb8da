// Package query holds InferScope's query model — the JSON a panel, Explore or an alert rule sends, identical in
// direct and Prometheus mode — and the direct-mode engine that answers it from scraped history.
package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Type is what a query computes; pkg/measure's catalog defines each one and its measures.
type Type = measure.Type

// Query types, as the catalog names them; README.md documents each one's fields and outputs.
const (
	TypeKVCacheUsage = measure.TypeKVCacheUsage
	TypeSpecDecode   = measure.TypeSpecDecode
	TypeDPBalance    = measure.TypeDPBalance
	TypeLatency      = measure.TypeLatency
	TypeThroughput   = measure.TypeThroughput
	TypeQueue        = measure.TypeQueue
	TypeCache        = measure.TypeCache
	TypeCapacity     = measure.TypeCapacity
	TypePromptSource = measure.TypePromptSource
	TypeKVTransfer   = measure.TypeKVTransfer
	TypeKVOffload    = measure.TypeKVOffload
	TypeLMCache      = measure.TypeLMCache
	TypeEngineState  = measure.TypeEngineState
	TypeLoRA         = measure.TypeLoRA
	TypeMFU          = measure.TypeMFU
	TypeRaw          = measure.TypeRaw
	TypeDiagnosis    = measure.TypeDiagnosis
	TypePromQL       = measure.TypePromQL
)

// Measures each query type accepts, read from the catalog.
var Measures = func() map[Type][]string {
	m := map[Type][]string{}
	for _, t := range measure.Types {
		m[t.Type] = measure.Names(t.Type)
	}
	return m
}()

// Group says how series are aggregated before they are returned; pkg/measure defines the levels.
type Group = measure.Group

// Aggregation levels.
const (
	GroupEngine   = measure.GroupEngine
	GroupEndpoint = measure.GroupEndpoint
	GroupModel    = measure.GroupModel
	GroupFleet    = measure.GroupFleet
	GroupRole     = measure.GroupRole
)

// How a raw query returns a histogram (its histogram field).
const (
	HistogramBuckets   = "buckets"   // cumulative bucket series, per le (the default)
	HistogramQuantiles = "quantiles" // histogram_quantile of the bucket rates, per quantile
)

// BalanceScores are the imbalance scores a dp_balance query returns beside the per-rank loads.
var BalanceScores = measure.Scores

// DefaultQuantiles are the latency quantiles a query without quantiles returns.
var DefaultQuantiles = []float64{0.5, 0.9, 0.95, 0.99}

// DefaultHeadroom is the capacity query's default headroom: plan for 70 % of what the KV pool holds.
const DefaultHeadroom = 0.30

// Query is the JSON model of every InferScope query.
type Query struct {
	QueryType Type `json:"queryType"`
	// Endpoint, Model and Engine are regular expressions (fully anchored, as in PromQL's =~) over the endpoint
	// name, model_name and engine / DP rank; empty matches everything. Grafana's multi-value variables expand to
	// (a|b) and "All" to .*, so they work here unchanged.
	Endpoint string `json:"endpoint,omitempty"`
	Model    string `json:"model,omitempty"`
	Engine   string `json:"engine,omitempty"`
	// Role is a regular expression over the endpoint's prefill/decode role (prefill, decode, both, unified,
	// undetermined; pkg/role). Set, even to .*, it also labels each series with its endpoint's role.
	Role string `json:"role,omitempty"`
	// Measure picks one output of the query type (see Measures); empty returns the type's defaults.
	Measure string `json:"measure,omitempty"`
	// Metric is the latency family (ttft, itl, tpot, e2e, queue, prefill, decode, inference, request_tpot,
	// ascend_fine_ttft, ascend_fine_tpot, ascend_second_token, ascend_batch_size, ascend_waiting_batch_size,
	// ascend_total_tokens, or timer:<vllm_profiling_* histogram>) or, for raw queries, the metric name.
	Metric    string    `json:"metric,omitempty"`
	Quantiles []float64 `json:"quantiles,omitempty"`
	// Window is the rate window, e.g. "1m"; empty uses Grafana's $__rate_interval rule:
	// max(step + scrape interval, 4 × scrape interval).
	Window string `json:"window,omitempty"`
	// GroupBy aggregates series: engine (default), endpoint, model, fleet or role.
	GroupBy Group `json:"groupBy,omitempty"`
	// Score restricts a dp_balance query to one imbalance score (max_over_mean, cv or idle_while_waiting),
	// without the per-rank loads, so an alert rule can compare it directly.
	Score string `json:"score,omitempty"`
	// Headroom is the capacity query's safety margin, 0–0.9 (default 0.30).
	Headroom *float64 `json:"headroom,omitempty"`
	// PeakTFLOPS and PeakMemoryTBps are the accelerator's peaks an mfu query divides by; the data source fills them
	// from its settings, and Validate from measure.DefaultAccelerator where nothing did.
	PeakTFLOPS     *float64 `json:"peakTflops,omitempty"`
	PeakMemoryTBps *float64 `json:"peakMemoryTBps,omitempty"`
	// Threshold is the SLO target of an slo_attainment measure, in the latency family's unit (seconds).
	Threshold *float64 `json:"threshold,omitempty"`
	// Limit, when set, keeps only that many series of each output (per measure and quantile): those with the
	// highest mean over the range, or the lowest with Rank "lowest". A fleet panel shows its worst endpoints instead
	// of every engine's line; a notice says how many were left out.
	Limit int `json:"limit,omitempty"`
	// Rank orders series for Limit: "highest" (default) or "lowest".
	Rank string `json:"rank,omitempty"`
	// Buckets, when set, replaces each output's series by their distribution: at every step, how many series have a
	// value in each bucket (upper bounds, increasing; a last +Inf bucket is added), as a heatmap's rows. A fleet panel
	// shows where its hundreds of endpoints lie without one line per endpoint.
	Buckets []float64 `json:"buckets,omitempty"`
	// Output, when set, keeps one of a measure's outputs (its name, e.g. failed_request_ratio of throughput/errors):
	// an alert rule compares one number per series, and outputs of one measure share their labels.
	Output string `json:"output,omitempty"`
	// Labels are extra label matchers for raw queries: label name → regular expression.
	Labels map[string]string `json:"labels,omitempty"`
	// Histogram says how a raw histogram is returned: "buckets" (cumulative, per le) or "quantiles".
	Histogram string `json:"histogram,omitempty"`
	// Expr is the PromQL of a promql query; Grafana template variables, $__interval and $__rate_interval are
	// expanded before it is sent.
	Expr string `json:"expr,omitempty"`
	// LegendFormat names series, e.g. "{{endpoint}} engine {{engine}}".
	LegendFormat string `json:"legendFormat,omitempty"`

	// matchers are the compiled regular expressions, set by Validate.
	matchers *Matchers
}

// Matchers are a query's regular expressions compiled once, anchored as PromQL's =~; nil matches everything.
type Matchers struct {
	Endpoint, Model, Engine *regexp.Regexp
	Labels                  map[string]*regexp.Regexp
	// from and fromLabels are the sources they were compiled from, so a query changed after Validate is compiled
	// again.
	from       [3]string
	fromLabels map[string]string
}

// compileMatchers compiles the query's matchers, naming the field of the first invalid one.
func (q *Query) compileMatchers() (*Matchers, error) {
	m := &Matchers{Labels: make(map[string]*regexp.Regexp, len(q.Labels)), from: [3]string{q.Endpoint, q.Model, q.Engine},
		fromLabels: maps.Clone(q.Labels)}
	var err error
	for _, f := range []struct {
		name string
		re   string
		dst  **regexp.Regexp
	}{{"endpoint", q.Endpoint, &m.Endpoint}, {"model", q.Model, &m.Model}, {"engine", q.Engine, &m.Engine}} {
		if *f.dst, err = compileAnchored(f.re); err != nil {
			return nil, fmt.Errorf("%s %q is not a valid regular expression: %w", f.name, f.re, err)
		}
	}
	for name, re := range q.Labels {
		if m.Labels[name], err = compileAnchored(re); err != nil {
			return nil, fmt.Errorf("label matcher %s=~%q is not a valid regular expression: %w", name, re, err)
		}
	}
	return m, nil
}

// Matchers returns the query's compiled matchers: those Validate compiled, unless the matchers changed since.
// An invalid expression (which Validate refuses) matches nothing.
func (q *Query) Matchers() *Matchers {
	if q.validated() {
		return q.matchers
	}
	m, err := q.compileMatchers()
	if err != nil {
		return &Matchers{Endpoint: matchNothing, Model: matchNothing, Engine: matchNothing}
	}
	q.matchers = m
	return m
}

// validated reports whether Validate has accepted the query as it is.
func (q *Query) validated() bool {
	m := q.matchers
	return m != nil && m.from == [3]string{q.Endpoint, q.Model, q.Engine} && maps.Equal(m.fromLabels, q.Labels)
}

// EnsureValid validates a query unless Validate already accepted it, so a query is checked once on its way
// from the request through either mode.
func (q *Query) EnsureValid() error {
	if q.validated() {
		return nil
	}
	return q.Validate()
}

// UnmarshalJSON reads a query; threshold may also be a number in a string, which is what a dashboard variable
// (an SLO target chosen on the dashboard) becomes once Grafana has interpolated it.
func (q *Query) UnmarshalJSON(b []byte) error {
	type plain Query
	aux := struct {
		*plain
		Threshold json.RawMessage `json:"threshold,omitempty"`
	}{plain: (*plain)(q)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	q.Threshold = nil
	raw := strings.TrimSpace(string(aux.Threshold))
	if raw == "" || raw == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(aux.Threshold, &s); err == nil {
		raw = strings.TrimSpace(s)
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("threshold %s is not a number", aux.Threshold)
	}
	q.Threshold = &v
	return nil
}

// Validate checks the fields a query type needs and fills defaults; its errors are InvalidErrors.
func (q *Query) Validate() error { return Invalid(q.validate()) }

func (q *Query) validate() error {
	if q.QueryType == "" {
		return fmt.Errorf("queryType is missing: use one of %s", strings.Join(typeNames(), ", "))
	}
	if !measure.Known(q.QueryType) {
		return fmt.Errorf("queryType %q is unknown: use one of %s", q.QueryType, strings.Join(typeNames(), ", "))
	}
	if _, ok := measure.Lookup(q.QueryType, q.Measure); q.Measure != "" && !ok {
		return fmt.Errorf("measure %q is not one of %s for %s", q.Measure, strings.Join(measure.Names(q.QueryType), ", "), q.QueryType)
	}
	if err := q.checkSizes(); err != nil {
		return err
	}
	q.matchers = nil
	m, err := q.compileMatchers()
	if err != nil {
		return err
	}
	if q.GroupBy == "" {
		q.GroupBy = GroupEngine
	}
	if !slices.Contains(measure.Groups, q.GroupBy) {
		return fmt.Errorf("groupBy %q is unknown: use engine, endpoint, model, fleet or role", q.GroupBy)
	}
	if _, err := compileAnchored(q.Role); err != nil {
		return fmt.Errorf("role %q is not a valid regular expression: %w", q.Role, err)
	}
	if q.Window != "" {
		if _, err := q.WindowDuration(); err != nil {
			return err
		}
	}
	outs := q.Outputs()
	// A raw query reads quantiles only when it returns a histogram as quantiles.
	quantiles := measure.ReadsQuantiles(outs) && !measure.ReadsNode[*measure.Raw](outs)
	if quantiles || q.QueryType == TypeLatency || (q.QueryType == TypeRaw && q.Histogram == HistogramQuantiles) {
		if len(q.Quantiles) == 0 {
			q.Quantiles = append([]float64(nil), DefaultQuantiles...)
		}
		if len(q.Quantiles) > MaxQuantiles {
			return fmt.Errorf("%d quantiles asked for: at most %d quantiles per query", len(q.Quantiles), MaxQuantiles)
		}
		for _, v := range q.Quantiles {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("quantile %v is outside 0–1", v)
			}
		}
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("limit %d is outside 0–%d (0 keeps every series)", q.Limit, MaxLimit)
	}
	switch q.Rank {
	case "", RankHighest, RankLowest:
	default:
		return fmt.Errorf("rank %q is unknown: use %s or %s", q.Rank, RankHighest, RankLowest)
	}
	if err := validBuckets(q.Buckets); err != nil {
		return err
	}
	if len(q.Buckets) > 0 && q.Limit > 0 {
		return errors.New("buckets and limit exclude each other: a distribution counts every series")
	}
	if q.Score != "" && (q.QueryType != TypeDPBalance || !contains(measure.Scores, q.Score)) {
		return fmt.Errorf("score %q is only for dp_balance and must be one of %s", q.Score, strings.Join(measure.Scores, ", "))
	}
	if q.Output != "" {
		outs := measure.Outputs(measure.Select(q.QueryType, q.Measure), "")
		if !slices.ContainsFunc(outs, q.isOutput) {
			names := make([]string, len(outs))
			for i, o := range outs {
				names[i] = o.Name
			}
			return fmt.Errorf("output %q is not one of %s/%s's outputs (%s)", q.Output, q.QueryType, q.Measure, strings.Join(names, ", "))
		}
	}
	switch q.QueryType {
	case TypeLatency:
		if q.Metric == "" {
			q.Metric = measure.DefaultFamily
		}
		if _, err := measure.LatencySignal(q.Metric); err != nil {
			return err
		}
	case TypeRaw:
		if q.Metric == "" {
			return fmt.Errorf("raw queries need a metric name")
		}
		if q.Histogram != "" && q.Histogram != HistogramBuckets && q.Histogram != HistogramQuantiles {
			return fmt.Errorf("histogram %q is unknown: use buckets or quantiles", q.Histogram)
		}
	case TypePromQL:
		if strings.TrimSpace(q.Expr) == "" {
			return fmt.Errorf("promql queries need an expression (expr)")
		}
	}
	if q.ReadsAttainment() {
		if q.Threshold == nil {
			return fmt.Errorf("%s/%s needs a threshold: the SLO target, e.g. 0.5 for 500 ms", q.QueryType, q.Measure)
		}
		if t := *q.Threshold; !(t > 0) || math.IsInf(t, 1) {
			return fmt.Errorf("threshold %v is not a positive number", t)
		}
	}
	if q.ReadsPeaks() {
		def, _ := measure.AcceleratorByID(measure.DefaultAccelerator)
		for _, p := range []struct {
			name string
			v    **float64
			def  float64
		}{{"peakTflops", &q.PeakTFLOPS, def.TFLOPS}, {"peakMemoryTBps", &q.PeakMemoryTBps, def.TBps}} {
			if *p.v == nil {
				v := p.def
				*p.v = &v
			}
			if v := **p.v; !(v >= MinPeak) || v > MaxPeak {
				return fmt.Errorf("%s %v is not a peak between %v and %v", p.name, v, MinPeak, MaxPeak)
			}
		}
	}
	switch q.QueryType {
	case TypeCapacity:
		if q.Headroom == nil {
			h := DefaultHeadroom
			q.Headroom = &h
		}
		if *q.Headroom < 0 || *q.Headroom > MaxHeadroom {
			return fmt.Errorf("headroom %v is outside 0–%v", *q.Headroom, MaxHeadroom)
		}
	}
	q.matchers = m
	return nil
}

// checkSizes refuses fields larger than the limits in limits.go, before any regular expression is compiled.
func (q *Query) checkSizes() error {
	for field, v := range map[string]string{"endpoint": q.Endpoint, "model": q.Model, "engine": q.Engine, "role": q.Role} {
		if len(v) > MaxMatcherBytes {
			return fmt.Errorf("%s matcher is %d bytes: at most %d bytes", field, len(v), MaxMatcherBytes)
		}
	}
	if len(q.Labels) > MaxLabelMatchers {
		return fmt.Errorf("%d label matchers: at most %d per query", len(q.Labels), MaxLabelMatchers)
	}
	for name, re := range q.Labels {
		if len(name)+len(re) > MaxMatcherBytes {
			return fmt.Errorf("label matcher on %.64q is %d bytes: at most %d bytes", name, len(name)+len(re), MaxMatcherBytes)
		}
	}
	for field, v := range map[string]string{"metric": q.Metric, "legendFormat": q.LegendFormat, "window": q.Window,
		"score": q.Score, "output": q.Output, "histogram": q.Histogram, "measure": q.Measure, "groupBy": string(q.GroupBy), "queryType": string(q.QueryType)} {
		if len(v) > MaxTextBytes {
			return fmt.Errorf("%s is %d bytes: at most %d bytes", field, len(v), MaxTextBytes)
		}
	}
	if len(q.Expr) > MaxExprBytes {
		return fmt.Errorf("expr is %d bytes: at most %d bytes", len(q.Expr), MaxExprBytes)
	}
	return nil
}

// Describe is the executed-query string the query inspector shows: the mode, step and window, then detail
// (the query or the PromQL that ran), cut to MaxExecutedQueryBytes so that a large query cannot multiply
// into every frame of its answer.
func Describe(mode string, step, window time.Duration, detail string) string {
	s := mode + ", step " + step.String() + ", rate window " + window.String() + ":"
	if strings.Contains(detail, "\n") {
		s += "\n"
	} else {
		s += " "
	}
	return Truncate(s+detail, MaxExecutedQueryBytes)
}

// Truncate cuts s to at most n bytes on a UTF-8 boundary, marking the cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// MeasureList is the measures this query returns.
func (q Query) MeasureList() []string {
	if q.Measure != "" {
		return []string{q.Measure}
	}
	return measure.Defaults(q.QueryType)
}

// Outputs are the catalog outputs this query returns: every output of its measures, or just its score or output.
func (q Query) Outputs() []measure.Output {
	outs := measure.Outputs(measure.Select(q.QueryType, q.Measure), q.Score)
	if q.Output == "" {
		return outs
	}
	return slices.DeleteFunc(outs, func(o measure.Output) bool { return !q.isOutput(o) })
}

// isOutput reports whether o is the output the query's Output names (as written, or with the latency family put in).
func (q Query) isOutput(o measure.Output) bool {
	name, _ := o.Resolve(q.Metric, "")
	return o.Name == q.Output || name == q.Output
}

// ApplyOutput keeps only the series of the query's Output, for answers the data source composes (roles, LoRA)
// rather than evaluates from Outputs.
func ApplyOutput(q Query, res *Result) {
	if q.Output == "" || res == nil {
		return
	}
	res.Outputs = slices.DeleteFunc(res.Outputs, func(o Output) bool { return o.Measure != q.Output })
}

// NeedsRoles reports whether answering the query needs each endpoint's prefill/decode role, which the data source
// resolves (pkg/role) and neither engine knows: a role filter, groupBy role, or the P/D TTFT.
func (q Query) NeedsRoles() bool {
	return q.Role != "" || q.GroupBy == GroupRole ||
		q.ReadsPD()
}

// RoleMatcher is the role filter anchored as PromQL's =~; nil matches every role. An invalid one, which Validate
// refuses, matches none.
func (q Query) RoleMatcher() *regexp.Regexp {
	re, err := compileAnchored(q.Role)
	if err != nil {
		return matchNothing
	}
	return re
}

// matchNothing is what an invalid matcher compiles to: no character is outside Unicode.
var matchNothing = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)

// ReadsPD reports whether the query reads the P/D TTFT (pkg/role).
func (q Query) ReadsPD() bool { return measure.ReadsNode[*measure.PD](q.Outputs()) }

// ReadsAttainment reports whether the query reads an SLO attainment or goodput, which needs a Threshold.
func (q Query) ReadsAttainment() bool { return measure.ReadsNode[*measure.Attainment](q.Outputs()) }

// Composed reports whether the data source composes the answer from other queries' (pkg/role, pkg/lora), which
// no single engine gives.
func (q Query) Composed() bool { return q.NeedsRoles() || q.ReadsLoRA() }

// ReadsLoRA reports whether the query reads vllm:lora_requests_info's label lists (pkg/lora), which the data source
// answers from a raw query in either mode.
func (q Query) ReadsLoRA() bool {
	return measure.ReadsNode[*measure.LoRA](q.Outputs())
}

// ReadsPeaks reports whether the query divides by the accelerator's peaks (PeakTFLOPS, PeakMemoryTBps).
func (q Query) ReadsPeaks() bool {
	return measure.ReadsNode[*measure.PerGPU](q.Outputs())
}

// errNeedsRoles refuses, in an engine, a query only the data source answers.
var errNeedsRoles = Invalid(errors.New("role filters, groupBy role, the P/D TTFT and LoRA adapters are answered by the data source, not by one engine"))

// CheckEngineQuery is what an engine checks before it evaluates a query: it is valid and needs no roles.
func CheckEngineQuery(q *Query) error {
	if err := q.EnsureValid(); err != nil {
		return err
	}
	if q.Composed() {
		return errNeedsRoles
	}
	return nil
}

// LatencySignal is the histogram of a latency query's metric (zero for other queries or an unknown metric, which
// Validate refuses).
func (q Query) LatencySignal() vllm.Signal {
	if q.QueryType != TypeLatency {
		return vllm.Signal{}
	}
	sig, _ := measure.LatencySignal(q.Metric)
	return sig
}

// WindowDuration parses Window; Grafana-style durations such as "5m" and "1h30m" are accepted.
func (q Query) WindowDuration() (time.Duration, error) {
	d, err := time.ParseDuration(q.Window)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("window %q is not a positive duration such as 1m", q.Window)
	}
	return d, nil
}

// compileAnchored compiles a matcher the way PromQL's =~ does: anchored at both ends; empty matches everything.
func compileAnchored(re string) (*regexp.Regexp, error) {
	if MatchesAll(re) {
		return nil, nil
	}
	return regexp.Compile("^(?:" + re + ")$")
}

// MatchesAll reports whether a filter selects every value, the empty filter or Grafana's "All" (.*), so neither
// mode runs a regular expression per series, nor sends the server a matcher, for it.
func MatchesAll(re string) bool { return re == "" || re == ".*" }

func typeNames() []string {
	out := measure.TypeNames()
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

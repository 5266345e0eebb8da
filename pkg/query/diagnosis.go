package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/rules"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// DiagnosisWindow is how much recent data each diagnosis rule looks at; "sustained" means over all of it.
const DiagnosisWindow = 5 * time.Minute

// diagnosisParallel bounds how many of the diagnosis rules' queries run at once.
const diagnosisParallel = 4

// Finding is one diagnosed problem on one endpoint (and engine, where the symptom is per engine).
type Finding struct {
	Severity string
	Symptom  string
	Cause    string
	Knob     string
	Endpoint string
	Engine   string
	Value    float64
}

// Evaluator answers one query over the diagnosis window; the data source passes its direct or Prometheus path, so
// the diagnosis reads the same in both modes. Diagnose calls it from several goroutines at once.
type Evaluator func(ctx context.Context, q Query) ([]Output, error)

// rule maps what a query shows to a symptom, its likely cause and the knob to turn (pkg/rules' advice), comparing
// with pkg/rules' thresholds, which the alert rules share.
type rule struct {
	// entry is the catalog measure the rule reads; query adds its other fields (metric, window, score, groupBy).
	entry    *measure.Entry
	query    Query
	reduce   func([]float64) float64
	trips    func(v float64) bool
	severity string
	symptom  string
	advice   *rules.Advice
	// limit is the pkg/rules threshold trips compares with; nil where the rule trips on a state (zero, a code).
	limit *rules.Threshold
	// target, when set, is the query's SLO threshold (pkg/rules).
	target *rules.Threshold
	// also, when set, must trip on the same endpoint (and engine) too, e.g. preemptions alongside high KV usage.
	also *rule
	// output is the entry output the rule reads (its index; the first by default), and where the label values its
	// series must have, e.g. source="local_compute" of the prompt-token shares.
	output int
	where  map[string]string
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func lastOf(v []float64) float64 { return v[len(v)-1] }

// above and below trip past a pkg/rules threshold.
func above(t *rules.Threshold) func(float64) bool { return func(v float64) bool { return v > t.Value } }
func below(t *rules.Threshold) func(float64) bool { return func(v float64) bool { return v < t.Value } }

// diagnosisRules are evaluated in order; each names the knob an operator would turn.
func diagnosisRules() []rule {
	preempting := &rule{entry: measure.CachePreemptions, reduce: meanOf,
		trips: func(v float64) bool { return v > 0 }}
	// A decode instance computes a prompt itself only when its KV did not arrive: a local_compute share beside
	// failed transfers is the recompute they force.
	recomputing := &rule{entry: measure.PromptSourcesBySource, query: Query{Window: "5m"}, output: 1,
		where: map[string]string{"source": "local_compute"}, reduce: meanOf, trips: func(v float64) bool { return v > 0 }}
	// A wedged engine queues requests but runs none and holds no KV: its core stopped scheduling.
	wedged := &rule{entry: measure.QueueRunning, reduce: maxOf, trips: func(v float64) bool { return v == 0 },
		also: &rule{entry: measure.KVUsage, reduce: maxOf, trips: func(v float64) bool { return v == 0 }}}
	// Few tokens per request: with most requests stopping at max_tokens, the clients ask for too little.
	shortOutputs := &rule{entry: measure.ThroughputTokensPerRequest, query: Query{Window: "5m"}, output: 1, reduce: meanOf,
		trips: below(&rules.ShortOutputTokens), limit: &rules.ShortOutputTokens}
	storing := &rule{entry: measure.KVOffloadBandwidth, query: Query{Window: "5m"}, output: 1,
		reduce: meanOf, trips: func(v float64) bool { return v > 0 }}
	return []rule{
		// First: when an endpoint does not answer, nothing else about it can be diagnosed.
		{entry: measure.RawSeries, query: Query{Metric: vllm.Up}, reduce: lastOf,
			trips: func(v float64) bool { return v < 1 }, severity: "critical",
			symptom: "endpoint down: its last scrape failed", advice: &rules.AdviceEndpointDown},
		// Then what the engine says of itself: unhealthy is an outage, asleep is deliberate.
		{entry: measure.EngineStatus, reduce: lastOf,
			trips: func(v float64) bool { return v == measure.StateUnhealthy }, severity: "critical",
			symptom: "engine unhealthy: fault tolerance reports it failed", advice: &rules.AdviceEngineUnhealthy},
		{entry: measure.EngineStatus, reduce: lastOf,
			trips: func(v float64) bool { return v == measure.StateAsleep }, severity: "info",
			symptom: "engine asleep: vLLM sleep mode, not an outage", advice: &rules.AdviceEngineAsleep},
		{entry: measure.QueueWaiting, reduce: minOf, trips: above(&rules.WaitingHigh), limit: &rules.WaitingHigh, severity: "critical",
			symptom: fmt.Sprintf("more than %s waiting for 5 minutes", rules.WaitingHigh.Text()), advice: &rules.AdviceWaiting},
		{entry: measure.QueueWaiting, reduce: minOf,
			trips: func(v float64) bool { return v > 0 }, severity: "critical", also: wedged,
			symptom: "engine wedged: requests waiting for 5 minutes while none run and the KV cache is empty", advice: &rules.AdviceWedged},
		{entry: measure.LatencySLOAttainment, query: Query{Metric: "ttft", Window: "5m"}, target: &rules.TTFTTarget, reduce: lastOf,
			trips: below(&rules.TTFTFastBurn), limit: &rules.TTFTFastBurn, severity: "critical",
			symptom: fmt.Sprintf("TTFT SLO burning fast: under %s of first tokens within %s", rules.TTFTFastBurn.Text(), rules.TTFTTarget.Text()),
			advice:  &rules.AdviceTTFTBurn},
		{entry: measure.ThroughputErrors, query: Query{Window: "5m"}, output: 1, reduce: meanOf,
			trips: above(&rules.FailedShareHigh), limit: &rules.FailedShareHigh, severity: "warning",
			symptom: fmt.Sprintf("more than %s of requests failed or aborted", rules.FailedShareHigh.Text()), advice: &rules.AdviceErrors},
		{entry: measure.KVUsage, reduce: minOf, trips: above(&rules.KVUsageHigh), limit: &rules.KVUsageHigh, severity: "critical", also: preempting,
			symptom: fmt.Sprintf("KV-cache usage above %s with preemptions", rules.KVUsageHigh.Text()), advice: &rules.AdviceKVFull},
		{entry: measure.QueueSwapped, reduce: minOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "requests swapped to CPU for 5 minutes (V0)", advice: &rules.AdviceSwapped},
		{entry: measure.LatencyQuantiles, query: Query{Metric: "ttft", Quantiles: []float64{0.95}, Window: "5m"}, reduce: lastOf,
			trips: above(&rules.TTFTP95High), limit: &rules.TTFTP95High, severity: "warning",
			symptom: "TTFT p95 above " + rules.TTFTP95High.Text(), advice: &rules.AdviceSlowTTFT},
		{entry: measure.CachePrefixHitRate, query: Query{Window: "5m"}, reduce: meanOf,
			trips: below(&rules.PrefixHitRateLow), limit: &rules.PrefixHitRateLow, severity: "info",
			symptom: "prefix-cache hit rate below " + rules.PrefixHitRateLow.Text(), advice: &rules.AdvicePrefixHits},
		{entry: measure.DPBalanceRunningWaiting, query: Query{Score: measure.ScoreIdleWhileWaiting, GroupBy: GroupEndpoint},
			reduce: lastOf, trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "DP ranks idle while others queue", advice: &rules.AdviceDPIdle},
		{entry: measure.KVTransferFailures, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning", also: recomputing,
			symptom: "NIXL KV transfers failing: the decode side computes those prompts itself", advice: &rules.AdviceKVTransferFailing},
		{entry: measure.KVTransferLatency, query: Query{Window: "5m", Quantiles: []float64{0.95}}, reduce: meanOf,
			trips: above(&rules.KVTransferP95Slow), limit: &rules.KVTransferP95Slow, severity: "warning",
			symptom: fmt.Sprintf("NIXL KV transfer p95 above %s: the transfer holds back the decode side's first token", rules.KVTransferP95Slow.Text()),
			advice:  &rules.AdviceKVTransferSlow},
		{entry: measure.KVOffloadFailures, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "KV offload stores failing: offload storage is full", advice: &rules.AdviceOffloadFailing},
		{entry: measure.KVOffloadCPUUsage, reduce: minOf, trips: above(&rules.OffloadCPUThrash), limit: &rules.OffloadCPUThrash, severity: "info", also: storing,
			symptom: fmt.Sprintf("KV offload saturated: over %s of the CPU cache's blocks stayed held (neither free nor evictable) while storing", rules.OffloadCPUThrash.Text()),
			advice:  &rules.AdviceOffloadThrash},
		{entry: measure.ThroughputFinishShare, query: Query{Window: "5m"}, where: map[string]string{"finished_reason": "length"},
			reduce: meanOf, trips: above(&rules.LengthFinishShare), limit: &rules.LengthFinishShare, severity: "warning", also: shortOutputs,
			symptom: fmt.Sprintf("batch full of short requests: most stop at max_tokens after fewer than %s", rules.ShortOutputTokens.Text()),
			advice:  &rules.AdviceShortOutputs},
		{entry: measure.SpecAcceptanceRate, query: Query{Window: "5m"}, reduce: meanOf,
			trips: below(&rules.SpecAcceptanceLow), limit: &rules.SpecAcceptanceLow, severity: "info",
			symptom: "speculative-decoding acceptance below " + rules.SpecAcceptanceLow.Text(), advice: &rules.AdviceSpecAcceptance},
	}
}

// Diagnose evaluates every rule with the base query's endpoint, model and engine filters. A rule whose query
// fails (say, over a read limit because one endpoint is huge) is skipped and named in skipped, so the other
// findings still show; only a cancelled query fails the whole diagnosis.
func Diagnose(ctx context.Context, base Query, eval Evaluator) (findings []Finding, skipped []string, err error) {
	var out []Finding
	skip := func(r *rule, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		skipped = append(skipped, fmt.Sprintf("diagnosis rule %q was skipped: %v", r.symptom, err))
		return nil
	}
	rules := diagnosisRules()
	eval = askedOnce(eval)
	// The rules' queries are independent: they run diagnosisParallel at a time (round trips to a Prometheus add
	// up otherwise) and are read in the rules' order, so findings and skips keep it.
	type answer struct {
		hits map[findingKey]float64
		err  error
	}
	answers := parallel.MapN(diagnosisParallel, rules, func(r rule) (a answer) {
		a.hits, a.err = r.matching(ctx, base, eval)
		return a
	})
	for i := range rules {
		r := &rules[i]
		hits, err := answers[i].hits, answers[i].err
		if err != nil {
			if err := skip(r, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		keys := make([]findingKey, 0, len(hits))
		for k := range hits {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].endpoint != keys[j].endpoint {
				return keys[i].endpoint < keys[j].endpoint
			}
			return keys[i].engine < keys[j].engine
		})
		for _, k := range keys {
			out = append(out, Finding{Severity: r.severity, Symptom: r.symptom, Cause: r.advice.Cause, Knob: r.advice.Knob,
				Endpoint: k.endpoint, Engine: k.engine, Value: hits[k]})
		}
	}
	return out, skipped, nil
}

type findingKey struct{ endpoint, engine string }

// askedOnce is eval asking each distinct query once, however many rules read it: several rules read one measure
// (waiting requests, engine status, KV usage) and differ only in how they reduce it, and they run concurrently, so
// without it each would evaluate its query's new steps itself. A rule asking what another is asking waits for
// that answer.
func askedOnce(eval Evaluator) Evaluator {
	type answer struct {
		done chan struct{}
		outs []Output
		err  error
	}
	var mu sync.Mutex
	asked := map[string]*answer{}
	return func(ctx context.Context, q Query) ([]Output, error) {
		key, err := json.Marshal(q)
		if err != nil {
			return eval(ctx, q)
		}
		mu.Lock()
		a, ok := asked[string(key)]
		if !ok {
			a = &answer{done: make(chan struct{})}
			asked[string(key)] = a
		}
		mu.Unlock()
		if !ok {
			a.outs, a.err = eval(ctx, q)
			close(a.done)
			return a.outs, a.err
		}
		select {
		case <-a.done:
			return a.outs, a.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// matching returns the rule's hits on which its also rules trip too, each in turn.
func (r *rule) matching(ctx context.Context, base Query, eval Evaluator) (map[findingKey]float64, error) {
	hits, err := r.evaluate(ctx, base, eval)
	if err != nil || r.also == nil || len(hits) == 0 {
		return hits, err
	}
	also, err := r.also.matching(ctx, base, eval)
	if err != nil {
		return nil, err
	}
	for k := range hits {
		if _, ok := also[k]; !ok {
			delete(hits, k)
		}
	}
	return hits, nil
}

// ask is the query the rule asks with the base query's filters, and the name of the output series it reads. The
// query keeps that output alone (Query.Output): a measure's other outputs would be queries of their own in
// Prometheus mode and evaluations in direct mode, for series the rule drops.
func (r *rule) ask(base Query) (q Query, want string) {
	q = r.query
	q.QueryType, q.Measure = r.entry.Type, r.entry.Name
	if r.target != nil {
		v := r.target.Value
		q.Threshold = &v
	}
	q.Endpoint, q.Model = base.Endpoint, base.Model
	if q.QueryType != TypeDPBalance {
		q.Engine = base.Engine
	}
	want = q.Metric // a raw query's series are named by its metric
	if outputs := q.Outputs(); r.output < len(outputs) && outputs[r.output].Name != "" {
		want, _ = outputs[r.output].Resolve(q.Metric, "")
		if len(outputs) > 1 {
			q.Output = outputs[r.output].Name
		}
	}
	return q, want
}

// evaluate returns, per endpoint and engine, the reduced value of every series where the rule trips.
func (r *rule) evaluate(ctx context.Context, base Query, eval Evaluator) (map[findingKey]float64, error) {
	q, want := r.ask(base)
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("diagnosis rule %q: %w", r.symptom, err)
	}
	outs, err := eval(ctx, q)
	if err != nil {
		return nil, err
	}
	hits := map[findingKey]float64{}
	var vals []float64 // one buffer for every series: reduce only reads it
	for _, o := range outs {
		if o.Measure != want || len(o.Points) == 0 || !hasLabels(o.Labels, r.where) {
			continue
		}
		vals = vals[:0]
		for _, p := range o.Points {
			vals = append(vals, p.V)
		}
		v := r.reduce(vals)
		if !r.trips(v) {
			continue
		}
		engine := o.Labels["engine"]
		if engine == "" {
			engine = o.Labels["dp"]
		}
		hits[findingKey{o.Labels["endpoint"], engine}] = v
	}
	return hits, nil
}

// hasLabels reports whether labels has every label of want with its value.
func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// DiagnosisFrame is the findings as one table frame.
func DiagnosisFrame(findings []Finding) *data.Frame {
	f := data.NewFrame("diagnosis",
		data.NewField("severity", nil, []string{}), data.NewField("symptom", nil, []string{}),
		data.NewField("endpoint", nil, []string{}), data.NewField("engine", nil, []string{}),
		data.NewField("value", nil, []float64{}), data.NewField("likely cause", nil, []string{}),
		data.NewField("knob", nil, []string{}))
	for _, x := range findings {
		f.AppendRow(x.Severity, x.Symptom, x.Endpoint, x.Engine, x.Value, x.Cause, x.Knob)
	}
	f.SetMeta(&data.FrameMeta{PreferredVisualization: data.VisTypeTable})
	return f
}

package query

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// DiagnosisWindow is how much recent data each diagnosis rule looks at; "sustained" means over all of it.
const DiagnosisWindow = 5 * time.Minute

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
// the diagnosis reads the same in both modes.
type Evaluator func(ctx context.Context, q Query) ([]Output, error)

// rule maps what a query shows to a symptom, its likely cause and the knob to turn, after the seed's
// troubleshooting table.
type rule struct {
	// entry is the catalog measure the rule reads; query adds its other fields (metric, window, score, groupBy).
	entry    *measure.Entry
	query    Query
	reduce   func([]float64) float64
	trips    func(v float64) bool
	severity string
	symptom  string
	cause    string
	knob     string
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
	fastTTFTTarget := 0.5
	// Few tokens per request: with most requests stopping at max_tokens, the clients ask for too little.
	shortOutputs := &rule{entry: measure.ThroughputTokensPerRequest, query: Query{Window: "5m"}, output: 1, reduce: meanOf,
		trips: func(v float64) bool { return v < 32 }}
	storing := &rule{entry: measure.KVOffloadBandwidth, query: Query{Window: "5m"}, output: 1,
		reduce: meanOf, trips: func(v float64) bool { return v > 0 }}
	return []rule{
		// First: when an endpoint does not answer, nothing else about it can be diagnosed.
		{entry: measure.RawSeries, query: Query{Metric: vllm.Up}, reduce: lastOf,
			trips: func(v float64) bool { return v < 1 }, severity: "critical",
			symptom: "endpoint down: its last scrape failed",
			cause:   "the server is down or unreachable, rejects the credentials, or does not answer with a metrics exposition",
			knob:    "check the vLLM process and its /metrics port; the data source's Save & test shows each endpoint's error"},
		// Then what the engine says of itself: unhealthy is an outage, asleep is deliberate.
		{entry: measure.EngineStatus, reduce: lastOf,
			trips: func(v float64) bool { return v == measure.StateUnhealthy }, severity: "critical",
			symptom: "engine unhealthy: fault tolerance reports it failed",
			cause:   "the engine core died or hung; vLLM's fault tolerance routes around it while it recovers",
			knob:    "read the engine core's log; if it does not recover, restart the instance (the other engines keep serving)"},
		{entry: measure.EngineStatus, reduce: lastOf,
			trips: func(v float64) bool { return v == measure.StateAsleep }, severity: "info",
			symptom: "engine asleep: vLLM sleep mode, not an outage",
			cause:   "the engine was put to sleep (POST /sleep) and holds no weights or KV cache on the GPU; it serves nothing until woken",
			knob:    "POST /wake_up before sending it traffic; leave it asleep if it is parked on purpose"},
		{entry: measure.QueueWaiting, reduce: minOf,
			trips: func(v float64) bool { return v > 10 }, severity: "critical",
			symptom: "more than 10 requests waiting for 5 minutes",
			cause:   "prefill cannot keep up: long prompts block the scheduler or the deployment is out of capacity",
			knob:    "enable --enable-chunked-prefill; lower --max-model-len if prompts allow; add replicas"},
		{entry: measure.QueueWaiting, reduce: minOf,
			trips: func(v float64) bool { return v > 0 }, severity: "critical", also: wedged,
			symptom: "engine wedged: requests waiting for 5 minutes while none run and the KV cache is empty",
			cause:   "the engine core stopped scheduling (a hung worker, a stuck collective, a dead GPU) while the API server still queues requests",
			knob:    "restart the engine; read the engine core and worker logs for NCCL timeouts or CUDA errors (vLLM's /health fails once the core is dead)"},
		{entry: measure.LatencySLOAttainment, query: Query{Metric: "ttft", Threshold: &fastTTFTTarget, Window: "5m"}, reduce: lastOf,
			trips: func(v float64) bool { return v < 0.856 }, severity: "critical",
			symptom: "TTFT SLO burning fast: under 85.6 % of first tokens within 500 ms",
			cause:   "against a 99 % objective the error budget burns 14.4 times too fast: requests queue or prefills are slow",
			knob:    "check the waiting queue and KV usage; add replicas, enable --enable-chunked-prefill or shed load"},
		{entry: measure.ThroughputErrors, query: Query{Window: "5m"}, output: 1, reduce: meanOf,
			trips: func(v float64) bool { return v > 0.05 }, severity: "warning",
			symptom: "more than 5 % of requests failed or aborted",
			cause:   "requests end with finished_reason error (the server failed them) or abort (clients gave up, often on slow first tokens)",
			knob:    "read the server log for the errors; when aborts dominate, compare TTFT with the clients' timeouts"},
		{entry: measure.KVUsage, reduce: minOf,
			trips: func(v float64) bool { return v > 90 }, severity: "critical", also: preempting,
			symptom: "KV-cache usage above 90 % with preemptions",
			cause:   "the KV pool is too small for the running batch, so requests are evicted and recomputed",
			knob:    "lower --max-num-seqs, or use --kv-cache-dtype fp8 (quantize weights first if memory is tight)"},
		{entry: measure.QueueSwapped, reduce: minOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "requests swapped to CPU for 5 minutes (V0)",
			cause:   "the GPU KV pool is too small; swap only buys time and costs recomputation",
			knob:    "add GPU memory or lower concurrency (--max-num-seqs); --swap-space only absorbs short peaks"},
		{entry: measure.LatencyQuantiles, query: Query{Metric: "ttft", Quantiles: []float64{0.95}, Window: "5m"}, reduce: lastOf,
			trips: func(v float64) bool { return v > 0.5 }, severity: "warning",
			symptom: "TTFT p95 above 500 ms",
			cause:   "prefills wait behind other work or run unchunked",
			knob:    "enable --enable-chunked-prefill and raise --max-num-batched-tokens; check the queue"},
		{entry: measure.CachePrefixHitRate, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v < 0.4 }, severity: "info",
			symptom: "prefix-cache hit rate below 40 %",
			cause:   "prefix caching is off, or traffic does not reuse prompts (multi-turn chat should)",
			knob:    "enable --enable-prefix-caching; route a conversation's turns to the same replica"},
		{entry: measure.DPBalanceRunningWaiting, query: Query{Score: measure.ScoreIdleWhileWaiting, GroupBy: GroupEndpoint},
			reduce: lastOf, trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "DP ranks idle while others queue",
			cause:   "the data-parallel router sends most requests to a few ranks (vllm-project/vllm#48808)",
			knob:    "check the DP load-balancing policy of the router / API servers; spread traffic across ranks"},
		{entry: measure.KVTransferFailures, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning", also: recomputing,
			symptom: "NIXL KV transfers failing: the decode side computes those prompts itself",
			cause:   "the prefill instance's KV could not be read (side channel, UCX transport or expired KV), so the prompt is recomputed and time to first token rises",
			knob:    "check the NIXL side channel and UCX transport between prefill and decode; look for kv_expired requests on the prefill side"},
		{entry: measure.KVTransferLatency, query: Query{Window: "5m", Quantiles: []float64{0.95}}, reduce: meanOf,
			trips: func(v float64) bool { return v > 0.5 }, severity: "warning",
			symptom: "NIXL KV transfer p95 above 500 ms: the transfer holds back the decode side's first token",
			cause:   "the link between prefill and decode is slow (TCP instead of RDMA, a distant NIC) or transfers are many small blocks",
			knob:    "move the transfer to RDMA and check NIC placement; larger --block-size means fewer descriptors per transfer"},
		{entry: measure.KVOffloadFailures, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v > 0 }, severity: "warning",
			symptom: "KV offload stores failing: offload storage is full",
			cause:   "the offloading connector finds no room for new KV, so KV that could be reused is dropped and its prompts are recomputed",
			knob:    "give offloading more memory (--kv-offloading-size) or offload less"},
		{entry: measure.KVOffloadCPUUsage, reduce: minOf,
			trips: func(v float64) bool { return v > 95 }, severity: "info", also: storing,
			symptom: "KV offload thrashing: the CPU cache stayed over 95 % full while storing",
			cause:   "every store evicts older offloaded KV, likely before it is reused, so offloading costs copies and saves little",
			knob:    "give offloading more memory (--kv-offloading-size); check the prompt-token sources for how much the offload tier serves"},
		{entry: measure.ThroughputFinishShare, query: Query{Window: "5m"}, where: map[string]string{"finished_reason": "length"},
			reduce: meanOf, trips: func(v float64) bool { return v > 0.5 }, severity: "warning", also: shortOutputs,
			symptom: "batch full of short requests: most stop at max_tokens after fewer than 32 tokens",
			cause:   "clients send a small max_tokens, so each request ends after a few tokens and prefill dominates the work: generation throughput stays low while the batch looks full",
			knob:    "check the clients' max_tokens; batch work that needs long outputs differently from short classification calls"},
		{entry: measure.SpecAcceptanceRate, query: Query{Window: "5m"}, reduce: meanOf,
			trips: func(v float64) bool { return v < 0.5 }, severity: "info",
			symptom: "speculative-decoding acceptance below 50 %",
			cause:   "the draft model or n-gram proposer predicts the target poorly, wasting compute",
			knob:    "lower num_speculative_tokens or use a better-matched draft model"},
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
	for i := range rules {
		r := &rules[i]
		hits, err := r.matching(ctx, base, eval)
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
			out = append(out, Finding{Severity: r.severity, Symptom: r.symptom, Cause: r.cause, Knob: r.knob,
				Endpoint: k.endpoint, Engine: k.engine, Value: hits[k]})
		}
	}
	return out, skipped, nil
}

type findingKey struct{ endpoint, engine string }

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

// evaluate returns, per endpoint and engine, the reduced value of every series where the rule trips.
func (r *rule) evaluate(ctx context.Context, base Query, eval Evaluator) (map[findingKey]float64, error) {
	q := r.query
	q.QueryType, q.Measure = r.entry.Type, r.entry.Name
	q.Endpoint, q.Model = base.Endpoint, base.Model
	if q.QueryType != TypeDPBalance {
		q.Engine = base.Engine
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("diagnosis rule %q: %w", r.symptom, err)
	}
	outs, err := eval(ctx, q)
	if err != nil {
		return nil, err
	}
	want := q.Metric // a raw query's series are named by its metric
	if outputs := q.Outputs(); r.output < len(outputs) && outputs[r.output].Name != "" {
		want, _ = outputs[r.output].Resolve(q.Metric, "")
	}
	hits := map[findingKey]float64{}
	for _, o := range outs {
		if o.Measure != want || len(o.Points) == 0 || !hasLabels(o.Labels, r.where) {
			continue
		}
		vals := make([]float64, len(o.Points))
		for i, p := range o.Points {
			vals[i] = p.V
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

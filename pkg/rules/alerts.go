package rules

import (
	"fmt"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// DatasourceUID is the provisioned data source the alert rules query (provisioning/datasources).
const DatasourceUID = "inferscope-direct"

// Model is an alert query's model: the data source's query JSON (README, Queries), in the fields rules use.
type Model struct {
	QueryType string    `yaml:"queryType,omitempty" json:"queryType"`
	Measure   string    `yaml:"measure,omitempty" json:"measure,omitempty"`
	Metric    string    `yaml:"metric,omitempty" json:"metric,omitempty"`
	Quantiles []float64 `yaml:"quantiles,omitempty,flow" json:"quantiles,omitempty"`
	Threshold *float64  `yaml:"threshold,omitempty" json:"threshold,omitempty"`
	Score     string    `yaml:"score,omitempty" json:"score,omitempty"`
	Output    string    `yaml:"output,omitempty" json:"output,omitempty"`
	GroupBy   string    `yaml:"groupBy,omitempty" json:"groupBy,omitempty"`
	Role      string    `yaml:"role,omitempty" json:"role,omitempty"`
	Window    string    `yaml:"window,omitempty" json:"window,omitempty"`
}

// Query is one data-source query of a rule over the last From seconds; Target, when set, is the model's SLO
// threshold.
type Query struct {
	From   int
	Model  Model
	Target *Threshold
}

// Provisioned is the query's model as the provisioned rule writes it: the SLO threshold put in where Target is set.
func (q Query) Provisioned() Model {
	if q.Target != nil {
		v := q.Target.Value
		q.Model.Threshold = &v
	}
	return q.Model
}

// Reduce turns each series of a query (by its index in Queries) into one number.
type Reduce struct {
	Of      int
	Reducer string // last, mean, min or max
}

// Condition fires the rule: either Op ("gt" or "lt") against Limit on the first reduction, or Math over the
// reductions, written with %[1]s, %[2]s … for their refIds and the thresholds' numbers in Args after them.
type Condition struct {
	Op    string
	Limit *Threshold
	Math  string
	Args  []*Threshold
}

// PanelRef names a dashboard panel by its dashboard's file (without .json) and its title.
type PanelRef struct {
	Dashboard string
	Title     string
}

// Alert is one provisioned alert rule and its runbook.
type Alert struct {
	UID, Title string
	Severity   string
	// SLO is the slo_alert label of burn-rate rules: page or ticket.
	SLO     string
	For     string
	Queries []Query
	Reduce  []Reduce
	When    Condition
	// Summary is Grafana's templated one-liner; Description says what it means, in the runbook too.
	Summary, Description string
	Advice               *Advice
	// Confirm are the panels that show the symptom, named in the runbook.
	Confirm []PanelRef
}

func fleet(title string) PanelRef  { return PanelRef{"vllm-fleet", title} }
func disagg(title string) PanelRef { return PanelRef{"vllm-disagg", title} }
func status(title string) PanelRef { return PanelRef{"vllm-service-status", title} }

// single is a rule with one query, reduced by reducer and compared with limit.
func single(from int, m Model, reducer, op string, limit *Threshold) body {
	return body{[]Query{{from, m, nil}}, []Reduce{{0, reducer}}, Condition{Op: op, Limit: limit}}
}

// body is what a rule computes: its queries, their reductions and the condition.
type body struct {
	q []Query
	r []Reduce
	c Condition
}

// burn is a multi-window burn-rate rule's queries: the same model over a long and a short window.
func burn(from int, m Model, long, short string) ([]Query, []Reduce) {
	a, b := m, m
	a.Window, b.Window = long, short
	var target *Threshold
	if m.QueryType == "latency" {
		target = &TTFTTarget
	}
	return []Query{{from, a, target}, {from, b, target}}, []Reduce{{0, "last"}, {1, "last"}}
}

// Alerts are the provisioned alert rules, in the YAML's order.
var Alerts = alerts()

func alerts() []Alert {
	var out []Alert
	add := func(a Alert, b body) {
		a.Queries, a.Reduce, a.When = b.q, b.r, b.c
		out = append(out, a)
	}
	add(Alert{UID: "inferscope-kv-usage-high", Title: "vLLM KV-cache usage above " + KVUsageHigh.Text(), Severity: "critical", For: "5m",
		Summary:     "KV-cache usage {{ humanize $values.B.Value }}% on {{ $labels.endpoint }} engine {{ $labels.engine }}{{ $labels.dp }}",
		Description: fmt.Sprintf("The KV pool has been over %s full for 5 minutes. New requests wait and running ones get preempted (recomputed).", KVUsageHigh.Text()),
		Advice:      &AdviceKVFull, Confirm: []PanelRef{fleet("KV usage %: per model, and the 10 fullest endpoints"), fleet("Preemptions/s: per model, and the 10 endpoints preempting most")}},
		single(600, Model{QueryType: "kv_cache_usage"}, "last", "gt", &KVUsageHigh))
	add(Alert{UID: "inferscope-waiting-high", Title: "vLLM requests waiting above " + WaitingHigh.Number(), Severity: "critical", For: "5m",
		Summary:     "{{ humanize $values.B.Value }} requests waiting on {{ $labels.endpoint }} engine {{ $labels.engine }}",
		Description: fmt.Sprintf("More than %s have been waiting for prefill for 5 minutes: the deployment is out of capacity or long prompts block the scheduler.", WaitingHigh.Text()),
		Advice:      &AdviceWaiting, Confirm: []PanelRef{fleet("Running + waiting"), status("Waiting: for capacity vs deferred")}},
		single(600, Model{QueryType: "queue", Measure: "waiting"}, "last", "gt", &WaitingHigh))
	add(Alert{UID: "inferscope-preemptions-rising", Title: "vLLM preemptions rising", Severity: "warning", For: "2m",
		Summary:     "Preemptions at {{ humanize $values.B.Value }}/s on {{ $labels.endpoint }} engine {{ $labels.engine }}, up from a 30-minute mean of {{ humanize $values.C.Value }}/s",
		Description: fmt.Sprintf("Preemptions per second are above %s and %s their 30-minute mean: the batch outgrows the KV pool.", PreemptionsFloor.Number(), PreemptionsRise.Text()),
		Advice:      &AdvicePreemptions, Confirm: []PanelRef{fleet("Preemptions/s: per model, and the 10 endpoints preempting most"), fleet("KV usage %: per model, and the 10 fullest endpoints")}},
		body{[]Query{{1800, Model{QueryType: "cache", Measure: "preemptions", Window: "5m"}, nil}}, []Reduce{{0, "last"}, {0, "mean"}},
			Condition{Math: "$%[1]s > %[3]s && $%[1]s > %[4]s * $%[2]s", Args: []*Threshold{&PreemptionsFloor, &PreemptionsRise}}})
	add(Alert{UID: "inferscope-ttft-p95-high", Title: "vLLM TTFT p95 above " + TTFTP95High.Text(), Severity: "warning", For: "5m",
		Summary:     "TTFT p95 {{ humanizeDuration $values.B.Value }} on {{ $labels.endpoint }} engine {{ $labels.engine }}",
		Description: fmt.Sprintf("Time to first token p95 has been above %s for 5 minutes: prefills wait behind other work or run unchunked.", TTFTP95High.Text()),
		Advice:      &AdviceSlowTTFT, Confirm: []PanelRef{fleet("Slowest endpoints: TTFT p95 (top 10)"), fleet("End-to-end and queue time p95")}},
		single(600, Model{QueryType: "latency", Metric: "ttft", Quantiles: []float64{0.95}, Window: "5m"}, "last", "gt", &TTFTP95High))
	add(Alert{UID: "inferscope-ttft-p99-extreme", Title: "vLLM TTFT p99 above " + TTFTP99Extreme.Text(), Severity: "critical", For: "5m",
		Summary:     "{{ $labels.model_name }}: TTFT p99 {{ humanizeDuration $values.B.Value }}",
		Description: fmt.Sprintf("One request in a hundred of the model has waited more than %s for its first token for 5 minutes: beside the SLO burn rates, this bounds the worst experience, which clients time out on.", TTFTP99Extreme.Text()),
		Advice:      &AdviceExtremeTTFT, Confirm: []PanelRef{fleet("TTFT p50 / p95 / p99 per model"), fleet("End-to-end and queue time p95"), status("Median TTFT")}},
		single(600, Model{QueryType: "latency", Metric: "ttft", Quantiles: []float64{0.99}, GroupBy: "model", Window: "5m"}, "last", "gt", &TTFTP99Extreme))
	{
		q := []Query{
			{600, Model{QueryType: "dp_balance", Measure: "running_waiting", Score: "max_over_mean", GroupBy: "endpoint"}, nil},
			{600, Model{QueryType: "dp_balance", Measure: "running_waiting", Score: "idle_while_waiting", GroupBy: "endpoint"}, nil}}
		add(Alert{UID: "inferscope-dp-imbalance", Title: "vLLM DP ranks imbalanced while some idle", Severity: "warning", For: "5m",
			Summary:     "DP load max/mean {{ humanize $values.C.Value }} on {{ $labels.endpoint }} with {{ $values.D.Value }} idle rank(s) while others queue",
			Description: fmt.Sprintf("One data-parallel rank carries more than %s the mean load while at least one rank sits idle with requests queued elsewhere (vllm-project/vllm#48808).", DPImbalance.Text()),
			Advice:      &AdviceDPIdle, Confirm: []PanelRef{fleet("DP balance: the 10 most imbalanced endpoints (max/mean of running + waiting)")}},
			body{q, []Reduce{{0, "last"}, {1, "last"}}, Condition{Math: "$%[1]s > %[3]s && $%[2]s > 0", Args: []*Threshold{&DPImbalance}}})
	}
	up := Threshold{"up", 1, ""}
	add(Alert{UID: "inferscope-endpoint-down", Title: "vLLM endpoint down", Severity: "critical", For: "1m",
		Summary:     "{{ $labels.endpoint }} does not answer /metrics",
		Description: "The endpoint's last scrapes failed (refused, timed out, or not a metrics exposition).",
		Advice:      &AdviceEndpointDown, Confirm: []PanelRef{fleet("Endpoint scrapes: the 20 least often up"), status("Service status")}},
		single(300, Model{QueryType: "raw", Metric: "up"}, "last", "lt", &up))
	add(Alert{UID: "inferscope-no-healthy-backend", Title: "vLLM model has no healthy backend", Severity: "critical", For: "1m",
		Summary:     "{{ $labels.model_name }}: no engine serves it (every endpoint down or asleep)",
		Description: "Every engine that served the model within the last hour is now asleep, unhealthy or on an endpoint whose scrapes fail: requests for the model cannot be served anywhere.",
		Advice:      &AdviceNoBackend, Confirm: []PanelRef{status("Service status"), status("Engines serving each model"), fleet("Endpoint scrapes: the 20 least often up"), fleet("Engine state: the 20 endpoints in the worst state")}},
		single(3600, Model{QueryType: "engine_state", Measure: "serving", GroupBy: "model", Window: "1h"}, "last", "lt", &ServingEnginesMin))
	// No rule pages on failed sleep/wake operations: no tagged vLLM release (CentML/vllm tags v0.11.1–v0.20.2rc0 declare
	// only vllm:engine_sleep_state) nor Dynamo (lib/runtime/src/metrics/prometheus_names.rs) emits a failure count,
	// and vLLM main's vllm:sleep_mode_operation_duration_seconds records an operation whatever its outcome.
	zero := Threshold{"zero", 0, ""}
	add(Alert{UID: "inferscope-kv-transfer-failing", Title: "vLLM NIXL KV transfers failing", Severity: "warning", For: "5m",
		Summary:     "NIXL KV transfers failing on {{ $labels.endpoint }} engine {{ $labels.engine }} ({{ humanize $values.B.Value }})",
		Description: "KV transfers from the prefill instances have failed for 5 minutes (the rate per second, and their share of all transfers): the decode instance computes those prompts itself, so its time to first token rises.",
		Advice:      &AdviceKVTransferFailing, Confirm: []PanelRef{disagg("KV transfer failures"), disagg("Prompt tokens by source")}},
		single(600, Model{QueryType: "kv_transfer", Measure: "failures", Output: "kv_transfer_failures_per_second", Window: "5m"}, "last", "gt", &zero))
	add(Alert{UID: "inferscope-kv-transfer-slow", Title: "vLLM NIXL KV transfer p95 above " + KVTransferP95Slow.Text(), Severity: "warning", For: "5m",
		Summary:     "NIXL KV transfer p95 {{ humanizeDuration $values.B.Value }} on {{ $labels.endpoint }} engine {{ $labels.engine }}",
		Description: fmt.Sprintf("One KV transfer from prefill to decode has taken over %s at p95 for 5 minutes: the transfer, not the decode engine, holds back the first token.", KVTransferP95Slow.Text()),
		Advice:      &AdviceKVTransferSlow, Confirm: []PanelRef{disagg("KV transfer time p50 / p95 / p99"), disagg("P/D TTFT p95: prefill, transfer, decode queue")}},
		single(600, Model{QueryType: "kv_transfer", Measure: "latency", Quantiles: []float64{0.95}, Window: "5m"}, "last", "gt", &KVTransferP95Slow))
	add(Alert{UID: "inferscope-kv-offload-failing", Title: "vLLM KV offload allocations failing", Severity: "warning", For: "5m",
		Summary:     "KV offload stores failing on {{ $labels.endpoint }} engine {{ $labels.engine }} ({{ humanize $values.B.Value }}/s)",
		Description: "Stores into offload storage have found no room for 5 minutes: KV that could have been reused is dropped, so prompts are recomputed.",
		Advice:      &AdviceOffloadFailing, Confirm: []PanelRef{disagg("KV offload: failed allocations and CPU cache usage")}},
		single(600, Model{QueryType: "kv_offload", Measure: "failures", Window: "5m"}, "last", "gt", &zero))
	add(Alert{UID: "inferscope-lmcache-hit-rate-collapse", Title: "vLLM LMCache hit rate below " + LMCacheHitRateLow.Text(), Severity: "warning", For: "10m",
		Summary:     "LMCache hit rate {{ humanizePercentage $values.B.Value }} on {{ $labels.endpoint }}",
		Description: fmt.Sprintf("LMCache has found fewer than %s of the tokens it was asked for over the last 10 minutes: prompts it used to serve are computed again.", LMCacheHitRateLow.Text()),
		Advice:      &AdviceLMCacheMisses, Confirm: []PanelRef{disagg("LMCache hit rate"), disagg("Prompt tokens by source")}},
		single(600, Model{QueryType: "lmcache", Measure: "hit_rate", Window: "5m"}, "mean", "lt", &LMCacheHitRateLow))
	add(Alert{UID: "inferscope-prefix-hit-rate-low", Title: "vLLM prefix-cache hit rate below " + PrefixHitRateAlert.Text(), Severity: "warning", For: "15m",
		Summary:     "Prefix-cache hit rate {{ humanizePercentage $values.B.Value }} on {{ $labels.endpoint }} engine {{ $labels.engine }}",
		Description: fmt.Sprintf("Fewer than %s of prompt tokens have been found in the prefix cache over the last 30 minutes: every prompt is computed in full, so TTFT and GPU time rise.", PrefixHitRateAlert.Text()),
		Advice:      &AdvicePrefixHits, Confirm: []PanelRef{fleet("Prefix-cache hit rate: per model, and the 10 lowest endpoints")}},
		single(1800, Model{QueryType: "cache", Measure: "prefix_hit_rate", Window: "5m"}, "mean", "lt", &PrefixHitRateAlert))
	add(Alert{UID: "inferscope-decode-kv-critical", Title: "vLLM decode instance KV-cache above " + DecodeKVCritical.Text(), Severity: "critical", For: "2m",
		Summary:     "Decode instance {{ $labels.endpoint }} engine {{ $labels.engine }}: KV-cache usage {{ humanize $values.B.Value }}%",
		Description: fmt.Sprintf("A decode instance of disaggregated serving has held its KV pool over %s full for 2 minutes: arriving prompts' KV finds no room, so their transfers wait or fail and running requests are preempted.", DecodeKVCritical.Text()),
		Advice:      &AdviceDecodeKVFull, Confirm: []PanelRef{disagg("Running requests by prefill/decode role"), disagg("Requests waiting for KV, and KV expired or unnotified"), fleet("KV usage %: per model, and the 10 fullest endpoints")}},
		single(600, Model{QueryType: "kv_cache_usage", Role: "decode"}, "last", "gt", &DecodeKVCritical))
	add(Alert{UID: "inferscope-prefill-queue-saturated", Title: "vLLM prefill instance queue above " + PrefillWaitingHigh.Number(), Severity: "warning", For: "5m",
		Summary:     "Prefill instance {{ $labels.endpoint }} engine {{ $labels.engine }}: at least {{ humanize $values.B.Value }} requests waiting for 5 minutes",
		Description: fmt.Sprintf("A prefill instance of disaggregated serving has had more than %s waiting throughout the last 5 minutes: prompts arrive faster than the prefill side computes them, and every decode instance's first tokens wait.", PrefillWaitingHigh.Text()),
		Advice:      &AdvicePrefillQueue, Confirm: []PanelRef{disagg("Running requests by prefill/decode role"), disagg("P/D TTFT p95: prefill, transfer, decode queue")}},
		single(300, Model{QueryType: "queue", Measure: "waiting", Role: "prefill"}, "min", "gt", &PrefillWaitingHigh))
	add(Alert{UID: "inferscope-pd-imbalance", Title: "vLLM prefill/decode imbalance above " + PDImbalanceHigh.Text(), Severity: "warning", For: "10m",
		Summary:     "{{ $labels.model_name }}: {{ humanize $values.B.Value }}× the running requests per prefill instance as per decode instance over 10 minutes",
		Description: fmt.Sprintf("Prefill instances of disaggregated serving have run more than %s the requests per instance that decode instances run, on average over 10 minutes and for 10 minutes more (llm-d's P/D imbalance, by detected role rather than pod name): a prefill instance holds a request only until its KV is handed over, so the prefill side is the bottleneck.", PDImbalanceHigh.Text()),
		Advice:      &AdvicePDImbalance, Confirm: []PanelRef{disagg("P/D balance: running per prefill instance ÷ per decode instance"), disagg("Running requests by prefill/decode role"), disagg("P/D TTFT p95: prefill, transfer, decode queue")}},
		single(600, Model{QueryType: "kv_transfer", Measure: "pd_balance", Output: "pd_running_ratio", GroupBy: "model"}, "mean", "gt", &PDImbalanceHigh))
	add(Alert{UID: "inferscope-spec-acceptance-collapse", Title: "vLLM speculative-decoding acceptance collapsed", Severity: "warning", For: "5m",
		Summary:     "Spec-decode acceptance {{ humanizePercentage $values.B.Value }} on {{ $labels.endpoint }} engine {{ $labels.engine }} (30-minute mean {{ humanizePercentage $values.C.Value }})",
		Description: fmt.Sprintf("The share of drafted tokens the target accepts has fallen below %s, or below %s its own 30-minute mean: speculation now costs more compute than it saves.", SpecAcceptanceFloor.Text(), SpecAcceptanceDrop.Text()),
		Advice:      &AdviceSpecCollapse, Confirm: []PanelRef{fleet("Spec-decode acceptance rate"), status("Acceptance by draft position")}},
		body{[]Query{{1800, Model{QueryType: "spec_decode", Measure: "acceptance_rate", Window: "5m"}, nil}}, []Reduce{{0, "last"}, {0, "mean"}},
			Condition{Math: "$%[1]s < %[3]s || $%[1]s < %[4]s * $%[2]s", Args: []*Threshold{&SpecAcceptanceFloor, &SpecAcceptanceDrop}}})
	// The frontend measure has four outputs and a rule cannot pick one, so the rule reads the queued gauge by its
	// name (pkg/vllm, traced to Dynamo's source).
	add(Alert{UID: "inferscope-dynamo-queued", Title: "Dynamo frontend queue above " + DynamoQueuedHigh.Number(), Severity: "warning", For: "5m",
		Summary:     "Dynamo frontend {{ $labels.endpoint }}: at least {{ humanize $values.B.Value }} requests queued for 5 minutes",
		Description: fmt.Sprintf("Dynamo's frontend has held more than %s in its queue, before their first response, throughout the last 5 minutes: the workers do not keep up.", DynamoQueuedHigh.Text()),
		Advice:      &AdviceDynamoQueued, Confirm: []PanelRef{status("Dynamo frontend: queued requests"), fleet("Frontend: in flight, queued, router queue")}},
		single(300, Model{QueryType: "raw", Metric: vllm.DynamoQueued.Names[0], GroupBy: "endpoint"}, "min", "gt", &DynamoQueuedHigh))
	add(Alert{UID: "inferscope-http-5xx-high", Title: "vLLM API server 5xx share above " + HTTP5xxShareHigh.Text(), Severity: "warning", For: "5m",
		Summary:     "{{ humanize $values.B.Value }}% of HTTP requests answered 5xx on {{ $labels.endpoint }}",
		Description: fmt.Sprintf("More than %s of the API server's HTTP requests have been answered 5xx for 5 minutes, what clients see whatever the engine's own counters say.", HTTP5xxShareHigh.Text()),
		Advice:      &AdviceHTTP5xx, Confirm: []PanelRef{status("HTTP 5xx share and time per request"), fleet("Failed and aborted requests")}},
		single(600, Model{QueryType: "throughput", Measure: "api_http", Output: "http_5xx_percent", GroupBy: "endpoint", Window: "5m"}, "last", "gt", &HTTP5xxShareHigh))
	add(Alert{UID: "inferscope-dynamo-migrations", Title: "Dynamo request migrations above " + MigrationsHigh.Text(), Severity: "warning", For: "5m",
		Summary:     "Dynamo frontend {{ $labels.endpoint }}: {{ humanize $values.B.Value }} migrations/s ({{ $labels.migration_type }})",
		Description: fmt.Sprintf("Dynamo's frontend has moved more than %s requests per second to another worker for 5 minutes: workers are going away mid-request.", MigrationsHigh.Number()),
		Advice:      &AdviceMigrations, Confirm: []PanelRef{fleet("Migrations/s"), fleet("Frontend: in flight, queued, router queue")}},
		single(600, Model{QueryType: "throughput", Measure: "migrations", Window: "5m"}, "last", "gt", &MigrationsHigh))

	slo := func(long, short string) ([]Query, []Reduce) {
		return burn(map[string]int{"1h": 3600, "6h": 21600}[long],
			Model{QueryType: "latency", Measure: "slo_attainment", Metric: "ttft", GroupBy: "model"}, long, short)
	}
	errs := func(long, short string) ([]Query, []Reduce) {
		return burn(map[string]int{"1h": 3600, "6h": 21600}[long], Model{QueryType: "throughput", Measure: "errors", Output: "failed_request_ratio", GroupBy: "model"}, long, short)
	}
	below := func(t *Threshold) Condition {
		return Condition{Math: "$%[1]s < %[3]s && $%[2]s < %[3]s", Args: []*Threshold{t}}
	}
	above := func(t *Threshold) Condition {
		return Condition{Math: "$%[1]s > %[3]s && $%[2]s > %[3]s", Args: []*Threshold{t}}
	}
	target := TTFTTarget.Text()
	q, r := slo("1h", "5m")
	add(Alert{UID: "inferscope-ttft-slo-burn-fast", Title: "vLLM TTFT SLO burning fast (page)", Severity: "critical", SLO: "page", For: "2m",
		Summary:     "{{ $labels.model_name }}: {{ humanizePercentage $values.C.Value }} of requests within " + target + " over 1 h, {{ humanizePercentage $values.D.Value }} over 5 min",
		Description: "TTFT SLO (99 % of requests within " + target + ") burning its error budget at 14.4x or more over both 1 h and 5 min: at this rate a 30-day budget is gone in 2 days.",
		Advice:      &AdviceTTFTBurn, Confirm: []PanelRef{fleet("TTFT SLO attainment (≤ 500 ms)"), status("TTFT SLO attainment at the target")}}, body{q, r, below(&TTFTFastBurn)})
	q, r = slo("6h", "30m")
	add(Alert{UID: "inferscope-ttft-slo-burn-slow", Title: "vLLM TTFT SLO burning (ticket)", Severity: "warning", SLO: "ticket", For: "15m",
		Summary:     "{{ $labels.model_name }}: {{ humanizePercentage $values.C.Value }} of requests within " + target + " over 6 h, {{ humanizePercentage $values.D.Value }} over 30 min",
		Description: "TTFT SLO (99 % of requests within " + target + ") burning its error budget at 6x or more over both 6 h and 30 min: at this rate a 30-day budget is gone in 5 days.",
		Advice:      &AdviceTTFTBurn, Confirm: []PanelRef{fleet("TTFT SLO attainment (≤ 500 ms)"), fleet("End-to-end and queue time p95")}}, body{q, r, below(&TTFTSlowBurn)})
	q, r = errs("1h", "5m")
	add(Alert{UID: "inferscope-error-slo-burn-fast", Title: "vLLM error SLO burning fast (page)", Severity: "critical", SLO: "page", For: "2m",
		Summary:     "{{ $labels.model_name }}: {{ humanizePercentage $values.C.Value }} of requests failed or aborted over 1 h, {{ humanizePercentage $values.D.Value }} over 5 min",
		Description: "Error SLO (99 % of requests finish without error or abort) burning its budget at 14.4x or more over both 1 h and 5 min.",
		Advice:      &AdviceErrors, Confirm: []PanelRef{fleet("Failed and aborted requests"), status("Finish reasons")}}, body{q, r, above(&ErrorFastBurn)})
	q, r = errs("6h", "30m")
	add(Alert{UID: "inferscope-error-slo-burn-slow", Title: "vLLM error SLO burning (ticket)", Severity: "warning", SLO: "ticket", For: "15m",
		Summary:     "{{ $labels.model_name }}: {{ humanizePercentage $values.C.Value }} of requests failed or aborted over 6 h, {{ humanizePercentage $values.D.Value }} over 30 min",
		Description: "Error SLO (99 % of requests finish without error or abort) burning its budget at 6x or more over both 6 h and 30 min.",
		Advice:      &AdviceErrors, Confirm: []PanelRef{fleet("Failed and aborted requests"), status("Finish reasons")}}, body{q, r, above(&ErrorSlowBurn)})
	add(Alert{UID: "inferscope-corrupted-requests", Title: "vLLM requests with NaN logits", Severity: "critical", For: "0s",
		Summary:     "{{ humanize $values.B.Value }} requests/s with NaN logits on {{ $labels.endpoint }} engine {{ $labels.engine }}",
		Description: "Requests whose logits held NaNs (vllm:corrupted_requests_total, counted with VLLM_COMPUTE_NANS_IN_LOGITS=1) return wrong tokens, not slow ones, so any is a page.",
		Advice:      &AdviceCorrupted, Confirm: []PanelRef{status("Requests with NaN logits")}},
		single(600, Model{QueryType: "throughput", Measure: "corrupted", Window: "5m"}, "last", "gt", &zero))
	return out
}

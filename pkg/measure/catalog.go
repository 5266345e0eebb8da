// Package measure is InferScope's measure catalog: every query type and measure, what it reads, how it combines
// the signals (a small expression tree, expr.go), its outputs, units, descriptions and the flavors that have it.
// The direct engine evaluates the trees, the PromQL generator prints them, the editors and the README are
// generated from the catalog, so a new measure is one entry here (plus simulator support to test it).
package measure

import "github.com/inferscope/inferscope-vllm/pkg/vllm"

// Type is what a query computes.
type Type string

// Query types.
const (
	TypeKVCacheUsage Type = "kv_cache_usage"
	TypeSpecDecode   Type = "spec_decode"
	TypeDPBalance    Type = "dp_balance"
	TypeLatency      Type = "latency"
	TypeThroughput   Type = "throughput"
	TypeQueue        Type = "queue"
	TypeCache        Type = "cache"
	TypeCapacity     Type = "capacity"
	TypePromptSource Type = "prompt_sources"
	TypeKVTransfer   Type = "kv_transfer"
	TypeKVOffload    Type = "kv_offload"
	TypeLMCache      Type = "lmcache"
	TypeEngineState  Type = "engine_state"
	TypeLoRA         Type = "lora"
	TypeMFU          Type = "mfu"
	TypeRaw          Type = "raw"
	// TypeDiagnosis evaluates the troubleshooting rules and returns a table of findings.
	TypeDiagnosis Type = "diagnosis"
	// TypePromQL passes the user's PromQL to the Prometheus-compatible server as it is; Prometheus mode only.
	TypePromQL Type = "promql"
)

// TypeInfo describes a query type for the editors and the README.
type TypeInfo struct {
	Type        Type   `json:"value"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Types are the query types in the editor's order.
var Types = []TypeInfo{
	{TypeKVCacheUsage, "KV-cache usage", "Percent of the KV-cache pool in use, per engine or DP rank."},
	{TypeSpecDecode, "Speculative decoding", "Draft acceptance rate and mean acceptance length."},
	{TypeDPBalance, "DP balance", "Per-rank load across data-parallel engines and an imbalance score."},
	{TypeLatency, "Latency", "Quantiles of TTFT, inter-token latency, end-to-end and queue time."},
	{TypeThroughput, "Throughput", "Prompt and generation tokens per second, requests and failed requests per second."},
	{TypeQueue, "Queue", "Running, waiting and swapped requests."},
	{TypeCache, "Cache", "Preemptions per second and prefix-cache hit rate."},
	{TypeCapacity, "Capacity", "Concurrent requests the KV pool can hold, with headroom."},
	{TypeEngineState, "Engine state", "Whether each engine is online, asleep (vLLM sleep mode) or unhealthy (fault tolerance)."},
	{TypeMFU, "MFU", "Model FLOPs utilisation and memory-bandwidth utilisation per GPU, against the data source's accelerator peaks."},
	{TypeLoRA, "LoRA adapters", "LoRA adapters running and waiting per endpoint, and each adapter's state."},
	{TypeKVTransfer, "KV transfer", "Disaggregated prefill/decode: NIXL KV transfer time, bandwidth and failures on the instance that pulls the KV."},
	{TypeKVOffload, "KV offload", "KV moved between GPU and offload storage (CPU memory, disk) by vLLM's offloading connector: bandwidth, failed allocations, CPU cache usage, lookup time."},
	{TypeLMCache, "LMCache", "The LMCache connector's hit rate, retrieve and store requests, and retrieval time."},
	{TypePromptSource, "Prompt sources", "Where prompt tokens' KV comes from: computed here, this instance's cache, or transferred from another."},
	{TypeRaw, "Raw metric", "Any metric family by name, with label filters."},
	{TypeDiagnosis, "Diagnosis", "A table of what is wrong now: symptom, likely cause and the knob to turn."},
	{TypePromQL, "PromQL", "A PromQL expression sent as is to the Prometheus server (Prometheus mode only)."},
}

// Output is one kind of series an entry returns.
type Output struct {
	// Name becomes the value field's name; MetricName in it stands for the query's metric. Empty lets the node
	// name its series (raw queries use the metric's own name).
	Name string `json:"name"`
	// Unit is the Grafana unit; MetricUnit takes the unit of the query's latency family.
	Unit string `json:"unit"`
	Node Node   `json:"-"`
	// Flavors, when set, are the entry's flavors that have this output (an entry may read several sources).
	Flavors []vllm.Flavor `json:"flavors,omitempty"`
	// Codes, when set, say what each of the output's values stands for (engine states).
	Codes []Code `json:"codes,omitempty"`
}

// Placeholders in output names and units.
const (
	MetricName = "{metric}"
	MetricUnit = "{metric}"
)

// Entry is one measure of one query type.
type Entry struct {
	Type        Type   `json:"type"`
	Name        string `json:"value"`
	Label       string `json:"label"`
	Description string `json:"description"`
	// Default entries are what a query of the type without a measure returns.
	Default bool     `json:"default,omitempty"`
	Outputs []Output `json:"outputs"`
	// Flavors are the servers that expose what the entry reads; the catalog walk test checks each one answers.
	Flavors []vllm.Flavor `json:"flavors"`
	// Recent marks entries that read metrics older vLLM releases do not expose (the provenance table says which).
	Recent bool `json:"recent,omitempty"`
	// Needs is what the server must run besides its flavor, any one of them (NeedsNIXL); the catalog walk checks
	// the entry answers where it runs and nothing elsewhere.
	Needs []string `json:"needs,omitempty"`
	// Fields are the query fields the entry reads, from its formulas (fields.go) and any set here; Required are
	// those it cannot do without, GroupBy the groupings it answers.
	Fields   []Field `json:"fields"`
	Required []Field `json:"required,omitempty"`
	GroupBy  []Group `json:"groupBy,omitempty"`
}

// What entries need besides a flavor (Entry.Needs).
const (
	// NeedsNIXL marks entries read from vLLM's NIXL KV connector, which only disaggregated prefill/decode runs.
	NeedsNIXL = "a NIXL KV connector"
	// NeedsOffload marks entries read from vLLM's offloading connector (--kv-offloading-size).
	NeedsOffload = "KV offloading"
	// NeedsLMCache marks entries read from the LMCache connector's own metrics.
	NeedsLMCache = "LMCache"
	// NeedsLMCacheMP marks entries read from multi-process LMCache's lmcache_mp_* metrics (LMCacheMPConnector).
	NeedsLMCacheMP = "multi-process LMCache"
	// NeedsMFU marks entries read from vLLM's per-GPU work estimates, which count only with --enable-mfu-metrics.
	NeedsMFU = "--enable-mfu-metrics"
	// NeedsNaNCheck marks entries read from vllm:corrupted_requests_total, which vLLM counts only with
	// VLLM_COMPUTE_NANS_IN_LOGITS=1.
	NeedsNaNCheck = "VLLM_COMPUTE_NANS_IN_LOGITS=1"
	// NeedsLoRA marks entries read from vllm:lora_requests_info, which only a server with --enable-lora exposes.
	NeedsLoRA = "LoRA adapters (--enable-lora)"
	// NeedsKVCacheMetrics marks entries read from the block residency histograms of --kv-cache-metrics.
	NeedsKVCacheMetrics = "--kv-cache-metrics"
	// NeedsSleepMode marks entries read from the API server's sleep-mode operations, recorded only with
	// --enable-sleep-mode once an operation has run.
	NeedsSleepMode = "--enable-sleep-mode"
)

// Imbalance scores of a dp_balance query (README "DP balance definitions").
const (
	// ScoreMaxOverMean is the busiest rank's load over the mean load; 1 is perfect balance.
	ScoreMaxOverMean = "max_over_mean"
	// ScoreCV is the coefficient of variation of the ranks' loads; 0 is perfect balance.
	ScoreCV = "cv"
	// ScoreIdleWhileWaiting counts ranks with no load while other ranks of the group have requests waiting.
	ScoreIdleWhileWaiting = "idle_while_waiting"
)

// Scores are the imbalance scores of a dp_balance query, which its score field may pick one of.
var Scores = []string{ScoreMaxOverMean, ScoreCV, ScoreIdleWhileWaiting}

// Family is a latency histogram a latency query's metric may name.
type Family struct {
	Name        string      `json:"value"`
	Label       string      `json:"label"`
	Description string      `json:"description"`
	Signal      vllm.Signal `json:"-"`
}

// TimerPrefix marks a latency metric naming a vLLM-Ascend profiler histogram: timer:<vllm_profiling_* name>.
const TimerPrefix = "timer:"

// Families are the latency families in the editor's order.
var Families = []Family{
	{"ttft", "Time to first token", "vllm:time_to_first_token_seconds", vllm.TTFT},
	{"itl", "Inter-token latency", "vllm:inter_token_latency_seconds (or time_per_output_token)", vllm.ITL},
	{"tpot", "Time per output token", "Same family as inter-token latency, under its old name.", vllm.ITL},
	{"request_tpot", "Request time per output token", "vllm:request_time_per_output_token_seconds", vllm.RequestTPOT},
	{"e2e", "End-to-end latency", "vllm:e2e_request_latency_seconds", vllm.E2E},
	{"queue", "Queue time", "vllm:request_queue_time_seconds", vllm.QueueTime},
	{"prefill", "Prefill time", "vllm:request_prefill_time_seconds", vllm.PrefillTime},
	{"decode", "Decode time", "vllm:request_decode_time_seconds", vllm.DecodeTime},
	{"inference", "Inference time", "vllm:request_inference_time_seconds", vllm.InferenceTime},
	{"ascend_fine_ttft", "Ascend fine TTFT", "vLLM-Ascend profiler fine-grained TTFT.", vllm.AscendFineTTFT},
	{"ascend_fine_tpot", "Ascend fine TPOT", "vLLM-Ascend profiler fine-grained TPOT.", vllm.AscendFineTPOT},
	{"ascend_second_token", "Ascend second token", "vLLM-Ascend profiler second-token latency.", vllm.AscendSecondTokenLatency},
	{"ascend_batch_size", "Ascend batch size", "vLLM-Ascend profiler batch size histogram.", vllm.AscendBatchSize},
	{"ascend_waiting_batch_size", "Ascend waiting batch size", "vLLM-Ascend waiting batch size histogram.", vllm.AscendWaitingBatchSize},
	{"ascend_total_tokens", "Ascend total tokens", "vLLM-Ascend profiler total tokens histogram.", vllm.AscendTotalTokens},
}

// DefaultFamily is the latency family of a latency query without a metric.
const DefaultFamily = "ttft"

// Shared subtrees: a formula used by several entries is written once.
var (
	// kvUsage takes each endpoint's best source: the Ascend profiler's per-DP blocks (what Ascend operators
	// watch), else vLLM's gauge (V1 name, then the older one), else Dynamo's.
	kvUsage = &Or{Parts: []Node{
		&Div{Num: &Gauge{Signal: vllm.AscendFreeBlocks, Agg: Sum}, Den: &Gauge{Signal: vllm.AscendTotalBlocks, Agg: Sum}, Form: UsedPercent},
		&Gauge{Signal: vllm.KVUsage, Agg: Avg, Scale: 100, Unless: []vllm.Signal{vllm.AscendFreeBlocks}},
		&Gauge{Signal: vllm.DynamoKVUsage, Agg: Avg, Scale: 100, Unless: []vllm.Signal{vllm.AscendFreeBlocks, vllm.KVUsage}},
	}}
	running          = &Gauge{Signal: vllm.Running, Agg: Sum}
	waiting          = &Gauge{Signal: vllm.Waiting, Agg: Sum}
	generationTokens = &Rate{Signal: vllm.GenerationTokens}
	finished         = &Rate{Signal: vllm.RequestSuccess}
	failed           = &Rate{Signal: vllm.RequestSuccess, Match: []Matcher{Match("finished_reason", "error|abort")}}
	// Dynamo's frontend counts requests by status, errors also by error_type: never by finished_reason.
	dynamoRequests  = &Rate{Signal: vllm.DynamoRequests}
	dynamoFailed    = &Rate{Signal: vllm.DynamoRequests, Match: []Matcher{Match("status", "error")}}
	httpRequests    = &Rate{Signal: vllm.HTTPRequests, Keep: []string{"status"}}
	promptBySource  = &Rate{Signal: vllm.PromptTokensBySource, Keep: []string{"source"}}
	flops           = []vllm.Signal{vllm.EstimatedFlops}
	memoryBytes     = []vllm.Signal{vllm.EstimatedReadBytes, vllm.EstimatedWriteBytes}
	lmcacheHits     = &Rate{Signal: vllm.LMCacheHitTokens}
	mpRetrieves     = &Rate{Signal: vllm.LMCacheMPRetrieves}
	cachedByTier    = &Rate{Signal: vllm.PromptTokensCachedBySource, Keep: []string{"source"}}
	transfers       = &Rate{Signal: vllm.NixlXferTime, Suffix: "_count"}
	failedTransfers = &Rate{Signal: vllm.NixlFailedTransfers}
	// The flat offload names carry no transfer_type; the older per-direction ones are read for one direction.
	offloadLoadMatch  = []Matcher{Match(vllm.OffloadTransferLabel, vllm.OffloadLoad+"|")}
	offloadStoreMatch = []Matcher{Match(vllm.OffloadTransferLabel, vllm.OffloadStore+"|")}
	offloadLoads      = &Rate{Signal: vllm.OffloadLoadBytes, Match: offloadLoadMatch}
	offloadStores     = &Rate{Signal: vllm.OffloadStoreBytes, Match: offloadStoreMatch}
	poolTokens        = &InfoProduct{Signal: vllm.CacheConfig, Labels: []string{"num_gpu_blocks", "block_size"}, ModelFrom: vllm.Running}
	tokensPerRequest  = &Div{
		Num: &Add{A: &Rate{Signal: vllm.PromptTokensHist, Suffix: "_sum"}, B: &Rate{Signal: vllm.GenerationTokensHist, Suffix: "_sum"}},
		Den: &Rate{Signal: vllm.PromptTokensHist, Suffix: "_count"},
	}
)

// Flavor sets.
var (
	vllmFlavors  = []vllm.Flavor{vllm.FlavorV1, vllm.FlavorV0, vllm.FlavorAscend, vllm.FlavorDynamoWorker}
	v1Flavors    = []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend, vllm.FlavorDynamoWorker}
	ascendOnly   = []vllm.Flavor{vllm.FlavorAscend}
	v0Only       = []vllm.Flavor{vllm.FlavorV0}
	withFrontend = []vllm.Flavor{vllm.FlavorV1, vllm.FlavorV0, vllm.FlavorAscend, vllm.FlavorDynamoWorker, vllm.FlavorDynamoFrontend}
	frontendOnly = []vllm.Flavor{vllm.FlavorDynamoFrontend}
)

// balance is a dp_balance entry over engine ranks: the per-rank load and the three scores over it.
func balance(name, label, description, loadUnit string, load Node, def bool) *Entry {
	fl := vllmFlavors
	if name == "generation_tps" {
		fl = withFrontend
	}
	return balanceOf(name, label, description, loadUnit, load, waiting, def, fl)
}

// balanceOf is a dp_balance entry whose ranks queue work in queued (idle_while_waiting reads it).
func balanceOf(name, label, description, loadUnit string, load, queued Node, def bool, fl []vllm.Flavor) *Entry {
	outs := []Output{{Name: "load", Unit: loadUnit, Node: &Balance{Load: load, Waiting: queued}}}
	for _, s := range Scores {
		outs = append(outs, Output{Name: s, Unit: "short", Node: &Balance{Load: load, Waiting: queued, Score: s}})
	}
	return &Entry{Type: TypeDPBalance, Name: name, Label: label, Description: description, Default: def, Outputs: outs, Flavors: fl}
}

// Entries referred to by name elsewhere (diagnosis rules, tests).
var (
	KVUsage = &Entry{Type: TypeKVCacheUsage, Name: "usage", Label: "Usage %", Default: true,
		Description: "Share of the KV-cache pool in use, 0–100: vLLM's usage gauge × 100, vLLM-Ascend's (1 − free ÷ total blocks) × 100 per dp, or Dynamo's own gauge.",
		Outputs:     []Output{{Name: "kv_usage", Unit: "percent", Node: kvUsage}}, Flavors: vllmFlavors}
	KVBlocks = &Entry{Type: TypeKVCacheUsage, Name: "blocks", Label: "Blocks",
		Description: "Total, free and allocated KV blocks where exposed: vLLM-Ascend's block gauges, Dynamo's, or num_gpu_blocks of cache_config_info.",
		Outputs: []Output{
			{Name: "total_blocks", Unit: "short", Node: &Or{Parts: []Node{
				&Gauge{Signal: vllm.AscendTotalBlocks, Agg: Sum}, &Gauge{Signal: vllm.DynamoTotalBlocks, Agg: Sum},
				&InfoProduct{Signal: vllm.CacheConfig, Labels: []string{"num_gpu_blocks"}, ModelFrom: vllm.Running}}}},
			{Name: "free_blocks", Unit: "short", Node: &Gauge{Signal: vllm.AscendFreeBlocks, Agg: Sum}, Flavors: ascendOnly},
			{Name: "allocated_blocks", Unit: "short", Node: &Or{Parts: []Node{
				&Gauge{Signal: vllm.AscendAllocatedBlocks, Agg: Sum}, &Gauge{Signal: vllm.DynamoActiveBlocks, Agg: Sum}}},
				Flavors: ascendOnly}, // and Dynamo before the kvstats_ names were dropped
		}, Flavors: vllmFlavors}

	SpecAcceptanceRate = &Entry{Type: TypeSpecDecode, Name: "acceptance_rate", Label: "Acceptance rate", Default: true,
		Description: "Accepted ÷ draft tokens over the window, or V0's acceptance-rate gauge where that is all there is.",
		Outputs: []Output{{Name: "acceptance_rate", Unit: "percentunit", Node: &Or{Parts: []Node{
			&Div{Num: &Rate{Signal: vllm.SpecAcceptedTokens}, Den: &Rate{Signal: vllm.SpecDraftTokens}},
			&Gauge{Signal: vllm.V0AcceptanceRate, Agg: Avg, Unless: []vllm.Signal{vllm.SpecDraftTokens}},
		}}}}, Flavors: vllmFlavors}
	SpecAcceptanceLength = &Entry{Type: TypeSpecDecode, Name: "acceptance_length", Label: "Acceptance length", Default: true,
		Description: "1 + accepted tokens ÷ drafts over the window: tokens emitted per verification step.",
		Outputs: []Output{{Name: "acceptance_length", Unit: "short", Node: &Div{
			Num: &Rate{Signal: vllm.SpecAcceptedTokens}, Den: &Rate{Signal: vllm.SpecDrafts}, Form: OnePlus}}}, Flavors: v1Flavors}

	ThroughputPrompt = &Entry{Type: TypeThroughput, Name: "prompt_tokens", Label: "Prompt tokens/s", Default: true, Description: "Prompt (input) tokens per second.",
		Outputs: []Output{{Name: "prompt_tokens_per_second", Unit: "short", Node: &Rate{Signal: vllm.PromptTokens}}}, Flavors: vllmFlavors}
	ThroughputRequests = &Entry{Type: TypeThroughput, Name: "requests", Label: "Requests/s",
		Description: "Finished requests per second by finished_reason (Dynamo's frontend: by status).",
		Outputs: []Output{{Name: "requests_per_second", Unit: "reqps", Node: &Or{Parts: []Node{
			&Rate{Signal: vllm.RequestSuccess, Keep: []string{"finished_reason"}}, &Rate{Signal: vllm.DynamoRequests, Keep: []string{"status"}}}}}},
		Flavors: withFrontend}
	// ThroughputFinishShare shows why requests end: a large length share with few tokens each is clients asking for
	// a small max_tokens.
	ThroughputFinishShare = &Entry{Type: TypeThroughput, Name: "finish_share", Label: "Finish reasons",
		Description: "Each finished_reason's share of finished requests over the window (stop, length, abort, error).",
		Outputs: []Output{{Name: "finished_request_share", Unit: "percentunit", Node: &Div{
			Num: &Rate{Signal: vllm.RequestSuccess, Keep: []string{"finished_reason"}, Match: []Matcher{Match("finished_reason", ".+")}},
			Den: finished, Ignoring: "finished_reason"}}},
		Flavors: vllmFlavors}
	ThroughputTokensPerRequest = &Entry{Type: TypeThroughput, Name: "tokens_per_request", Label: "Tokens per request",
		Description: "Mean prompt and generated tokens per finished request over the window, from the request length histograms.",
		Outputs: []Output{
			{Name: "prompt_tokens_per_request", Unit: "short", Node: &Mean{Signal: vllm.PromptTokensHist}},
			{Name: "generation_tokens_per_request", Unit: "short", Node: &Mean{Signal: vllm.GenerationTokensHist}},
		}, Flavors: withFrontend}
	// ThroughputLengthBuckets feeds the prompt and generation length heatmaps: per-bucket rates, which Grafana's
	// heatmap draws as rows, the way vLLM's own dashboards show request lengths.
	ThroughputLengthBuckets = &Entry{Type: TypeThroughput, Name: "length_buckets", Label: "Request lengths (heatmap)",
		Description: "Finished requests per second in each prompt-length and generation-length bucket over the window (le, the bucket's upper bound in tokens; each bucket its own, not cumulative), from the request length histograms: a heatmap's rows.",
		Outputs: []Output{
			{Name: "prompt_length_requests_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.PromptTokensHist, Suffix: BucketSuffix, Keep: []string{"le"}}},
			{Name: "generation_length_requests_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.GenerationTokensHist, Suffix: BucketSuffix, Keep: []string{"le"}}},
		}, Flavors: withFrontend}
	// ThroughputStepTokens shows batch fill: steps far below the token budget with requests waiting point at KV or
	// sequence limits, not compute.
	ThroughputStepTokens = &Entry{Type: TypeThroughput, Name: "step_tokens", Label: "Tokens per step",
		Description: "Quantiles of the tokens one engine step processed (prompt and generated) over the window: how full the batches run.",
		Outputs:     []Output{{Name: "step_tokens", Unit: "short", Node: &Quantiles{Signal: vllm.IterationTokens}}},
		Flavors:     vllmFlavors}
	// ThroughputRequestParams is what clients ask for: a max_tokens far above the tokens generated reserves nothing
	// in vLLM but says how long answers may grow.
	ThroughputRequestParams = &Entry{Type: TypeThroughput, Name: "request_params", Label: "Request parameters",
		Description: "Mean max_tokens and n of the requests finished over the window, and the most tokens each could have generated.",
		Outputs: []Output{
			{Name: "max_tokens_per_request", Unit: "short", Node: &Mean{Signal: vllm.ParamsMaxTokens}},
			{Name: "n_per_request", Unit: "short", Node: &Mean{Signal: vllm.ParamsN}},
			{Name: "max_generation_tokens_per_request", Unit: "short", Node: &Mean{Signal: vllm.MaxGenerationTokens}},
		}, Flavors: vllmFlavors}
	// ThroughputDynamoComponents tells a Dynamo deployment's workers apart by component (prefill and decode workers of
	// a disaggregated one): what each handles, fails and holds.
	ThroughputDynamoComponents = &Entry{Type: TypeThroughput, Name: "dynamo_components", Label: "Dynamo components",
		Description: "Per Dynamo component (dynamo_component): requests its work handler processed per second, its errors per second by error_type, the requests in process now, and their mean processing time over the window.",
		Outputs: []Output{
			{Name: "component_requests_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.DynamoComponentRequests, Keep: []string{"dynamo_component"}}},
			{Name: "component_errors_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.DynamoComponentErrors, Keep: []string{"dynamo_component", "error_type"}}},
			{Name: "component_inflight_requests", Unit: "short", Node: &Gauge{Signal: vllm.DynamoComponentInflight, Agg: Sum, Keep: []string{"dynamo_component"}}},
			{Name: "component_request_seconds", Unit: "s", Node: &Mean{Signal: vllm.DynamoComponentDuration}},
		}, Flavors: []vllm.Flavor{vllm.FlavorDynamoWorker}}
	// ThroughputDynamoWorkerLatency is the frontend's last view of each worker: a worker whose TTFT stands apart is
	// the one to look at.
	ThroughputDynamoWorkerLatency = &Entry{Type: TypeThroughput, Name: "dynamo_worker_latency", Label: "Dynamo worker latency",
		Description: "The last time to first token and inter-token latency Dynamo's frontend observed on each worker and DP rank, by worker_type.",
		Outputs: []Output{
			{Name: "worker_last_ttft_seconds", Unit: "s", Node: &Gauge{Signal: vllm.DynamoWorkerLastTTFT, Agg: Avg, Keep: []string{"worker_type"}}},
			{Name: "worker_last_itl_seconds", Unit: "s", Node: &Gauge{Signal: vllm.DynamoWorkerLastITL, Agg: Avg, Keep: []string{"worker_type"}}},
		}, Flavors: frontendOnly}
	// ThroughputHTTP is what clients see of the API server: 5xx answers include requests the engine never counted
	// (refused, timed out in the server), which finished_reason cannot show.
	ThroughputHTTP = &Entry{Type: TypeThroughput, Name: "api_http", Label: "API server HTTP",
		Description: "The API server's HTTP requests per second by status class (2xx, 4xx, 5xx), the share answered 5xx (percent), and the mean time per request over the window (prometheus-fastapi-instrumentator's http_requests_total and http_request_duration_seconds).",
		Outputs: []Output{
			{Name: "http_requests_per_second", Unit: "reqps", Node: httpRequests},
			// 100 − the other classes' share: 0 where no request was answered 5xx (the instrumentator creates a
			// status class's series on its first request).
			{Name: "http_5xx_percent", Unit: "percent", Node: &Div{Num: &Rate{Signal: vllm.HTTPRequests, Match: []Matcher{Match("status", "[1-4]xx")}},
				Den: &Rate{Signal: vllm.HTTPRequests}, Form: UsedPercent}},
			{Name: "http_request_seconds", Unit: "s", Node: &Mean{Signal: vllm.HTTPDuration}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorV0, vllm.FlavorAscend}}
	// ThroughputCorrupted is worth a page on any increase: NaN logits mean wrong answers, not slow ones.
	ThroughputMigrations = &Entry{Type: TypeThroughput, Name: "migrations", Label: "Migrations",
		Description: "Requests per second Dynamo's frontend moved to another worker after theirs went away, by migration_type (new_request before the stream started, ongoing_request during it).",
		Outputs:     []Output{{Name: "migrations_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.DynamoMigrations, Keep: []string{"migration_type"}}}},
		Flavors:     frontendOnly}
	ThroughputCorrupted = &Entry{Type: TypeThroughput, Name: "corrupted", Label: "Corrupted requests",
		Description: "Requests per second whose logits held NaNs (vllm:corrupted_requests_total, counted with VLLM_COMPUTE_NANS_IN_LOGITS=1).",
		Outputs:     []Output{{Name: "corrupted_requests_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.CorruptedRequests}}},
		Flavors:     v1Flavors, Needs: []string{NeedsNaNCheck}}
	ThroughputErrors = &Entry{Type: TypeThroughput, Name: "errors", Label: "Failed requests",
		Description: "Requests finished with finished_reason error or abort per second (Dynamo's frontend: status error, by error_type), and their share of all finished requests.",
		Outputs: []Output{
			{Name: "failed_requests_per_second", Unit: "reqps", Node: &Or{Parts: []Node{
				failed, &Rate{Signal: vllm.DynamoRequests, Match: dynamoFailed.Match, Keep: []string{"error_type"}}}}},
			{Name: "failed_request_ratio", Unit: "percentunit", Node: &Div{
				Num: &Or{Parts: []Node{failed, dynamoFailed}}, Den: &Or{Parts: []Node{finished, dynamoRequests}}}},
		}, Flavors: withFrontend}

	QueueRunning = &Entry{Type: TypeQueue, Name: "running", Label: "Running", Default: true,
		Description: "Requests in the running batch.",
		Outputs:     []Output{{Name: "running", Unit: "short", Node: running}}, Flavors: vllmFlavors}
	QueueWaiting = &Entry{Type: TypeQueue, Name: "waiting", Label: "Waiting", Default: true,
		Description: "Requests waiting to be scheduled.",
		Outputs:     []Output{{Name: "waiting", Unit: "short", Node: waiting}}, Flavors: vllmFlavors}
	QueueSwapped = &Entry{Type: TypeQueue, Name: "swapped", Label: "Swapped", Default: true,
		Description: "Requests swapped to CPU (V0).",
		Outputs:     []Output{{Name: "swapped", Unit: "short", Node: &Gauge{Signal: vllm.Swapped, Agg: Sum}}}, Flavors: v0Only}

	CachePreemptions = &Entry{Type: TypeCache, Name: "preemptions", Label: "Preemptions/s", Default: true,
		Description: "Scheduler preemptions per second.",
		Outputs:     []Output{{Name: "preemptions_per_second", Unit: "short", Node: &Rate{Signal: vllm.Preemptions}}}, Flavors: vllmFlavors}
	CachePrefixHitRate = &Entry{Type: TypeCache, Name: "prefix_hit_rate", Label: "Prefix-cache hit rate", Default: true,
		Description: "Prefix-cache hits ÷ queries over the window from V1's counters, or V0's hit-rate gauge per endpoint.",
		Outputs: []Output{{Name: "prefix_hit_rate", Unit: "percentunit", Node: &Or{Parts: []Node{
			&Div{Num: &Rate{Signal: vllm.PrefixHits}, Den: &Rate{Signal: vllm.PrefixQueries}},
			&Gauge{Signal: vllm.V0PrefixHitRate, Agg: Avg, Unless: []vllm.Signal{vllm.PrefixQueries}},
		}}}}, Flavors: vllmFlavors}

	KVTransferLatency = &Entry{Type: TypeKVTransfer, Name: "latency", Label: "Transfer time", Default: true,
		Description: "Quantiles of one NIXL KV transfer's duration over the window, from vllm:nixl_xfer_time_seconds.",
		Outputs:     []Output{{Name: "kv_transfer_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.NixlXferTime}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}
	KVTransferFailures = &Entry{Type: TypeKVTransfer, Name: "failures", Label: "Failures", Default: true,
		Description: "Failed NIXL transfers per second, and their share of all transfers (failed ÷ failed + completed); a failed transfer's prompt is computed again on the decode side.",
		Outputs: []Output{
			{Name: "kv_transfer_failures_per_second", Unit: "short", Node: failedTransfers},
			{Name: "kv_transfer_failure_ratio", Unit: "percentunit", Node: &Div{Num: failedTransfers, Den: &Add{A: failedTransfers, B: transfers}}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}

	KVTransferThroughput = &Entry{Type: TypeKVTransfer, Name: "throughput", Label: "Bandwidth", Default: true,
		Description: "KV bytes and transfers per second over the window.",
		Outputs: []Output{
			{Name: "kv_transfer_bytes_per_second", Unit: "Bps", Node: &Rate{Signal: vllm.NixlBytes, Suffix: "_sum"}},
			{Name: "kv_transfers_per_second", Unit: "short", Node: transfers},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}
	// KVTransferExpired reads both sides of a pair: the instance holding KV frees what expired unread, the one reading
	// it fails to notify the holder; role detection (pkg/role) reads each as its side's evidence.
	KVTransferExpired = &Entry{Type: TypeKVTransfer, Name: "expired", Label: "Expired and unnotified",
		Description: "Requests per second whose held KV expired before a decode instance read it, and completion notifications per second that failed to reach the holder.",
		Outputs: []Output{
			{Name: "kv_expired_requests_per_second", Unit: "short", Node: &Rate{Signal: vllm.NixlExpiredRequests}},
			{Name: "kv_failed_notifications_per_second", Unit: "short", Node: &Rate{Signal: vllm.NixlFailedNotifications}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}
	// QueueDeferred is the waiting requests vLLM defers rather than lacks room for: on a decode instance, those
	// waiting for their KV to arrive.
	QueueDeferred = &Entry{Type: TypeQueue, Name: "deferred", Label: "Deferred (KV transfer)",
		Description: "Waiting requests deferred by a transient constraint rather than waiting for room: on a decode instance, requests waiting for their prompt's KV to arrive (also a LoRA budget or a blocked request).",
		Outputs:     []Output{{Name: "deferred_requests", Unit: "short", Node: &Gauge{Signal: vllm.WaitingByReason, Agg: Sum, Match: []Matcher{Match("reason", "deferred")}}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend}, Recent: true}
	// KVTransferPDTTFT is answered by the data source, not the engines: its parts come from different instances,
	// chosen by role (pkg/role).
	KVTransferPDTTFT = &Entry{Type: TypeKVTransfer, Name: "pd_ttft", Label: "P/D TTFT",
		Description: "End-to-end time to first token of disaggregated serving, per model and quantile: the prefill instances' TTFT + the decode instances' KV transfer time + their queue time, each part's own quantile (a sum of quantiles, an upper estimate of the sum's quantile); the decode side's share (transfer + queue) is shown apart as decode_inflation_seconds.",
		Outputs: []Output{
			{Name: "pd_ttft_seconds", Unit: "s", Node: &PD{Part: PDTotal}},
			{Name: "prefill_ttft_seconds", Unit: "s", Node: &PD{Part: PDPrefillTTFT}},
			{Name: "kv_transfer_seconds", Unit: "s", Node: &PD{Part: PDTransfer}},
			{Name: "decode_queue_seconds", Unit: "s", Node: &PD{Part: PDDecodeQueue}},
			{Name: "decode_inflation_seconds", Unit: "s", Node: &PD{Part: PDInflation}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}

	// KVTransferPDBalance is llm-d's P/D imbalance (prefill workers' mean running ÷ decode workers'), by role
	// (pkg/role) rather than by pod name, per model.
	KVTransferPDBalance = &Entry{Type: TypeKVTransfer, Name: "pd_balance", Label: "P/D balance",
		Description: "Mean running requests per prefill instance ÷ mean per decode instance (at least 1, so an idle decode side leaves the prefill side's load) at each step, per model (or for the fleet), beside each side's mean: prefill holds a request only until its KV is handed over, so a ratio well above 1 says requests pile up on the prefill side while decode idles.",
		Outputs: []Output{
			{Name: "pd_running_ratio", Unit: "short", Node: &PD{Part: PDRunningRatio}},
			{Name: "prefill_running_per_instance", Unit: "short", Node: &PD{Part: PDPrefillRunning}},
			{Name: "decode_running_per_instance", Unit: "short", Node: &PD{Part: PDDecodeRunning}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}}

	KVOffloadBandwidth = &Entry{Type: TypeKVOffload, Name: "bandwidth", Label: "Bandwidth", Default: true,
		Description: "Bytes per second loaded from offload storage to GPU and stored from GPU to it, over the window.",
		Outputs: []Output{
			{Name: "kv_offload_load_bytes_per_second", Unit: "Bps", Node: offloadLoads},
			{Name: "kv_offload_store_bytes_per_second", Unit: "Bps", Node: offloadStores},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsOffload}}
	KVOffloadCPUUsage = &Entry{Type: TypeKVOffload, Name: "cpu_usage", Label: "CPU cache usage", Default: true,
		Description: "Share of the offloading connector's CPU blocks neither free nor evictable (held by transfers in flight), 0–100: near 100, new stores find no room.",
		Outputs:     []Output{{Name: "kv_offload_cpu_usage", Unit: "percent", Node: &Gauge{Signal: vllm.OffloadCPUUsage, Agg: Avg, Scale: 100}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsOffload}}
	PromptSourcesBySource = &Entry{Type: TypePromptSource, Name: "by_source", Label: "By source", Default: true,
		Description: "Prompt tokens per second by source (local_compute, local_cache_hit, external_kv_transfer) and each source's share of all prompt tokens over the window.",
		Outputs: []Output{
			{Name: "prompt_tokens_per_second", Unit: "short", Node: promptBySource},
			{Name: "prompt_token_share", Unit: "percentunit", Node: &Div{Num: promptBySource, Den: &Rate{Signal: vllm.PromptTokensBySource}, Ignoring: "source"}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend}, Recent: true}
	KVOffloadFailures = &Entry{Type: TypeKVOffload, Name: "failures", Label: "Failed allocations", Default: true,
		Description: "Offload stores per second that found no room in offload storage; their KV is not kept for reuse.",
		Outputs:     []Output{{Name: "kv_offload_allocation_failures_per_second", Unit: "short", Node: &Rate{Signal: vllm.OffloadAllocationFailures}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsOffload}}

	LMCacheHitRate = &Entry{Type: TypeLMCache, Name: "hit_rate", Label: "Hit rate", Default: true,
		Description: "Tokens LMCache found ÷ tokens it was asked for, over the window (in multi-process mode: looked up).",
		Outputs: []Output{{Name: "lmcache_hit_rate", Unit: "percentunit", Node: &Div{
			Num: lmcacheHits, Den: &Rate{Signal: vllm.LMCacheRequestedTokens}}}},
		Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsLMCache, NeedsLMCacheMP}}

	// LatencySLOAttainment is what vLLM's SLO tiles show, at any threshold: between bucket bounds it interpolates as
	// histogram_quantile does, and the answer says so.
	LatencySLOAttainment = &Entry{Type: TypeLatency, Name: "slo_attainment", Label: "SLO attainment",
		Description: "Share of requests at or below the query's threshold (seconds) over the window, from the bucket rates; a threshold between bucket bounds is interpolated linearly inside its bucket, as histogram_quantile does.",
		Outputs:     []Output{{Name: MetricName + "_slo_attainment", Unit: "percentunit", Node: &Attainment{}}}, Flavors: withFrontend}
	// LatencyGoodput is per SLO: a histogram cannot tell whether one request met several SLOs at once.
	LatencyGoodput = &Entry{Type: TypeLatency, Name: "goodput", Label: "Goodput",
		Description: "Requests per second at or below the query's threshold (seconds) over the window: the SLO attainment's numerator, interpolated the same way; one SLO at a time, since a histogram cannot tell whether a request met several.",
		Outputs:     []Output{{Name: MetricName + "_goodput", Unit: "reqps", Node: &Attainment{Goodput: true}}}, Flavors: withFrontend}
	LatencyQuantiles = &Entry{Type: TypeLatency, Name: "quantiles", Label: "Quantiles", Default: true,
		Description: "histogram_quantile over the window for each quantile, from bucket rates summed by le.",
		Outputs:     []Output{{Name: MetricName, Unit: MetricUnit, Node: &Quantiles{}}}, Flavors: withFrontend}

	DPBalanceRunningWaiting = balance("running_waiting", "Running + waiting", "Rank load = running plus waiting requests.", "short",
		&Add{A: running, B: waiting}, false)
	DPBalanceKVUsage = balance("kv_usage", "KV usage", "Rank load = KV-cache usage %.", "percent", kvUsage, false)
	// DPBalanceRouterDecodeBlocks reads the KV router's books, the only per-rank load a Dynamo frontend has: how
	// evenly it spreads work over every worker's DP ranks, before any worker is scraped.
	DPBalanceRouterDecodeBlocks = balanceOf("router_decode_blocks", "Router: decode blocks",
		"Rank load = KV blocks Dynamo's KV router counts on each worker and DP rank (rank worker_id/dp_rank); a rank counts as queueing while the router has prompt tokens on it not yet prefilled.",
		"short", &Gauge{Signal: vllm.DynamoWorkerDecodeBlocks, Agg: Sum}, &Gauge{Signal: vllm.DynamoWorkerPrefillTokens, Agg: Sum}, false, frontendOnly)

	EngineStatus = &Entry{Type: TypeEngineState, Name: "state", Label: "State", Default: true,
		Description: "Each engine's state: 3 online, 2 asleep (engine_sleep_state other than awake), 1 unhealthy (engine_healthy 0 under --enable-fault-tolerance); the lowest of a group's engines when grouped wider. A down endpoint has no state: its scrapes fail (raw up is 0).",
		Outputs:     []Output{{Name: "engine_state", Unit: "short", Node: &EngineState{}, Codes: EngineStates}}, Flavors: v1Flavors, Recent: true}
	// EngineServing is the no-healthy-backend alert's measure: per model, the engines that serve.
	EngineServing = &Entry{Type: TypeEngineState, Name: "serving", Label: "Serving engines",
		Description: "Engines online per group (asleep, unhealthy and those on an endpoint whose scrapes fail count 0); 0 while one of the group's engines has reported within the window (within the query's range in direct mode) but none serves now, as when every endpoint of a model is down or asleep.",
		Outputs:     []Output{{Name: "serving_engines", Unit: "short", Node: &EngineState{Serving: true}}}, Flavors: v1Flavors, Recent: true}
	RawSeries = &Entry{Type: TypeRaw, Name: "series", Label: "Series", Default: true,
		Description: "Any vLLM, vLLM-Ascend or Dynamo series by name with label matchers; histograms as buckets or quantiles; up is 1 or 0 per endpoint after each scrape.",
		Outputs:     []Output{{Node: &Raw{}}}, Flavors: withFrontend}
)

// Catalog is every entry, in the editors' and the README's order.
var Catalog = []*Entry{
	KVUsage, KVBlocks,

	SpecAcceptanceRate, SpecAcceptanceLength,
	{Type: TypeSpecDecode, Name: "per_position", Label: "Per position",
		Description: "Acceptance rate per draft position: accepted at the position ÷ drafts.",
		Outputs: []Output{{Name: "acceptance_per_position", Unit: "percentunit", Node: &Div{
			Num: &Rate{Signal: vllm.SpecAcceptedPerPos, Keep: []string{"position"}}, Den: &Rate{Signal: vllm.SpecDrafts}, Ignoring: "position"}}},
		Flavors: v1Flavors},
	{Type: TypeSpecDecode, Name: "num_spec_tokens", Label: "Speculative tokens",
		Description: "Configured speculative tokens (vLLM-Ascend profiler).",
		Outputs:     []Output{{Name: "num_spec_tokens", Unit: "short", Node: &Gauge{Signal: vllm.AscendNumSpecTokens, Agg: Avg}}}, Flavors: ascendOnly},
	{Type: TypeSpecDecode, Name: "efficiency", Label: "Efficiency",
		Description: "V0's speculative-decoding system efficiency gauge.",
		Outputs:     []Output{{Name: "efficiency", Unit: "percentunit", Node: &Gauge{Signal: vllm.V0Efficiency, Agg: Avg}}}, Flavors: v0Only},

	balance("running", "Running", "Rank load = running requests.", "short", running, true),
	balance("waiting", "Waiting", "Rank load = waiting requests.", "short", waiting, false),
	DPBalanceRunningWaiting,
	DPBalanceKVUsage,
	balance("generation_tps", "Generation tokens/s", "Rank load = generation tokens per second.", "short", generationTokens, false),
	DPBalanceRouterDecodeBlocks,

	LatencyQuantiles,
	LatencySLOAttainment, LatencyGoodput,
	{Type: TypeLatency, Name: "mean", Label: "Mean", Description: "Mean observation over the window: rate of the sum ÷ rate of the count.",
		Outputs: []Output{{Name: MetricName + "_mean", Unit: MetricUnit, Node: &Mean{}}}, Flavors: withFrontend},

	ThroughputPrompt,
	{Type: TypeThroughput, Name: "generation_tokens", Label: "Generation tokens/s", Default: true, Description: "Generated (output) tokens per second.",
		Outputs: []Output{{Name: "generation_tokens_per_second", Unit: "short", Node: generationTokens}}, Flavors: withFrontend},
	ThroughputRequests, ThroughputErrors, ThroughputFinishShare, ThroughputTokensPerRequest, ThroughputLengthBuckets, ThroughputStepTokens,
	ThroughputRequestParams, ThroughputCorrupted, ThroughputMigrations, ThroughputDynamoComponents, ThroughputDynamoWorkerLatency,
	ThroughputHTTP,
	{Type: TypeThroughput, Name: "ascend_input", Label: "Ascend input tokens/s", Description: "vLLM-Ascend profiler input tokens per second.",
		Outputs: []Output{{Name: "input_tokens_per_second", Unit: "short", Node: &Rate{Signal: vllm.AscendInputTokens}}}, Flavors: ascendOnly},
	{Type: TypeThroughput, Name: "ascend_output", Label: "Ascend output tokens/s", Description: "vLLM-Ascend profiler output tokens per second.",
		Outputs: []Output{{Name: "output_tokens_per_second", Unit: "short", Node: &Rate{Signal: vllm.AscendOutputTokens}}}, Flavors: ascendOnly},

	QueueRunning, QueueWaiting, QueueSwapped,
	{Type: TypeQueue, Name: "waiting_by_reason", Label: "Waiting by reason", Description: "Waiting requests split by reason (capacity, deferred); newest vLLM only.",
		Outputs: []Output{{Name: "waiting", Unit: "short", Node: &Gauge{Signal: vllm.WaitingByReason, Agg: Sum, Keep: []string{"reason"}}}},
		Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend}, Recent: true},
	QueueDeferred,
	{Type: TypeQueue, Name: "frontend", Label: "Dynamo frontend",
		Description: "Dynamo's frontend: requests in flight to the engines, requests queued before their first response, clients that disconnected before their answer, and requests the KV router holds before any worker takes them (with --router-queue-threshold).",
		Outputs: []Output{
			{Name: "frontend_inflight_requests", Unit: "short", Node: &Gauge{Signal: vllm.DynamoInflight, Agg: Sum}},
			{Name: "frontend_queued_requests", Unit: "short", Node: &Gauge{Signal: vllm.DynamoQueued, Agg: Sum}},
			{Name: "frontend_disconnected_clients", Unit: "short", Node: &Gauge{Signal: vllm.DynamoDisconnected, Agg: Sum}},
			{Name: "router_pending_requests", Unit: "short", Node: &Gauge{Signal: vllm.DynamoRouterQueue, Agg: Sum}},
		}, Flavors: frontendOnly},
	{Type: TypeQueue, Name: "ascend_batch_size", Label: "Ascend batch size", Description: "Average batch size over the window (vLLM-Ascend profiler).",
		Outputs: []Output{{Name: "ascend_batch_size_avg", Unit: "short", Node: &Mean{Signal: vllm.AscendBatchSize}}}, Flavors: ascendOnly},
	{Type: TypeQueue, Name: "ascend_waiting_batch_size", Label: "Ascend waiting batch size", Description: "Average waiting batch size over the window (vLLM-Ascend profiler).",
		Outputs: []Output{{Name: "ascend_waiting_batch_size_avg", Unit: "short", Node: &Mean{Signal: vllm.AscendWaitingBatchSize}}}, Flavors: ascendOnly},

	CachePreemptions, CachePrefixHitRate,
	{Type: TypeCache, Name: "external_prefix_hit_rate", Label: "External prefix-cache hit rate", Description: "KV-connector (cross-instance) cache hits ÷ queries over the window.",
		Outputs: []Output{{Name: "external_prefix_hit_rate", Unit: "percentunit", Node: &Div{
			Num: &Rate{Signal: vllm.ExternalPrefixHits}, Den: &Rate{Signal: vllm.ExternalPrefixQueries}}}}, Flavors: v1Flavors, Recent: true},
	{Type: TypeCache, Name: "mm_hit_rate", Label: "Multi-modal cache hit rate", Description: "Multi-modal cache hits ÷ queries over the window.",
		Outputs: []Output{{Name: "mm_hit_rate", Unit: "percentunit", Node: &Div{
			Num: &Rate{Signal: vllm.MMCacheHits}, Den: &Rate{Signal: vllm.MMCacheQueries}}}}, Flavors: v1Flavors, Recent: true},

	// Predicted beside found: a router that predicts far more hits than the engines find routes on a stale index.
	{Type: TypeCache, Name: "kv_routing", Label: "Dynamo KV routing",
		Description: "The KV hit rate Dynamo's KV router predicted when it chose each request's worker (mean over the window), beside the share of prompt tokens the engines then found cached (cached ÷ input tokens, from the frontend's histograms).",
		Outputs: []Output{
			{Name: "router_predicted_hit_rate", Unit: "percentunit", Node: &Div{
				Num: &Rate{Signal: vllm.DynamoRouterHitRate, Suffix: "_sum"}, Den: &Rate{Signal: vllm.DynamoRouterHitRate, Suffix: "_count"}}},
			{Name: "cached_prompt_share", Unit: "percentunit", Node: &Div{
				Num: &Rate{Signal: vllm.DynamoCachedTokens, Suffix: "_sum"}, Den: &Rate{Signal: vllm.PromptTokensHist, Suffix: "_sum"}}},
		}, Flavors: frontendOnly},

	// Residency says whether the prefix cache keeps blocks long enough to be reused: a reuse gap longer than the idle
	// time before eviction means cached blocks are evicted before the next request could hit them.
	{Type: TypeCache, Name: "residency", Label: "KV block residency",
		Description: "Quantiles over the window of a KV block's lifetime (allocation to eviction), its idle time before eviction, and the gap between two uses of a cached block; needs --kv-cache-metrics (sampled blocks).",
		Outputs: []Output{
			{Name: "kv_block_lifetime_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.KVBlockLifetime}},
			{Name: "kv_block_idle_before_evict_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.KVBlockIdleBeforeEvict}},
			{Name: "kv_block_reuse_gap_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.KVBlockReuseGap}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsKVCacheMetrics}},

	// NIXL records each transfer on the instance that pulls the KV: in disaggregated prefill/decode, the decode side.
	KVTransferLatency, KVTransferThroughput, KVTransferFailures,
	KVTransferExpired,
	{Type: TypeKVTransfer, Name: "descriptors", Label: "Descriptors per transfer",
		Description: "Mean NIXL descriptors per transfer over the window: how fragmented the KV each transfer moves is.",
		Outputs:     []Output{{Name: "kv_transfer_descriptors", Unit: "short", Node: &Mean{Signal: vllm.NixlDescriptors}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}},
	{Type: TypeKVTransfer, Name: "post_time", Label: "Post time",
		Description: "Quantiles of the time to post one NIXL transfer request over the window; high while transfer time is normal points at the host, not the link.",
		Outputs:     []Output{{Name: "kv_transfer_post_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.NixlPostTime}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsNIXL}},
	KVTransferPDTTFT, KVTransferPDBalance,

	KVOffloadBandwidth,
	{Type: TypeKVOffload, Name: "copy_speed", Label: "Copy speed",
		Description: "Bytes moved per second of copying, loads and stores apart: bytes ÷ seconds spent over the window; a drop means the copies contend for the link.",
		Outputs: []Output{
			{Name: "kv_offload_load_speed", Unit: "Bps", Node: &Div{Num: offloadLoads, Den: &Rate{Signal: vllm.OffloadLoadTime, Match: offloadLoadMatch}}},
			{Name: "kv_offload_store_speed", Unit: "Bps", Node: &Div{Num: offloadStores, Den: &Rate{Signal: vllm.OffloadStoreTime, Match: offloadStoreMatch}}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsOffload}},
	KVOffloadFailures,
	KVOffloadCPUUsage,
	{Type: TypeKVOffload, Name: "lookup_delay", Label: "Lookup time",
		Description: "Quantiles of one offload lookup call's duration over the window.",
		Outputs:     []Output{{Name: "kv_offload_lookup_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.OffloadLookupDelay}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsOffload}},

	LMCacheHitRate,
	{Type: TypeLMCache, Name: "requests", Label: "Requests/s", Default: true,
		Description: "LMCache retrieve and store requests per second over the window.",
		Outputs: []Output{
			{Name: "lmcache_retrieves_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.LMCacheRetrieves}},
			{Name: "lmcache_stores_per_second", Unit: "reqps", Node: &Rate{Signal: vllm.LMCacheStores}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsLMCache}},
	{Type: TypeLMCache, Name: "retrieve_time", Label: "Retrieval time",
		Description: "Quantiles of one LMCache retrieval's duration over the window.",
		Outputs:     []Output{{Name: "lmcache_retrieve_seconds", Unit: "s", Node: &Quantiles{Signal: vllm.LMCacheRetrieveTime}}},
		Flavors:     []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsLMCache}},

	{Type: TypeLMCache, Name: "multi_process", Label: "Multi-process",
		Description: "Multi-process LMCache (LMCacheMPConnector): retrievals submitted per second and the share deferred, the share of hits its L1 (CPU memory) served, and L1 bytes in use.",
		Outputs: []Output{
			{Name: "lmcache_retrieves_submitted_per_second", Unit: "reqps", Node: mpRetrieves},
			{Name: "lmcache_deferred_retrieve_ratio", Unit: "percentunit", Node: &Div{Num: &Rate{Signal: vllm.LMCacheMPDeferredRetrieves}, Den: mpRetrieves}},
			{Name: "lmcache_l1_hit_share", Unit: "percentunit", Node: &Div{Num: &Rate{Signal: vllm.LMCacheMPL1HitTokens}, Den: lmcacheHits}},
			{Name: "lmcache_l1_memory_bytes", Unit: "bytes", Node: &Gauge{Signal: vllm.LMCacheMPL1Memory, Agg: Sum}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1}, Needs: []string{NeedsLMCacheMP}},

	// On a decode instance of a disaggregated deployment most prompt tokens arrive by KV transfer: a prompt
	// throughput spike there is not compute (vllm-project/vllm#33289), which the shares show.
	PromptSourcesBySource,
	{Type: TypePromptSource, Name: "cached", Label: "Cached and recomputed",
		Description: "Prompt tokens per second whose KV came from a cache (local or external), and cached tokens computed again for the forward pass.",
		Outputs: []Output{
			{Name: "cached_prompt_tokens_per_second", Unit: "short", Node: &Rate{Signal: vllm.PromptTokensCached}},
			{Name: "recomputed_prompt_tokens_per_second", Unit: "short", Node: &Rate{Signal: vllm.PromptTokensRecomputed}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend}, Recent: true},
	// Which cache tier serves my prompts: the GPU's own prefix cache, CPU or disk offload, or another instance.
	{Type: TypePromptSource, Name: "cached_by_tier", Label: "Cached by tier",
		Description: "Cached prompt tokens per second by the tier that held their KV (device, host, disk, p2p, external_unspecified) and each tier's share of cached tokens over the window; newest vLLM only.",
		Outputs: []Output{
			{Name: "cached_by_tier_tokens_per_second", Unit: "short", Node: cachedByTier},
			{Name: "cached_by_tier_share", Unit: "percentunit", Node: &Div{Num: cachedByTier, Den: &Rate{Signal: vllm.PromptTokensCachedBySource}, Ignoring: "source"}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorAscend}, Recent: true},
	{Type: TypePromptSource, Name: "prefill_computed", Label: "Computed per prefill",
		Description: "Quantiles of the prompt tokens each request's prefill computed, cached tokens left out, over the window.",
		Outputs:     []Output{{Name: "prefill_computed_tokens", Unit: "short", Node: &Quantiles{Signal: vllm.PrefillKVComputed}}},
		Flavors:     v1Flavors, Recent: true},

	{Type: TypeCapacity, Name: "capacity", Label: "Capacity", Default: true,
		Description: "KV pool tokens (num_gpu_blocks × block_size) ÷ mean tokens per request (prompt + generation sums ÷ count over the window) × (1 − headroom), beside the pool and the mean.",
		Outputs: []Output{
			{Name: "kv_pool_tokens", Unit: "short", Node: poolTokens, Flavors: vllmFlavors},
			{Name: "capacity_requests", Unit: "short", Node: &Capacity{Pool: poolTokens, Mean: tokensPerRequest}, Flavors: vllmFlavors},
			{Name: "mean_tokens_per_request", Unit: "short", Node: tokensPerRequest},
		}, Flavors: withFrontend},

	EngineStatus, EngineServing,
	// How long a sleeping engine takes to serve again is what decides whether sleep mode can stand in for spare
	// replicas: wake time is the cold-start an autoscaler waits.
	{Type: TypeEngineState, Name: "api_process", Label: "API server process",
		Description: "The API server process: CPU cores busy (CPU seconds per second over the window), resident memory, open file descriptors and its start time; a single-process API server's prometheus_client process collector (none with --api-server-count above 1).",
		Outputs: []Output{
			{Name: "process_cpu_cores", Unit: "short", Node: &Rate{Signal: vllm.ProcessCPU}},
			{Name: "process_resident_memory", Unit: "bytes", Node: &Gauge{Signal: vllm.ProcessRSS, Agg: Sum}},
			{Name: "process_open_files", Unit: "short", Node: &Gauge{Signal: vllm.ProcessFDs, Agg: Sum}},
			{Name: "process_start_time", Unit: "dateTimeAsIso", Node: &Gauge{Signal: vllm.ProcessStart, Agg: Avg, Scale: 1000}},
		}, Flavors: []vllm.Flavor{vllm.FlavorV1, vllm.FlavorV0}},
	{Type: TypeEngineState, Name: "sleep_operations", Label: "Sleep and wake",
		Description: "Mean duration of each sleep-mode operation (sleep, wake, release_kv_cache_memory) over the window, operations per second, and those the API server is awaiting now; needs --enable-sleep-mode and an operation in the window.",
		Outputs: []Output{
			{Name: "sleep_operation_seconds", Unit: "s", Node: &Div{
				Num: &Rate{Signal: vllm.SleepOperationDuration, Suffix: "_sum", Keep: []string{"operation"}},
				Den: &Rate{Signal: vllm.SleepOperationDuration, Suffix: "_count", Keep: []string{"operation"}}}},
			{Name: "sleep_operations_per_second", Unit: "short", Node: &Rate{Signal: vllm.SleepOperationDuration, Suffix: "_count", Keep: []string{"operation"}}},
			{Name: "sleep_operations_in_flight", Unit: "short", Node: &Gauge{Signal: vllm.SleepOperationsInFlight, Agg: Sum, Keep: []string{"operation"}}},
		}, Flavors: v1Flavors, Needs: []string{NeedsSleepMode}, Recent: true},

	{Type: TypeMFU, Name: "utilization", Label: "Utilisation", Default: true,
		Description: "Achieved FLOP/s per GPU ÷ the peak (MFU), and bytes read and written per second per GPU ÷ the peak memory bandwidth, over the window; no value (off) while vLLM's estimates are still 0, as they are without --enable-mfu-metrics.",
		Outputs: []Output{
			{Name: "model_flops_utilization", Unit: "percentunit", Node: &PerGPU{Signals: flops, Peak: PeakFlops}},
			{Name: "memory_bandwidth_utilization", Unit: "percentunit", Node: &PerGPU{Signals: memoryBytes, Peak: PeakBandwidth}},
		}, Flavors: v1Flavors, Needs: []string{NeedsMFU}},
	{Type: TypeMFU, Name: "achieved", Label: "Achieved",
		Description: "FLOP/s and bytes read and written per second per GPU over the window, as vLLM estimates them; no value (off) while the estimates are still 0.",
		Outputs: []Output{
			{Name: "flops_per_gpu", Unit: "flops", Node: &PerGPU{Signals: flops}},
			{Name: "memory_bytes_per_gpu", Unit: "Bps", Node: &PerGPU{Signals: memoryBytes}},
		}, Flavors: v1Flavors, Needs: []string{NeedsMFU}},

	{Type: TypeLoRA, Name: "adapters", Label: "Adapters", Default: true,
		Description: "Adapters the running batches use, adapters only waiting requests name, and max_lora, per endpoint, from the newest set vllm:lora_requests_info lists (the series with the latest time); summed over endpoints when grouped wider.",
		Outputs: []Output{
			{Name: "lora_running_adapters", Unit: "short", Node: &LoRA{Part: LoRARunning}},
			{Name: "lora_waiting_adapters", Unit: "short", Node: &LoRA{Part: LoRAWaiting}},
			{Name: "lora_max_adapters", Unit: "short", Node: &LoRA{Part: LoRAMax}},
		}, Flavors: v1Flavors, Needs: []string{NeedsLoRA}},
	{Type: TypeLoRA, Name: "by_adapter", Label: "By adapter",
		Description: "Each adapter's state per endpoint: 2 while a running batch uses it, 1 while only waiting requests name it; no value otherwise.",
		Outputs:     []Output{{Name: "lora_adapter_state", Unit: "short", Node: &LoRA{Part: LoRAState}, Codes: LoRAStates}},
		Flavors:     v1Flavors, Needs: []string{NeedsLoRA}},

	RawSeries,
	{Type: TypeDiagnosis, Name: "findings", Label: "Findings", Default: true,
		Description: "A table of what is wrong now: symptom, endpoint, engine, value, likely cause and the knob to turn."},
	{Type: TypePromQL, Name: "series", Label: "Series", Default: true,
		Description: "Prometheus mode only: the user's PromQL, labels as the server returns them.", Fields: []Field{FieldExpr}},
}

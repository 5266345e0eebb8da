package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Config describes one simulated deployment and the server that exposes it. It is what a scenario
// file holds (JSON, snake_case keys); command-line flags override it field by field.
type Config struct {
	// Flavor is which server's /metrics to impersonate.
	Flavor Flavor `json:"flavor"`
	// VLLMVersion, when set, makes the vLLM families exactly those of that release (vllm.SimReleases: 0.6, 0.10,
	// 0.11, 0.13, 0.16, 0.20, 0.24, 0.25, main) under this configuration, as the provenance table vllm.VLLMFamilies records them:
	// names, types, label names and buckets. Empty keeps the flavor's own families.
	VLLMVersion string `json:"vllm_version"`
	// Model is the served model name (label model_name / model).
	Model string `json:"model"`
	// Engines is the data-parallel size: engine="0".."N-1" (dp for Ascend).
	Engines int `json:"engines"`
	// APIServers splits the engines across this many endpoints (external/hybrid DP load balancing).
	APIServers int `json:"api_servers"`
	// APIServerIndex is which share of the engines this endpoint serves.
	APIServerIndex int `json:"api_server_index"`
	// APIServerProcesses is vLLM's --api-server-count behind this one endpoint; above 1 the
	// exposition comes from prometheus_client's multiprocess collector.
	APIServerProcesses int `json:"api_server_processes"`
	// PIDLabel reproduces the pre-vllm-project/vllm#28792 artefact: kv_cache_usage_perc gets a pid
	// label, one series per API-server process, only one of them non-zero.
	PIDLabel bool `json:"pid_label"`

	// Seed makes a run reproducible.
	Seed int64 `json:"seed"`
	// QPS is the fleet-wide mean arrival rate (Poisson).
	QPS float64 `json:"qps"`
	// QPSWaveAmplitude (0..1) modulates the rate sinusoidally: qps*(1+a*sin(2πt/period)).
	QPSWaveAmplitude float64 `json:"qps_wave_amplitude"`
	// QPSWavePeriod is the period of that modulation.
	QPSWavePeriod Duration `json:"qps_wave_period"`
	// PromptTokensMean and PromptTokensSigma shape the log-normal prompt length.
	PromptTokensMean  float64 `json:"prompt_tokens_mean"`
	PromptTokensSigma float64 `json:"prompt_tokens_sigma"`
	// OutputTokensMean and OutputTokensSigma shape the log-normal natural output length.
	OutputTokensMean  float64 `json:"output_tokens_mean"`
	OutputTokensSigma float64 `json:"output_tokens_sigma"`
	// MaxTokens, when > 0, is every request's max_tokens; 0 draws from a typical client mix.
	MaxTokens int `json:"max_tokens"`
	// AbortRate is the share of requests whose client disconnects mid-stream.
	AbortRate float64 `json:"abort_rate"`
	// ErrorRate is the share of requests that end with finished_reason="error" (a 5xx).
	ErrorRate float64 `json:"error_rate"`
	// StreamRate is the share of streaming requests (Dynamo request_type).
	StreamRate float64 `json:"stream_rate"`
	// ClientTimeout is how long a client waits for its first token before giving up (the
	// request is aborted); 0 waits forever. It keeps an overloaded queue bounded, as in life.
	ClientTimeout Duration `json:"client_timeout"`

	// MaxModelLen is --max-model-len; token histograms use 1-2-5 buckets up to it.
	MaxModelLen int `json:"max_model_len"`
	// BlockSize is the KV block size in tokens.
	BlockSize int `json:"block_size"`
	// NumGPUBlocks is the KV pool size per engine (vLLM's num_gpu_blocks, null block included).
	NumGPUBlocks int `json:"num_gpu_blocks"`
	// MaxNumSeqs caps running requests per engine.
	MaxNumSeqs int `json:"max_num_seqs"`
	// MaxNumBatchedTokens is the per-step token budget (chunked prefill).
	MaxNumBatchedTokens int `json:"max_num_batched_tokens"`
	// PrefixHitRate is the target share of prompt tokens served from the prefix cache.
	PrefixHitRate float64 `json:"prefix_hit_rate"`
	// ExternalPrefixHitRate is the share of the prompt tokens the local prefix cache misses that a KV connector
	// (cross-instance cache sharing) finds; 0 runs without a connector. Counted only: it does not shorten prefill.
	ExternalPrefixHitRate float64 `json:"external_prefix_hit_rate"`
	// KVRole is the instance's part in disaggregated prefill/decode: "" (unified); "decode", where the prompt KV
	// the local prefix cache misses arrives from a prefill instance over NIXL (counted only: the engine still spends
	// the prefill's time, standing in for the wait on the transfer); or "prefill", which computes each prompt and
	// one token (the proxy's max_tokens=1) and holds the KV until a decode instance has read it.
	KVRole string `json:"kv_role"`
	// KVTransferMs is the NIXL transfer time of a mean-length prompt's KV; a prompt's transfer takes time in
	// proportion to its length. KVTransferFailRate is the share of transfers that fail, whose prompt is then
	// computed locally.
	KVTransferMs       float64 `json:"kv_transfer_ms"`
	KVTransferFailRate float64 `json:"kv_transfer_fail_rate"`
	// KVOffloadGB is the CPU memory of vLLM's offloading connector (--kv-offloading-size); 0 runs without it. A
	// finished request's KV is stored there and the KV-connector hits (ExternalPrefixHitRate) are loaded from it;
	// KVOffloadFailRate is the share of stores whose allocation fails. Counted only, like the other connectors.
	KVOffloadGB       float64 `json:"kv_offload_gb"`
	KVOffloadFailRate float64 `json:"kv_offload_fail_rate"`
	// LMCache makes the KV connector LMCache: its lookups and hits (ExternalPrefixHitRate) are also counted as
	// LMCache's own lmcache:* metrics, as vLLM's /metrics exposes them with the LMCache connector.
	LMCache bool `json:"lmcache"`
	// LMCacheMP runs LMCache in multi-process mode (LMCacheMPConnector): the same lookups and hits, exposed as
	// lmcache_mp_* (lookups by tier, retrieves submitted, finished and deferred, L1 memory) instead of lmcache:*.
	LMCacheMP bool `json:"lmcache_mp"`
	// SleepLevel puts every engine to sleep for the whole run (vLLM's sleep mode: 1 offloads the weights, 2 discards
	// them): engine_sleep_state says so and the instance serves no request, as a router sends none to it.
	SleepLevel int `json:"sleep_level"`
	// SleepCycle, when set, makes the instance sleep and wake in turn instead: awake for one cycle, asleep at
	// SleepLevel for the next, each switch a sleep or wake operation in vllm:sleep_mode_operation_duration_seconds.
	SleepCycle Duration `json:"sleep_cycle"`
	// FaultTolerance is vLLM's --enable-fault-tolerance: engine_healthy per engine. The last UnhealthyEngines
	// engines report 0 and get no requests.
	FaultTolerance   bool `json:"fault_tolerance"`
	UnhealthyEngines int  `json:"unhealthy_engines"`
	// Ray renders a vllm-v1 instance as Ray Serve re-exports it: ray_vllm_ names, a replica (ReplicaId) per engine.
	Ray bool `json:"ray"`
	// Router renders what vLLM production-stack's router in front of these engines exports instead of the engines'
	// own /metrics: its gauges under vLLM's names (running, waiting, swapped, GPU prefix-cache hit rate, hits and
	// queries) with a server label per engine, as src/vllm_router/services/metrics_service declares them.
	Router bool `json:"router"`
	// NaNLogitsRate is the share of requests whose logits hold NaNs, counted in vllm:corrupted_requests_total as
	// vLLM does with VLLM_COMPUTE_NANS_IN_LOGITS=1; 0 leaves the counter out, as vLLM without the variable does.
	NaNLogitsRate float64 `json:"nan_logits_rate"`
	// MigrationRate is the share of requests Dynamo's frontend moves to another worker mid-stream, counted in
	// dynamo_frontend_model_migration_total{migration_type="ongoing_request"}.
	MigrationRate float64 `json:"migration_rate"`
	// MFU is vLLM's --enable-mfu-metrics: the per-GPU FLOP and byte estimates count; without it vLLM exposes them
	// at 0.
	MFU bool `json:"mfu"`
	// LoRAAdapters serves that many LoRA adapters (adapter-0, …) to half the requests, MaxLoRA of them at once
	// (vLLM's --max-loras): vllm:lora_requests_info lists the adapters running and waiting.
	LoRAAdapters int `json:"lora_adapters"`
	MaxLoRA      int `json:"max_lora"`
	// KVCacheMetrics is vLLM's --kv-cache-metrics: KV block residency histograms (lifetime, idle before eviction,
	// reuse gap).
	KVCacheMetrics bool `json:"kv_cache_metrics"`
	// MMItems is the number of multi-modal items (images) per request, MMHitRate the share found in the
	// multi-modal cache; 0 items serves text only.
	MMItems   int     `json:"mm_items"`
	MMHitRate float64 `json:"mm_hit_rate"`
	// SpecTokens is num_speculative_tokens; 0 disables speculative decoding.
	SpecTokens int `json:"spec_tokens"`
	// SpecAcceptance is the per-position acceptance rate (accepted_per_pos/drafts), non-increasing.
	SpecAcceptance []float64 `json:"spec_acceptance"`
	// Routing is the DP load-balancing policy: "balanced" or "skewed".
	Routing string `json:"routing"`
	// Skew is the share of requests the hot engine (engine 0) takes under "skewed" routing.
	Skew float64 `json:"skew"`
	// Perf is the step-time model; fields a scenario leaves out keep the Llama-3.1-8B defaults.
	Perf Perf `json:"perf"`

	// DynamoNames picks the Dynamo release whose names are rendered: "current" (the worker's
	// dynamo_component_total_blocks and gpu_cache_usage_percent per dp_rank; the frontend's per-worker
	// gauges, router queue, cached tokens, migrations and the KV router's hit rate) or "legacy" (the worker's
	// dynamo_component_kvstats_*, a frontend without any of those).
	DynamoNames string `json:"dynamo_names"`

	// Addr is the listen address; empty means :8000, or :8081 for dynamo-worker.
	Addr string `json:"addr"`
	// FleetSchedule, when set, serves a fleet whose size changes over real time ("4,16@2m,2@5m", ParseFleetSchedule)
	// on consecutive ports from Addr's; SDFile is the file_sd file it keeps current.
	FleetSchedule string `json:"fleet_schedule"`
	SDFile        string `json:"sd_file"`
	// Speed is simulated seconds per real second.
	Speed float64 `json:"speed"`
	// ProfilerConfig is the ms_service_profiler_config.json path (Ascend); defaults to
	// $SERVICE_PROF_CONFIG_PATH.
	ProfilerConfig string `json:"profiler_config"`
	// ProfilerPoll is how often that file is re-read.
	ProfilerPoll Duration `json:"profiler_poll"`
	// SymbolsFile is msServiceProfiler's service_metrics_symbols.yaml (Ascend), read once at start as the
	// profiler does: its timers active on the flavor's vLLM version replace the default chat-completion timer.
	// Defaults to $METRIC_SYMBOLS_PATH.
	SymbolsFile string `json:"symbols_file"`
	// TorchProfilerDir is vLLM's VLLM_TORCH_PROFILER_DIR: with it, POST /start_profile and /stop_profile exist and
	// a stop writes a trace file there. Defaults to $VLLM_TORCH_PROFILER_DIR.
	TorchProfilerDir string `json:"torch_profiler_dir"`
}

// Perf is a step-time model of one engine: a step costs a fixed part (weights read), a part per
// decoding sequence and per context token (KV read), and a part per prefill token (compute).
type Perf struct {
	// StepBaseMs is the fixed cost of one step (reading the weights).
	StepBaseMs float64 `json:"step_base_ms"`
	// DecodePerSeqMs is added per decoding sequence.
	DecodePerSeqMs float64 `json:"decode_per_seq_ms"`
	// KVReadPerKTokenMs is added per 1000 context tokens of the decoding sequences.
	KVReadPerKTokenMs float64 `json:"kv_read_per_ktoken_ms"`
	// PrefillPerTokenMs is added per prompt token computed.
	PrefillPerTokenMs float64 `json:"prefill_per_token_ms"`
	// SpecDraftPerTokenMs is added per speculative position when any sequence decodes.
	SpecDraftPerTokenMs float64 `json:"spec_draft_per_token_ms"`
	// SpecVerifyPerTokMs is added per extra token verified per sequence.
	SpecVerifyPerTokMs float64 `json:"spec_verify_per_token_ms"`
	// APIOverheadMs is the API server's share of TTFT and e2e latency (tokenization, IPC).
	APIOverheadMs float64 `json:"api_overhead_ms"`
	// Jitter is the log-space sigma of the noise on every step.
	Jitter float64 `json:"jitter"`
}

// DefaultPerf approximates Llama-3.1-8B in bf16 on one H100/A100-80GB class GPU.
func DefaultPerf() Perf {
	return Perf{
		StepBaseMs:          7.0,   // ~16 GB of weights read per step
		DecodePerSeqMs:      0.035, // sampling and bookkeeping per sequence
		KVReadPerKTokenMs:   0.06,  // 128 KiB of KV per token at ~2 TB/s
		PrefillPerTokenMs:   0.055, // ~18k prompt tokens/s
		SpecDraftPerTokenMs: 0.9,   // a small draft head per speculative position
		SpecVerifyPerTokMs:  0.02,  // extra verified tokens per sequence
		APIOverheadMs:       1.5,   // tokenization and IPC in the API server
		Jitter:              0.05,
	}
}

// Default returns the built-in configuration: one engine serving Llama-3.1-8B at 4 req/s.
// The roles of a disaggregated prefill/decode pair (Config.KVRole).
const (
	KVRoleDecode  = "decode"
	KVRolePrefill = "prefill"
)

// transferSeconds is how long NIXL takes to move the KV of tokens prompt tokens.
func (c *Config) transferSeconds(tokens int) float64 {
	return c.KVTransferMs / 1000 * float64(tokens) / c.PromptTokensMean
}

// lmcacheL1Bytes is the multi-process LMCache server's L1 (CPU memory) capacity; lmcacheL1Share the share of its
// hits L1 serves, the rest coming from L2.
const (
	lmcacheL1Bytes = 20e9
	lmcacheL1Share = 0.8
)

// modelParams is the parameter count of Llama-3.1-8B, for the MFU estimates.
const modelParams = 8.03e9

// kvBytesPerToken is the KV of one token of Llama-3.1-8B in bf16: 2 (K, V) × 32 layers × 8 KV heads × 128 × 2 bytes.
const kvBytesPerToken = 2 * 32 * 8 * 128 * 2

// lmcacheBytesPerSecond is how fast LMCache retrieves KV from its local CPU cache.
const lmcacheBytesPerSecond = 10e9

// offloadBytesPerSecond is the GPU↔CPU copy speed of the offloading connector (PCIe 4 x16, about 20 GB/s).
const offloadBytesPerSecond = 20e9

func Default() Config {
	return Config{
		Flavor:              FlavorV1,
		Model:               "meta-llama/Llama-3.1-8B-Instruct",
		Engines:             1,
		APIServers:          1,
		APIServerProcesses:  1,
		Seed:                1,
		QPS:                 4,
		QPSWavePeriod:       Duration(10 * time.Minute),
		PromptTokensMean:    1024,
		PromptTokensSigma:   0.9,
		OutputTokensMean:    256,
		OutputTokensSigma:   0.8,
		AbortRate:           0.01,
		StreamRate:          0.8,
		ClientTimeout:       Duration(10 * time.Minute),
		MaxModelLen:         32768,
		BlockSize:           16,
		NumGPUBlocks:        8192,
		MaxNumSeqs:          256,
		MaxNumBatchedTokens: 8192,
		PrefixHitRate:       0.25,
		MaxLoRA:             4,
		KVTransferMs:        25,
		Routing:             "balanced",
		Skew:                0.7,
		Perf:                DefaultPerf(),
		DynamoNames:         "current",
		Speed:               1,
		ProfilerPoll:        Duration(500 * time.Millisecond),
	}
}

// LoadScenario reads a JSON scenario file on top of base; unknown keys are errors so typos surface.
func LoadScenario(path string, base Config) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("scenario: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	cfg := base
	if err := dec.Decode(&cfg); err != nil {
		return base, fmt.Errorf("scenario %s: %w", path, err)
	}
	return cfg, nil
}

// Validate reports every problem with c at once, so a bad scenario is fixed in one go.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, err := ParseFlavor(string(c.Flavor)); err != nil {
		errs = append(errs, err)
	}
	if c.FleetSchedule != "" {
		if _, err := ParseFleetSchedule(c.FleetSchedule); err != nil {
			errs = append(errs, err)
		}
	}
	if c.VLLMVersion != "" {
		if rel, err := vllm.ResolveSimRelease(c.VLLMVersion); err != nil {
			errs = append(errs, err)
		} else if v0 := vllm.V0Release(rel); v0 != c.Flavor.isV0() || c.Flavor == FlavorDynamoFrontend {
			want := "a V1 engine flavor (vllm-v1, vllm-v1-0.10, vllm-ascend, dynamo-worker)"
			if v0 {
				want = "flavor " + string(FlavorV0)
			}
			bad("vllm-version %s needs %s, not %s", c.VLLMVersion, want, c.Flavor)
		}
	}
	if strings.TrimSpace(c.Model) == "" {
		bad("model must not be empty")
	}
	if c.Engines < 1 || c.Engines > 256 {
		bad("engines must be between 1 and 256, got %d", c.Engines)
	}
	if c.Flavor == FlavorV0 && c.Engines != 1 {
		bad("flavor vllm-v0 has no data parallelism (no engine label): engines must be 1, got %d", c.Engines)
	}
	if c.Engines >= 1 && (c.APIServers < 1 || c.APIServers > c.Engines) {
		bad("api-servers must be between 1 and engines (%d), got %d", c.Engines, c.APIServers)
	}
	if c.APIServerIndex < 0 || c.APIServerIndex >= c.APIServers {
		bad("api-server-index must be in [0, %d), got %d", c.APIServers, c.APIServerIndex)
	}
	if c.APIServerProcesses < 1 || c.APIServerProcesses > 64 {
		bad("api-server-processes must be between 1 and 64, got %d", c.APIServerProcesses)
	}
	if c.APIServerProcesses > 1 && (c.Flavor == FlavorV0 || c.Flavor == FlavorDynamoWorker || c.Flavor == FlavorDynamoFrontend) {
		bad("api-server-processes > 1 applies to the V1 API server flavors only, not %s", c.Flavor)
	}
	if c.PIDLabel {
		if c.APIServerProcesses < 2 {
			bad("pid-label needs api-server-processes >= 2 (the artefact comes from several API-server processes)")
		}
		if c.Flavor == FlavorV0 || c.Flavor == FlavorDynamoWorker || c.Flavor == FlavorDynamoFrontend {
			bad("pid-label applies to the V1 API server flavors only, not %s", c.Flavor)
		}
	}
	if c.QPS < 0 || math.IsNaN(c.QPS) || math.IsInf(c.QPS, 0) || c.QPS > 10000 {
		bad("qps must be between 0 and 10000, got %v", c.QPS)
	}
	if c.QPSWaveAmplitude < 0 || c.QPSWaveAmplitude > 1 {
		bad("qps-wave-amplitude must be between 0 and 1, got %v", c.QPSWaveAmplitude)
	}
	if c.QPSWaveAmplitude > 0 && time.Duration(c.QPSWavePeriod) < time.Second {
		bad("qps-wave-period must be at least 1s, got %s", time.Duration(c.QPSWavePeriod))
	}
	if c.ClientTimeout < 0 {
		bad("client-timeout must not be negative")
	}
	if c.PromptTokensMean < 1 || c.OutputTokensMean < 1 {
		bad("prompt-tokens-mean and output-tokens-mean must be >= 1")
	}
	if c.PromptTokensSigma < 0 || c.PromptTokensSigma > 3 || c.OutputTokensSigma < 0 || c.OutputTokensSigma > 3 {
		bad("token sigmas must be between 0 and 3")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"abort-rate", c.AbortRate}, {"error-rate", c.ErrorRate}, {"stream-rate", c.StreamRate},
		{"prefix-hit-rate", c.PrefixHitRate}, {"skew", c.Skew}, {"external-prefix-hit-rate", c.ExternalPrefixHitRate},
		{"mm-hit-rate", c.MMHitRate}, {"nan-logits-rate", c.NaNLogitsRate}, {"migration-rate", c.MigrationRate}, {"kv-transfer-fail-rate", c.KVTransferFailRate}, {"kv-offload-fail-rate", c.KVOffloadFailRate}} {
		if p.v < 0 || p.v > 1 || math.IsNaN(p.v) {
			bad("%s must be between 0 and 1, got %v", p.name, p.v)
		}
	}
	switch {
	case c.KVRole != "" && c.KVRole != KVRoleDecode && c.KVRole != KVRolePrefill:
		bad("kv-role must be empty (unified), %q or %q, got %q", KVRolePrefill, KVRoleDecode, c.KVRole)
	case c.KVRole != "" && c.Flavor != FlavorV1:
		bad("kv-role needs flavor %s", FlavorV1)
	case c.KVTransferMs <= 0 || c.KVTransferMs > 60_000 || math.IsNaN(c.KVTransferMs):
		bad("kv-transfer-ms must be above 0 and at most 60000, got %v", c.KVTransferMs)
	case c.KVOffloadGB < 0 || c.KVOffloadGB > 4096 || math.IsNaN(c.KVOffloadGB):
		bad("kv-offload-gb must be between 0 and 4096, got %v", c.KVOffloadGB)
	case c.KVOffloadGB > 0 && c.Flavor != FlavorV1:
		bad("kv-offload-gb needs flavor %s", FlavorV1)
	case c.SleepLevel < 0 || c.SleepLevel > 2:
		bad("sleep-level must be 0 (awake), 1 or 2, got %d", c.SleepLevel)
	case c.SleepCycle < 0 || c.SleepCycle > 0 && c.SleepLevel == 0:
		bad("sleep-cycle must be 0, or above 0 with sleep-level 1 or 2, got %s", time.Duration(c.SleepCycle))
	case c.SleepLevel > 0 && !c.Flavor.v1().sleepState:
		bad("sleep-level needs a flavor with engine_sleep_state, not %s", c.Flavor)
	case c.UnhealthyEngines < 0 || c.UnhealthyEngines > c.Engines || c.UnhealthyEngines > 0 && !c.FaultTolerance:
		bad("unhealthy-engines must be between 0 and engines, with fault-tolerance; got %d", c.UnhealthyEngines)
	case c.FaultTolerance && (c.Flavor.isV0() || c.Flavor == FlavorDynamoFrontend):
		bad("fault-tolerance needs a V1 engine flavor")
	case c.LoRAAdapters < 0 || c.LoRAAdapters > 64 || c.MaxLoRA < 1 || c.MaxLoRA > 64:
		bad("lora-adapters must be 0–64 and max-lora 1–64, got %d and %d", c.LoRAAdapters, c.MaxLoRA)
	case c.LoRAAdapters > 0 && (c.Flavor.isV0() || c.Flavor == FlavorDynamoFrontend):
		bad("lora-adapters needs a V1 engine flavor")
	case c.Ray && c.Flavor != FlavorV1:
		bad("ray needs flavor %s", FlavorV1)
	case c.Router && (c.Flavor != FlavorV1 || c.Ray):
		bad("router needs flavor %s without ray", FlavorV1)
	case c.NaNLogitsRate > 0 && (c.Flavor.isV0() || c.Flavor == FlavorDynamoFrontend):
		bad("nan-logits-rate needs a V1 engine flavor")
	case c.MigrationRate > 0 && (c.Flavor != FlavorDynamoFrontend || c.DynamoNames == "legacy"):
		bad("migration-rate needs flavor %s with current names", FlavorDynamoFrontend)
	case c.MFU && !c.Flavor.v1().mfu:
		bad("mfu needs a flavor with the MFU estimates, not %s", c.Flavor)
	case c.KVCacheMetrics && c.Flavor != FlavorV1:
		bad("kv-cache-metrics needs flavor %s", FlavorV1)
	case c.LMCache && c.LMCacheMP:
		bad("lmcache and lmcache-mp are two connectors; pick one")
	case c.LMCacheMP && (c.Flavor != FlavorV1 || c.ExternalPrefixHitRate == 0):
		bad("lmcache-mp needs flavor %s and an external-prefix-hit-rate", FlavorV1)
	case c.LMCache && (c.Flavor != FlavorV1 || c.ExternalPrefixHitRate == 0):
		bad("lmcache needs flavor %s and an external-prefix-hit-rate", FlavorV1)
	}
	if c.MMItems < 0 || c.MMItems > 64 {
		bad("mm-items must be between 0 and 64, got %d", c.MMItems)
	}
	if c.AbortRate+c.ErrorRate > 1 {
		bad("abort-rate + error-rate must not exceed 1")
	}
	if c.MaxModelLen < 64 || c.MaxModelLen > 1<<21 {
		bad("max-model-len must be between 64 and %d, got %d", 1<<21, c.MaxModelLen)
	}
	if c.MaxTokens < 0 || c.MaxTokens >= c.MaxModelLen {
		bad("max-tokens must be between 0 (client mix) and max-model-len-1, got %d", c.MaxTokens)
	}
	switch c.BlockSize {
	case 1, 8, 16, 32, 64, 128:
	default:
		bad("block-size must be one of 1, 8, 16, 32, 64, 128, got %d", c.BlockSize)
	}
	if c.MaxNumSeqs < 1 || c.MaxNumSeqs > 4096 {
		bad("max-num-seqs must be between 1 and 4096, got %d", c.MaxNumSeqs)
	}
	if c.SpecTokens < 0 || c.SpecTokens > 16 {
		bad("spec-tokens must be between 0 and 16, got %d", c.SpecTokens)
	}
	if c.MaxNumBatchedTokens < 1+c.SpecTokens || c.MaxNumBatchedTokens > 1<<20 {
		bad("max-num-batched-tokens must be between %d and %d, got %d", 1+c.SpecTokens, 1<<20, c.MaxNumBatchedTokens)
	}
	if c.BlockSize > 0 && c.MaxModelLen > 0 {
		// vLLM refuses to start when one max-length sequence cannot fit in the KV cache.
		need := (c.MaxModelLen+c.SpecTokens+c.BlockSize)/c.BlockSize + 1
		if c.NumGPUBlocks < need || c.NumGPUBlocks > 1<<24 {
			bad("num-gpu-blocks must be between %d (one max-model-len sequence) and %d, got %d", need, 1<<24, c.NumGPUBlocks)
		}
	}
	if c.SpecTokens > 0 {
		if len(c.SpecAcceptance) != 0 && len(c.SpecAcceptance) != c.SpecTokens {
			bad("spec-acceptance needs %d values (one per position), got %d", c.SpecTokens, len(c.SpecAcceptance))
		}
		prev := 1.0
		for i, p := range c.SpecAcceptance {
			if p < 0 || p > 1 || math.IsNaN(p) {
				bad("spec-acceptance[%d] must be between 0 and 1, got %v", i, p)
			}
			if p > prev {
				bad("spec-acceptance must not increase with position (position %d: %v > %v)", i, p, prev)
			}
			prev = p
		}
	}
	switch c.Routing {
	case "balanced", "skewed":
	default:
		bad("routing must be balanced or skewed, got %q", c.Routing)
	}
	switch c.DynamoNames {
	case "current", "legacy":
	default:
		bad("dynamo-names must be current or legacy, got %q", c.DynamoNames)
	}
	if c.Speed <= 0 || c.Speed > 100000 || math.IsNaN(c.Speed) {
		bad("speed must be > 0 and <= 100000, got %v", c.Speed)
	}
	if time.Duration(c.ProfilerPoll) < 10*time.Millisecond || time.Duration(c.ProfilerPoll) > time.Second {
		bad("profiler-poll must be between 10ms and 1s, got %s", time.Duration(c.ProfilerPoll))
	}
	p := c.Perf
	for _, v := range []float64{p.StepBaseMs, p.DecodePerSeqMs, p.KVReadPerKTokenMs, p.PrefillPerTokenMs,
		p.SpecDraftPerTokenMs, p.SpecVerifyPerTokMs, p.APIOverheadMs, p.Jitter} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			bad("perf values must be finite and >= 0")
			break
		}
	}
	if p.StepBaseMs < 0.1 {
		bad("perf.step_base_ms must be at least 0.1")
	}
	if p.Jitter > 1 {
		bad("perf.jitter must be at most 1")
	}
	return errors.Join(errs...)
}

// servedVersion is what /version answers: the release's (main as a development build after the newest release
// read), or the flavor's own.
func (c *Config) servedVersion() string {
	rel, err := vllm.ResolveSimRelease(c.VLLMVersion)
	switch {
	case c.VLLMVersion == "" || err != nil:
		return c.Flavor.Version()
	case rel == vllm.Main:
		return vllm.NextPatch(vllm.NewestRelease()) + ".dev0+g" + vllm.MainCommit[:9]
	}
	return rel
}

// registers reports whether this configuration meets a condition under which vLLM registers a family.
func (c *Config) registers(cond vllm.Condition) bool {
	switch cond {
	case vllm.WithSpecDecode:
		return c.SpecTokens > 0
	case vllm.WithLoRA:
		return c.LoRAAdapters > 0
	case vllm.WithNIXL:
		return c.KVRole != ""
	case vllm.WithOffload:
		return c.KVOffloadGB > 0
	case vllm.WithKVCacheMetrics:
		return c.KVCacheMetrics
	case vllm.WithNaNCheck:
		return c.NaNLogitsRate > 0
	}
	return false
}

// specProfile returns the acceptance profile, filling a sensible default when none is given.
func (c *Config) specProfile() []float64 {
	if c.SpecTokens == 0 {
		return nil
	}
	if len(c.SpecAcceptance) == c.SpecTokens {
		return c.SpecAcceptance
	}
	out := make([]float64, c.SpecTokens)
	p := 0.8
	for i := range out {
		out[i] = p
		p *= 0.75
	}
	return out
}

// localEngines is the [lo, hi) range of engine indexes this endpoint exposes.
func (c *Config) localEngines() (lo, hi int) {
	lo = c.APIServerIndex * c.Engines / c.APIServers
	hi = (c.APIServerIndex + 1) * c.Engines / c.APIServers
	return lo, hi
}

// listenAddr resolves the flavor's conventional port when no address was given: Dynamo's
// worker system server listens on 8081, everything else on vLLM's 8000.
func (c *Config) listenAddr() string {
	switch {
	case c.Addr != "":
		return c.Addr
	case c.Flavor == FlavorDynamoWorker:
		return ":8081"
	default:
		return ":8000"
	}
}

// Duration is a time.Duration that reads "90s"/"10m" strings or plain seconds from JSON.
type Duration time.Duration

// UnmarshalJSON accepts a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration must be a string like \"10m\" or a number of seconds: %s", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

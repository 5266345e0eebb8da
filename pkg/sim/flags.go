package sim

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// ParseArgs builds a Config from command-line arguments: defaults, then the -scenario file if
// any, then every flag given explicitly. getenv supplies SERVICE_PROF_CONFIG_PATH; usage and
// errors go to out. It returns flag.ErrHelp for -h.
func ParseArgs(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	// The first pass only finds -scenario; the second binds flags over the scenario's values so
	// that flags left out keep what the file says.
	var scenario string
	probe := Default()
	fs := newFlagSet(&probe, &scenario, io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(out)
			fs.Usage()
		}
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}

	cfg := Default()
	cfg.ProfilerConfig = getenv("SERVICE_PROF_CONFIG_PATH")
	cfg.SymbolsFile = getenv("METRIC_SYMBOLS_PATH")
	cfg.TorchProfilerDir = getenv("VLLM_TORCH_PROFILER_DIR")
	if scenario != "" {
		var err error
		if cfg, err = LoadScenario(scenario, cfg); err != nil {
			return Config{}, err
		}
	}
	fs = newFlagSet(&cfg, &scenario, out)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	cfg.Addr = cfg.listenAddr()
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func newFlagSet(c *Config, scenario *string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("vllm-sim", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: vllm-sim [flags]\n\nServes a simulated vLLM /metrics and /health. Flags override -scenario.\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(scenario, "scenario", *scenario, "JSON scenario file (flags given explicitly override it)")
	fs.Func("flavor", fmt.Sprintf("metrics flavor: %s (default %q)", flavorList(), c.Flavor), func(s string) error {
		f, err := ParseFlavor(s)
		if err != nil {
			return err
		}
		c.Flavor = f
		return nil
	})
	fs.StringVar(&c.VLLMVersion, "vllm-version", c.VLLMVersion, fmt.Sprintf("emit exactly the vLLM families of this release: %s (0.6 with -flavor vllm-v0); empty keeps the flavor's own", releaseList()))
	fs.StringVar(&c.Model, "model", c.Model, "served model name")
	fs.IntVar(&c.Engines, "engines", c.Engines, "data-parallel engines (engine=\"0\"..N-1; dp for Ascend)")
	fs.IntVar(&c.APIServers, "api-servers", c.APIServers, "endpoints the engines are split across (external DP load balancing)")
	fs.IntVar(&c.APIServerIndex, "api-server-index", c.APIServerIndex, "which endpoint this is; it exposes only its share of the engines")
	fs.IntVar(&c.APIServerProcesses, "api-server-processes", c.APIServerProcesses, "vLLM --api-server-count behind this endpoint (>1: multiprocess exposition)")
	fs.BoolVar(&c.PIDLabel, "pid-label", c.PIDLabel, "reproduce the pid label on kv_cache_usage_perc (vllm-project/vllm#28792)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed; the same seed and config give the same run")
	fs.Float64Var(&c.QPS, "qps", c.QPS, "fleet-wide mean request arrival rate (Poisson)")
	fs.Float64Var(&c.QPSWaveAmplitude, "qps-wave-amplitude", c.QPSWaveAmplitude, "0..1: sinusoidal load swing around -qps")
	fs.Func("qps-wave-period", fmt.Sprintf("period of the load swing (default %s)", time.Duration(c.QPSWavePeriod)), durationSetter(&c.QPSWavePeriod))
	fs.Float64Var(&c.PromptTokensMean, "prompt-tokens-mean", c.PromptTokensMean, "mean prompt length in tokens (log-normal)")
	fs.Float64Var(&c.PromptTokensSigma, "prompt-tokens-sigma", c.PromptTokensSigma, "log-normal sigma of prompt length")
	fs.Float64Var(&c.OutputTokensMean, "output-tokens-mean", c.OutputTokensMean, "mean natural output length in tokens (log-normal)")
	fs.Float64Var(&c.OutputTokensSigma, "output-tokens-sigma", c.OutputTokensSigma, "log-normal sigma of output length")
	fs.IntVar(&c.MaxTokens, "max-tokens", c.MaxTokens, "max_tokens of every request; 0 draws a typical client mix")
	fs.Float64Var(&c.AbortRate, "abort-rate", c.AbortRate, "share of requests aborted by the client mid-stream")
	fs.Float64Var(&c.ErrorRate, "error-rate", c.ErrorRate, "share of requests ending in an error (finished_reason=error, 5xx)")
	fs.Func("client-timeout", fmt.Sprintf("clients abort after waiting this long for a first token; 0 = never (default %s)", time.Duration(c.ClientTimeout)), durationSetter(&c.ClientTimeout))
	fs.Float64Var(&c.StreamRate, "stream-rate", c.StreamRate, "share of streaming requests (Dynamo request_type)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", c.MaxModelLen, "--max-model-len; token histogram buckets go up to it")
	fs.IntVar(&c.BlockSize, "block-size", c.BlockSize, "KV cache block size in tokens")
	fs.IntVar(&c.NumGPUBlocks, "num-gpu-blocks", c.NumGPUBlocks, "KV cache blocks per engine")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", c.MaxNumSeqs, "maximum running requests per engine")
	fs.IntVar(&c.MaxNumBatchedTokens, "max-num-batched-tokens", c.MaxNumBatchedTokens, "token budget per engine step (chunked prefill)")
	fs.Float64Var(&c.PrefixHitRate, "prefix-hit-rate", c.PrefixHitRate, "target share of prompt tokens served from the prefix cache")
	fs.Float64Var(&c.ExternalPrefixHitRate, "external-prefix-hit-rate", c.ExternalPrefixHitRate, "share of locally missed prompt tokens a KV connector finds; 0 = no connector")
	fs.StringVar(&c.KVRole, "kv-role", c.KVRole, "disaggregated prefill/decode: empty (unified), prefill (computes prompts, NIXL sends their KV) or decode (prompt KV arrives over NIXL); vllm-v1 only")
	fs.Float64Var(&c.KVTransferMs, "kv-transfer-ms", c.KVTransferMs, "NIXL transfer time of a mean-length prompt's KV, in ms (decode and prefill roles)")
	fs.Float64Var(&c.KVTransferFailRate, "kv-transfer-fail-rate", c.KVTransferFailRate, "share of NIXL transfers that fail; their prompts are computed locally (decode role)")
	fs.Float64Var(&c.KVOffloadGB, "kv-offload-gb", c.KVOffloadGB, "CPU memory of the KV offloading connector in GB; 0 = no offloading (vllm-v1 only)")
	fs.Float64Var(&c.KVOffloadFailRate, "kv-offload-fail-rate", c.KVOffloadFailRate, "share of KV offload stores whose allocation fails")
	fs.IntVar(&c.SleepLevel, "sleep-level", c.SleepLevel, "vLLM sleep mode for the whole run: 0 awake, 1 weights offloaded, 2 weights discarded; asleep, the instance serves nothing")
	fs.Func("sleep-cycle", "with -sleep-level, sleep and wake in turn, each phase this long (default 0: asleep the whole run)", durationSetter(&c.SleepCycle))
	fs.BoolVar(&c.FaultTolerance, "fault-tolerance", c.FaultTolerance, "vLLM's --enable-fault-tolerance: expose engine_healthy per engine")
	fs.IntVar(&c.UnhealthyEngines, "unhealthy-engines", c.UnhealthyEngines, "with -fault-tolerance: the last N engines report unhealthy and get no requests")
	fs.BoolVar(&c.Router, "router", c.Router, "serve what vLLM production-stack's router in front of these engines exports: its look-alike gauges under vLLM's names, labelled server, instead of the engines' /metrics")
	fs.BoolVar(&c.Ray, "ray", c.Ray, "render vllm-v1 as Ray Serve re-exports it: ray_vllm_ names, a replica (ReplicaId) per engine, engine=\"0\" on every replica")
	fs.Float64Var(&c.NaNLogitsRate, "nan-logits-rate", c.NaNLogitsRate, "share of requests with NaNs in their logits, counted in vllm:corrupted_requests_total (VLLM_COMPUTE_NANS_IN_LOGITS=1)")
	fs.BoolVar(&c.MFU, "mfu", c.MFU, "vLLM's --enable-mfu-metrics: the per-GPU FLOP and byte estimates count (newest V1 flavors expose them at 0 otherwise)")
	fs.IntVar(&c.LoRAAdapters, "lora-adapters", c.LoRAAdapters, "LoRA adapters served to half the requests (adapter-0, …); vllm:lora_requests_info lists them")
	fs.IntVar(&c.MaxLoRA, "max-lora", c.MaxLoRA, "adapters that may run at once (vLLM's --max-loras); the others' requests wait")
	fs.BoolVar(&c.KVCacheMetrics, "kv-cache-metrics", c.KVCacheMetrics, "vLLM's --kv-cache-metrics: KV block residency histograms (vllm-v1 only)")
	fs.BoolVar(&c.LMCacheMP, "lmcache-mp", c.LMCacheMP, "the KV connector is LMCache in multi-process mode: lookups and hits appear as lmcache_mp_* metrics (needs -external-prefix-hit-rate)")
	fs.BoolVar(&c.LMCache, "lmcache", c.LMCache, "the KV connector is LMCache: its lookups and hits also appear as lmcache:* metrics (needs -external-prefix-hit-rate)")
	fs.IntVar(&c.MMItems, "mm-items", c.MMItems, "multi-modal items (images) per request; 0 = text only")
	fs.Float64Var(&c.MMHitRate, "mm-hit-rate", c.MMHitRate, "share of multi-modal items found in the multi-modal cache")
	fs.IntVar(&c.SpecTokens, "spec-tokens", c.SpecTokens, "num_speculative_tokens; 0 disables speculative decoding")
	fs.Func("spec-acceptance", "comma-separated per-position acceptance rates, non-increasing (default 0.8,0.6,0.45,...)", func(s string) error {
		v, err := parseFloats(s)
		if err != nil {
			return err
		}
		c.SpecAcceptance = v
		return nil
	})
	fs.StringVar(&c.Routing, "routing", c.Routing, "DP routing policy: balanced or skewed")
	fs.Float64Var(&c.Skew, "skew", c.Skew, "share of requests engine 0 takes under -routing skewed")
	fs.StringVar(&c.DynamoNames, "dynamo-names", c.DynamoNames, "Dynamo release names: current, or legacy (the worker's kvstats_*, a frontend without router and per-worker metrics)")
	fs.Float64Var(&c.MigrationRate, "migration-rate", c.MigrationRate, "share of requests Dynamo's frontend migrates to another worker mid-stream (dynamo-frontend)")
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (default :8000; :8081 for dynamo-worker)")
	fs.StringVar(&c.FleetSchedule, "fleet-schedule", c.FleetSchedule, "serve a fleet whose size follows this schedule in real time, e.g. 4,16@2m,2@5m: instances on consecutive ports from -addr's, the live ones listed at /sd (http_sd)")
	fs.StringVar(&c.SDFile, "sd-file", c.SDFile, "with -fleet-schedule: keep this file_sd JSON file listing the live instances")
	fs.Float64Var(&c.Speed, "speed", c.Speed, "simulated seconds per real second (60 = a minute per second)")
	fs.StringVar(&c.ProfilerConfig, "profiler-config", c.ProfilerConfig, "ms_service_profiler_config.json path (default $SERVICE_PROF_CONFIG_PATH)")
	fs.StringVar(&c.SymbolsFile, "symbols-file", c.SymbolsFile, "service_metrics_symbols.yaml whose timers the vllm-ascend flavor records, read at start (default $METRIC_SYMBOLS_PATH)")
	fs.StringVar(&c.TorchProfilerDir, "torch-profiler-dir", c.TorchProfilerDir, "vLLM's VLLM_TORCH_PROFILER_DIR: enables POST /start_profile and /stop_profile, which writes a trace there (default $VLLM_TORCH_PROFILER_DIR)")
	fs.Func("profiler-poll", fmt.Sprintf("how often the profiler config is re-read (default %s)", time.Duration(c.ProfilerPoll)), durationSetter(&c.ProfilerPoll))
	return fs
}

func flavorList() string {
	names := make([]string, len(Flavors))
	for i, f := range Flavors {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func releaseList() string {
	names := make([]string, len(vllm.SimReleases))
	for i, r := range vllm.SimReleases {
		names[i] = r.Short
	}
	return strings.Join(names, ", ")
}

func durationSetter(d *Duration) func(string) error {
	return func(s string) error {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
}

func parseFloats(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]float64, 0, len(parts))
	for _, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("not a number: %q", p)
		}
		out = append(out, v)
	}
	return out, nil
}

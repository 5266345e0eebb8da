package vllm

import (
	"slices"
	"strings"
)

// Projects besides vLLM whose names the product reads.
const (
	ProjectDynamo  = "ai-dynamo/dynamo"
	ProjectAscend  = "Ascend/msserviceprofiler"
	ProjectLMCache = "LMCache/LMCache"
)

// Where the names no vLLM release has were found.
const (
	afterMain = "vllm-project/vllm main after 0.20.1, not yet at MainCommit: "
)

// Files of the other projects.
const (
	fileDynamoNames  = "lib/runtime/src/metrics/prometheus_names.rs"
	fileDynamoRouter = "lib/llm/src/kv_router/metrics.rs"
	fileDynamoLegacy = "docs/observability/metrics_examples/vllm.log (a worker capture of an older release)"
	fileAscend       = "ms_service_profiler/patcher/vllm/metrics/definitions.py"
	fileLMCache      = "lmcache/observability.py"
	fileLMCacheMP    = "lmcache/v1/multiprocess (the LMCache MP server's metrics)"
)

// Commits read for projects whose names were not resolved to releases.
const (
	readDynamo       = "ai-dynamo/dynamo@04070c75"
	readDynamoRouter = "ai-dynamo/dynamo@ac7b751"
	readAscend       = "Cztk5380/msserviceprofiler@9582f434 (a GitHub mirror of gitcode Ascend/msserviceprofiler)"
	readLMCache      = "LMCache/LMCache@0353be82"
)

// The API server's families that other libraries declare on vLLM's /metrics (APIServerFamilies).
const (
	fileInstrumentator = "prometheus-fastapi-instrumentator's metrics.default() (v7.0.0: http_requests_total{method,status,handler}, " +
		"http_request_duration_seconds{method,handler} with buckets 0.1, 0.5, 1), mounted by vLLM's API server " +
		"(vllm/entrypoints/serve/instrumentator/metrics.py; vllm/entrypoints/openai/api_server.py before 0.13)"
	fileProcess = "prometheus_client's process collector on vLLM's /metrics (single-process API server only; " +
		"the multiprocess collector of --api-server-count > 1 has none)"
)

// apiServer is a row of a family another library declares on every vLLM release's API server from first on.
func apiServer(name string, typ Kind, first, file string) Family {
	return Family{Name: name, Type: typ, Project: ProjectVLLM, File: file, First: first}
}

func other(project, file, read, name string, typ Kind) Family {
	return Family{Name: name, Type: typ, Project: project, File: file, Read: read}
}

func unreleased(file, where, name string, typ Kind) Family {
	return Family{Name: name, Type: typ, Project: ProjectVLLM, File: file, Unreleased: where}
}

// OtherFamilies are the names the product reads that no vLLM release declares: other projects' (Dynamo, the Ascend
// profiler, LMCache), whose releases were not resolved, only the commit read; and vLLM names found in no release,
// each with where it was found instead. Counters are listed as exposed, with _total.
var OtherFamilies = []Family{
	unreleased("vllm/entrypoints/serve/instrumentator/metrics.py", afterMain+"_EngineHealthCollector, with --enable-fault-tolerance", "vllm:engine_healthy", Gauge),
	unreleased("vllm/entrypoints/serve/dev/sleep/metrics.py", afterMain+"SleepModeOperationMetrics", "vllm:sleep_mode_operations_in_flight", Gauge),
	unreleased("vllm/entrypoints/serve/dev/sleep/metrics.py", afterMain+"SleepModeOperationMetrics", "vllm:sleep_mode_operation_duration_seconds", Histogram),
	unreleased("vllm/entrypoints/serve/dev/rlhf/metrics.py", afterMain+"the RL weight-sync endpoints' sleep-mode metrics", "vllm:rl_sleep_mode_operations_in_flight", Gauge),
	unreleased("vllm/entrypoints/serve/dev/rlhf/metrics.py", afterMain+"the RL weight-sync endpoints' sleep-mode metrics", "vllm:rl_sleep_mode_operation_duration_seconds", Histogram),
	unreleased(fileLoggers, afterMain+"vllm-project/vllm#56318", "vllm:prompt_tokens_cached_by_source_total", Counter),

	apiServer("http_requests_total", Counter, "0.8.3", fileInstrumentator),
	apiServer("http_request_duration_seconds", Histogram, "0.8.3", fileInstrumentator),
	apiServer("process_cpu_seconds_total", Counter, "0.6.0", fileProcess),
	apiServer("process_resident_memory_bytes", Gauge, "0.6.0", fileProcess),
	apiServer("process_open_fds", Gauge, "0.6.0", fileProcess),
	apiServer("process_start_time_seconds", Gauge, "0.6.0", fileProcess),

	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_gpu_cache_usage_percent", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_total_blocks", Gauge),
	other(ProjectDynamo, fileDynamoLegacy, readDynamo, "dynamo_component_kvstats_gpu_cache_usage_percent", Gauge),
	other(ProjectDynamo, fileDynamoLegacy, readDynamo, "dynamo_component_kvstats_total_blocks", Gauge),
	other(ProjectDynamo, fileDynamoLegacy, readDynamo, "dynamo_component_kvstats_active_blocks", Gauge),
	other(ProjectDynamo, fileDynamoRouter, readDynamoRouter, "dynamo_component_router_kv_hit_rate", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_inflight_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_requests_total", Counter),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_errors_total", Counter),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_component_request_duration_seconds", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_worker_last_time_to_first_token_seconds", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_worker_last_inter_token_latency_seconds", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_inflight_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_queued_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_disconnected_clients", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_router_queue_pending_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_worker_active_decode_blocks", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_worker_active_prefill_tokens", Gauge),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_model_migration_total", Counter),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_output_tokens_total", Counter),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_requests_total", Counter),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_time_to_first_token_seconds", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_inter_token_latency_seconds", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_request_duration_seconds", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_input_sequence_tokens", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_output_sequence_tokens", Histogram),
	other(ProjectDynamo, fileDynamoNames, readDynamo, "dynamo_frontend_cached_tokens", Histogram),

	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_total_kvcache_blocks", Gauge),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_free_kvcache_blocks", Gauge),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_allocated_kvcache_blocks", Gauge),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_num_spec_tokens", Gauge),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_input_total", Counter),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_output_total", Counter),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_fine_grained_ttft", Histogram),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_fine_grained_tpot", Histogram),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_second_token_latency", Histogram),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_batch_size", Histogram),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_waiting_batch_size", Histogram),
	other(ProjectAscend, fileAscend, readAscend, "vllm_profiling_total_tokens", Histogram),

	other(ProjectLMCache, fileLMCache, readLMCache, "lmcache:num_requested_tokens_total", Counter),
	other(ProjectLMCache, fileLMCache, readLMCache, "lmcache:num_hit_tokens_total", Counter),
	other(ProjectLMCache, fileLMCache, readLMCache, "lmcache:num_retrieve_requests_total", Counter),
	other(ProjectLMCache, fileLMCache, readLMCache, "lmcache:num_store_requests_total", Counter),
	other(ProjectLMCache, fileLMCache, readLMCache, "lmcache:time_to_retrieve", Histogram),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_lookup_requested_tokens_total", Counter),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_lookup_hit_tokens_total", Counter),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_lookup_hit_l1_tokens_total", Counter),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_num_submitted_retrieves_total", Counter),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_num_deferred_retrieves_total", Counter),
	other(ProjectLMCache, fileLMCacheMP, readLMCache, "lmcache_mp_l1_memory_usage_bytes", Gauge),
}

// RayExport is where Ray Serve's names for vLLM's families come from: vLLM's RayPrometheusStatLogger hands each
// family to ray.util.metrics, whose agent prefixes ray_; from 0.11.0 the wrapper first turns vllm: into vllm_.
var RayExport = Family{Name: "ray_vllm:* / ray_vllm_*", Project: ProjectVLLM, File: "vllm/v1/metrics/ray_wrappers.py",
	First: "0.9.0"}

// RaySanitizedSince is the first release whose Ray wrapper exports ray_vllm_ (the colon sanitized) instead of
// ray_vllm:.
const RaySanitizedSince = "0.11.0"

// Origin is where one exposed name comes from: its rows merged over engines and files.
type Origin struct {
	// Name is the exposed name looked up; Family the family it belongs to (for Ray, vLLM's).
	Name, Family  string
	Project, File string
	// First and Last are the release range (vLLM's, or Ray's export of it); empty when unresolved.
	First, Last        string
	Deprecated, Hidden string
	// Unreleased says where a name no release has was found; Read which commit was read when releases are
	// unresolved; Ray marks a Ray Serve re-export of a vLLM family.
	Unreleased, Read string
	Ray              bool
}

// Provenance returns the origin of an exposed metric name as the catalog spells it (counters with _total,
// histograms by base name).
func Provenance(name string) (Origin, bool) {
	for _, p := range RayPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			o, ok := Provenance(VLLMPrefix + rest)
			if !ok {
				return Origin{}, false
			}
			o.Name, o.Ray, o.File = name, true, RayExport.File+" (of "+o.File+")"
			if CompareReleases(o.First, RayExport.First) < 0 {
				o.First = RayExport.First
			}
			return o, true
		}
	}
	var rows []Family
	for _, f := range VLLMFamilies {
		if f.Name == name || f.Type == Counter && f.Name+"_total" == name {
			rows = append(rows, f)
		}
	}
	if len(rows) > 0 {
		o := Origin{Name: name, Family: rows[0].Name, Project: ProjectVLLM, First: rows[0].First, Last: rows[0].Last}
		newest := rows[0]
		for _, f := range rows[1:] {
			if CompareReleases(f.First, o.First) < 0 {
				o.First = f.First
			}
			if o.Last != "" && (f.Last == "" || CompareReleases(f.Last, o.Last) > 0) {
				o.Last = f.Last
			}
			if f.Last == "" || newest.Last != "" && CompareReleases(f.Last, newest.Last) > 0 {
				newest = f
			}
		}
		o.File, o.Deprecated, o.Hidden = newest.File, newest.Deprecated, newest.Hidden
		if o.First == Main {
			o.Unreleased = "vLLM main at " + MainCommit[:9]
		}
		return o, true
	}
	i := slices.IndexFunc(OtherFamilies, func(f Family) bool { return f.Name == name })
	if i < 0 {
		return Origin{}, false
	}
	f := OtherFamilies[i]
	return Origin{Name: name, Family: f.Name, Project: f.Project, File: f.File, First: f.First, Last: f.Last,
		Unreleased: f.Unreleased, Read: f.Read}, true
}

// Span is an origin's release range as the README prints it: "0.9.2–current", "0.6.0–0.11.2 (deprecated 0.10.0,
// hidden from 0.11.0)", the unreleased marker, or the commit read.
func (o Origin) Span() string {
	switch {
	case o.Unreleased != "":
		return "unreleased: " + o.Unreleased
	case o.First == "":
		return "releases not resolved; read at " + o.Read
	}
	last := o.Last
	if last == "" {
		last = "current"
	}
	s := o.First + "–" + last
	var notes []string
	if o.Deprecated != "" {
		notes = append(notes, "deprecated "+o.Deprecated)
	}
	if o.Hidden != "" {
		notes = append(notes, "hidden from "+o.Hidden)
	}
	if o.Ray && CompareReleases(RaySanitizedSince, o.First) > 0 {
		notes = append(notes, "ray_vllm: before "+RaySanitizedSince+", ray_vllm_ from it")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

// ReleaseNote sums up the releases of the names a measure reads, for the catalog table: the vLLM releases that have
// one of its vLLM names, the names no release has, and the other projects it reads.
func ReleaseNote(names []string) string {
	first, last, current := "", "", false
	var unrel, others []string
	for _, n := range names {
		o, ok := Provenance(n)
		switch {
		case !ok || o.Ray:
			continue
		case o.Unreleased != "":
			if !slices.Contains(unrel, "`"+n+"`") {
				unrel = append(unrel, "`"+n+"`")
			}
			continue
		case o.Project != ProjectVLLM:
			if !slices.Contains(others, o.Project) {
				others = append(others, o.Project)
			}
			continue
		}
		if first == "" || CompareReleases(o.First, first) < 0 {
			first = o.First
		}
		if o.Last == "" {
			current = true
		} else if last == "" || CompareReleases(o.Last, last) > 0 {
			last = o.Last
		}
	}
	var parts []string
	if first != "" {
		if current {
			last = "current"
		}
		parts = append(parts, "vLLM "+first+"–"+last)
	}
	if len(others) > 0 {
		parts = append(parts, strings.Join(others, ", "))
	}
	if len(unrel) > 0 {
		parts = append(parts, "unreleased: "+strings.Join(unrel, ", "))
	}
	return strings.Join(parts, "; ")
}

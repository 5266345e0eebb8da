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
	afterMain = "vllm-project/vllm main after 0.20.1, not yet at MainCommit and in no tag to 0.25.1: "
)

// Files of the other projects.
const (
	fileDynamoNames   = "lib/runtime/src/metrics/prometheus_names.rs"
	fileDynamoFront   = fileDynamoNames + " (lib/llm/src/http/service/metrics.rs before 0.5.0)"
	fileDynamoWork    = fileDynamoNames + " (registered by lib/runtime/src/pipeline/network/ingress/push_handler.rs)"
	fileDynamoKVStats = fileDynamoNames + " (kvstats, published by lib/llm/src/kv_router/publisher.rs)"
	fileDynamoWorker  = fileDynamoNames + " (kvstats, published by components/src/dynamo/common/utils/prometheus.py)"
	fileDynamoRouter  = "lib/llm/src/kv_router/metrics.rs"
	fileAscend        = "ms_service_profiler/patcher/vllm/metrics/definitions.py"
	fileLMCache       = "lmcache/observability.py"
	fileLMCacheMP     = "lmcache/v1/multiprocess (the LMCache MP server's metrics)"
)

// OtherReleases are the tags read of each other project, oldest first, as a row's First and Last spell them, and
// where they were read: the provenance test holds every row of OtherFamilies to these lists.
var OtherReleases = map[string]ProjectReleases{
	ProjectDynamo: {Where: "todd-chamberlain/dynamo, a fork carrying ai-dynamo/dynamo's tags v0.1.0–v1.0.1 (no later " +
		"final tag found in any fork; main read through wxsms/dynamo at 2a6da14c, 2026-08-21)",
		Tags: []string{"0.1.0", "0.1.1", "0.2.0", "0.2.1", "0.3.0", "0.3.1", "0.3.2", "0.4.0", "0.4.0.post0", "0.4.1",
			"0.5.0", "0.5.1", "0.6.0", "0.6.1", "0.7.0", "0.7.0.post1", "0.7.1", "0.8.0", "0.8.1", "0.9.0", "0.9.1",
			"1.0.0", "1.0.1"}},
	// The Ascend profiler's only tags are MindStudio builds, tag_MindStudio_<release>.B<build> (spelled "MindStudio
	// <release>.B<build>" here); none is a bare release.
	ProjectAscend: {Where: "Cztk5380/msserviceprofiler, a GitHub mirror of gitcode Ascend/msserviceprofiler, tags " +
		"tag_MindStudio_26.0.0-alpha.1 to tag_MindStudio_26.1.0.B080_002 (2026-06-25, its newest)",
		Tags: []string{"MindStudio 26.0.0.B030_007", "MindStudio 26.1.0.B020_001", "MindStudio 26.1.0.B030_001",
			"MindStudio 26.1.0.B080_002"}},
	ProjectLMCache: {Where: "moreh-dev/LMCache, a fork carrying LMCache/LMCache's tags v0.1.0-alpha–v0.3.4 (no later " +
		"tag found in any fork; main read at LMCache/LMCache@0353be82)",
		Tags: []string{"0.2.0", "0.2.1", "0.3.0", "0.3.1", "0.3.1.post1", "0.3.2", "0.3.3", "0.3.4"}},
}

// ProjectReleases is one other project's tags read (the subset rows name, oldest first) and where they were read.
type ProjectReleases struct {
	Where string
	Tags  []string
}

// Markers of names found in no final tag of their project.
const (
	dynamoMainOnly  = "ai-dynamo/dynamo main from #6786 (2026-03-02) and the pre-release tag v1.1.0-dev.1, in no final tag to v1.0.1"
	lmcacheMainOnly = "LMCache/LMCache at 0353be82, in no tag to v0.3.4 (later tags not readable here)"
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

// other is a row of another project's family from release first to last ("" while its newest tag read has it).
func other(project, file, first, last, name string, typ Kind) Family {
	return Family{Name: name, Type: typ, Project: project, File: file, First: first, Last: last}
}

// otherUnreleased is a row of another project's family that no final tag of it has, and where it was found instead.
func otherUnreleased(project, file, where, name string, typ Kind) Family {
	return Family{Name: name, Type: typ, Project: project, File: file, Unreleased: where}
}

func unreleased(file, where, name string, typ Kind) Family {
	return Family{Name: name, Type: typ, Project: ProjectVLLM, File: file, Unreleased: where}
}

// ascend is a row of the Ascend profiler's built-in families (ms_service_profiler/patcher/vllm), all of which its
// first tag with metrics declares and its newest still does.
func ascend(name string, typ Kind) Family {
	return other(ProjectAscend, fileAscend, "MindStudio 26.0.0.B030_007", "", name, typ)
}

// lmcache is a row of LMCache's own families (its PrometheusLogger), in every tag from 0.2.0.
func lmcache(name string, typ Kind) Family {
	return other(ProjectLMCache, fileLMCache, "0.2.0", "", name, typ)
}

// lmcacheMP is a row of the LMCache MP server's families, in no tag read.
func lmcacheMP(name string, typ Kind) Family {
	return otherUnreleased(ProjectLMCache, fileLMCacheMP, lmcacheMainOnly, name, typ)
}

// OtherFamilies are the names the product reads that no vLLM release declares: other projects' (Dynamo, the Ascend
// profiler, LMCache), each with the first and last of that project's tags (OtherReleases) that declare it; and names
// found in no final tag of their project, each with where it was found instead. Counters are listed as exposed, with
// _total.
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

	other(ProjectDynamo, fileDynamoWorker, "1.0.0", "", "dynamo_component_gpu_cache_usage_percent", Gauge),
	other(ProjectDynamo, fileDynamoWorker, "1.0.0", "", "dynamo_component_total_blocks", Gauge),
	other(ProjectDynamo, fileDynamoKVStats, "0.5.0", "0.8.1", "dynamo_component_kvstats_gpu_cache_usage_percent", Gauge),
	other(ProjectDynamo, fileDynamoKVStats, "0.5.0", "0.8.1", "dynamo_component_kvstats_total_blocks", Gauge),
	other(ProjectDynamo, fileDynamoKVStats, "0.5.0", "0.8.1", "dynamo_component_kvstats_active_blocks", Gauge),
	other(ProjectDynamo, fileDynamoRouter, "1.0.0", "", "dynamo_component_router_kv_hit_rate", Histogram),
	other(ProjectDynamo, fileDynamoWork, "0.4.1", "", "dynamo_component_inflight_requests", Gauge),
	other(ProjectDynamo, fileDynamoWork, "0.4.1", "", "dynamo_component_requests_total", Counter),
	other(ProjectDynamo, fileDynamoWork, "0.4.1", "", "dynamo_component_errors_total", Counter),
	other(ProjectDynamo, fileDynamoWork, "0.4.1", "", "dynamo_component_request_duration_seconds", Histogram),
	other(ProjectDynamo, fileDynamoNames, "1.0.0", "", "dynamo_frontend_worker_last_time_to_first_token_seconds", Gauge),
	other(ProjectDynamo, fileDynamoNames, "1.0.0", "", "dynamo_frontend_worker_last_inter_token_latency_seconds", Gauge),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_inflight_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, "0.6.0", "", "dynamo_frontend_queued_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, "0.6.0", "", "dynamo_frontend_disconnected_clients", Gauge),
	otherUnreleased(ProjectDynamo, fileDynamoNames, dynamoMainOnly, "dynamo_frontend_router_queue_pending_requests", Gauge),
	other(ProjectDynamo, fileDynamoNames, "1.0.0", "", "dynamo_frontend_worker_active_decode_blocks", Gauge),
	other(ProjectDynamo, fileDynamoNames, "1.0.0", "", "dynamo_frontend_worker_active_prefill_tokens", Gauge),
	other(ProjectDynamo, fileDynamoNames, "0.8.0", "", "dynamo_frontend_model_migration_total", Counter),
	other(ProjectDynamo, fileDynamoNames, "0.7.0", "", "dynamo_frontend_output_tokens_total", Counter),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_requests_total", Counter),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_time_to_first_token_seconds", Histogram),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_inter_token_latency_seconds", Histogram),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_request_duration_seconds", Histogram),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_input_sequence_tokens", Histogram),
	other(ProjectDynamo, fileDynamoFront, "0.4.1", "", "dynamo_frontend_output_sequence_tokens", Histogram),
	other(ProjectDynamo, fileDynamoNames, "0.8.0", "", "dynamo_frontend_cached_tokens", Histogram),

	ascend("vllm_profiling_total_kvcache_blocks", Gauge),
	ascend("vllm_profiling_free_kvcache_blocks", Gauge),
	ascend("vllm_profiling_allocated_kvcache_blocks", Gauge),
	ascend("vllm_profiling_num_spec_tokens", Gauge),
	ascend("vllm_profiling_input_total", Counter),
	ascend("vllm_profiling_output_total", Counter),
	ascend("vllm_profiling_fine_grained_ttft", Histogram),
	ascend("vllm_profiling_fine_grained_tpot", Histogram),
	ascend("vllm_profiling_second_token_latency", Histogram),
	ascend("vllm_profiling_batch_size", Histogram),
	ascend("vllm_profiling_waiting_batch_size", Histogram),
	ascend("vllm_profiling_total_tokens", Histogram),

	lmcache("lmcache:num_requested_tokens_total", Counter),
	lmcache("lmcache:num_hit_tokens_total", Counter),
	lmcache("lmcache:num_retrieve_requests_total", Counter),
	lmcache("lmcache:num_store_requests_total", Counter),
	lmcache("lmcache:time_to_retrieve", Histogram),
	lmcacheMP("lmcache_mp_lookup_requested_tokens_total", Counter),
	lmcacheMP("lmcache_mp_lookup_hit_tokens_total", Counter),
	lmcacheMP("lmcache_mp_lookup_hit_l1_tokens_total", Counter),
	lmcacheMP("lmcache_mp_num_submitted_retrieves_total", Counter),
	lmcacheMP("lmcache_mp_num_deferred_retrieves_total", Counter),
	lmcacheMP("lmcache_mp_l1_memory_usage_bytes", Gauge),
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
	// First and Last are the release range in Project's tags (vLLM's, or Ray's export of it); Last is empty while
	// the newest tag read has the name.
	First, Last        string
	Deprecated, Hidden string
	// Unreleased says where a name no release has was found; Ray marks a Ray Serve re-export of a vLLM family.
	Unreleased string
	Ray        bool
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
			o.Unreleased = "vLLM main at " + MainCommit[:9] + ", in no tag to " + NewestRelease()
		}
		return o, true
	}
	i := slices.IndexFunc(OtherFamilies, func(f Family) bool { return f.Name == name })
	if i < 0 {
		return Origin{}, false
	}
	f := OtherFamilies[i]
	return Origin{Name: name, Family: f.Name, Project: f.Project, File: f.File, First: f.First, Last: f.Last,
		Unreleased: f.Unreleased}, true
}

// Span is an origin's release range as the README prints it: "0.9.2–current", "0.6.0–0.11.2 (deprecated 0.10.0,
// hidden from 0.11.0)", or the unreleased marker; "" when the row has neither (the provenance test forbids it).
func (o Origin) Span() string {
	switch {
	case o.Unreleased != "":
		return "unreleased: " + o.Unreleased
	case o.First == "":
		return ""
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
// one of its vLLM names, each other project's releases that have one of its names, and the names no release has.
func ReleaseNote(names []string) string {
	spans := map[string]*span{}
	var projects, unrel []string
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
		}
		sp := spans[o.Project]
		if sp == nil {
			sp = &span{project: o.Project}
			spans[o.Project] = sp
			projects = append(projects, o.Project)
		}
		sp.add(o.First, o.Last)
	}
	// vLLM first, then the other projects in the order the names name them.
	slices.SortStableFunc(projects, func(a, b string) int {
		return boolOrder(b == ProjectVLLM) - boolOrder(a == ProjectVLLM)
	})
	var parts []string
	for _, p := range projects {
		parts = append(parts, spans[p].String())
	}
	if len(unrel) > 0 {
		parts = append(parts, "unreleased: "+strings.Join(unrel, ", "))
	}
	return strings.Join(parts, "; ")
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// span is the union of one project's release ranges.
type span struct {
	project, first, last string
	current              bool
}

func (s *span) add(first, last string) {
	if s.first == "" || CompareProjectReleases(s.project, first, s.first) < 0 {
		s.first = first
	}
	if last == "" {
		s.current = true
	} else if s.last == "" || CompareProjectReleases(s.project, last, s.last) > 0 {
		s.last = last
	}
}

func (s *span) String() string {
	last := s.last
	if s.current {
		last = "current"
	}
	name := "vLLM"
	if s.project != ProjectVLLM {
		name = s.project
	}
	return name + " " + s.first + "–" + last
}

// CompareProjectReleases orders two releases of a project: vLLM's by CompareReleases, another project's by their
// place in OtherReleases (a release not listed sorts first).
func CompareProjectReleases(project, a, b string) int {
	if project == ProjectVLLM {
		return CompareReleases(a, b)
	}
	tags := OtherReleases[project].Tags
	return slices.Index(tags, a) - slices.Index(tags, b)
}

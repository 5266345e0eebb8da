package sim

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

type want struct {
	typ    dto.MetricType
	labels []string // sorted label names every series of the family has
}

var (
	gauge   = dto.MetricType_GAUGE
	counter = dto.MetricType_COUNTER
	hist    = dto.MetricType_HISTOGRAM
	engML   = []string{"engine", "model_name"}
	// workerLabels are the labels of Dynamo's per-worker frontend gauges.
	workerLabels = []string{"dp_rank", "worker_id", "worker_type"}
)

// v1Core is what every current V1 flavor must carry, per vllm/v1/metrics/loggers.py.
func v1Core() map[string]want {
	m := map[string]want{
		"vllm:num_requests_running":                          {gauge, engML},
		"vllm:num_requests_waiting":                          {gauge, engML},
		"vllm:kv_cache_usage_perc":                           {gauge, engML},
		"vllm:prefix_cache_queries_total":                    {counter, engML},
		"vllm:prefix_cache_hits_total":                       {counter, engML},
		"vllm:num_preemptions_total":                         {counter, engML},
		"vllm:prompt_tokens_total":                           {counter, engML},
		"vllm:generation_tokens_total":                       {counter, engML},
		"vllm:request_success_total":                         {counter, []string{"engine", "finished_reason", "model_name"}},
		"vllm:request_prompt_tokens":                         {hist, engML},
		"vllm:request_generation_tokens":                     {hist, engML},
		"vllm:iteration_tokens_total":                        {hist, engML},
		"vllm:request_max_num_generation_tokens":             {hist, engML},
		"vllm:request_params_n":                              {hist, engML},
		"vllm:request_params_max_tokens":                     {hist, engML},
		"vllm:time_to_first_token_seconds":                   {hist, engML},
		"vllm:inter_token_latency_seconds":                   {hist, engML},
		"vllm:e2e_request_latency_seconds":                   {hist, engML},
		"vllm:request_queue_time_seconds":                    {hist, engML},
		"vllm:request_inference_time_seconds":                {hist, engML},
		"vllm:request_prefill_time_seconds":                  {hist, engML},
		"vllm:request_decode_time_seconds":                   {hist, engML},
		"vllm:spec_decode_num_drafts_total":                  {counter, engML},
		"vllm:spec_decode_num_draft_tokens_total":            {counter, engML},
		"vllm:spec_decode_num_accepted_tokens_total":         {counter, engML},
		"vllm:spec_decode_num_accepted_tokens_per_pos_total": {counter, []string{"engine", "model_name", "position"}},
	}
	return m
}

func with(base map[string]want, extra map[string]want) map[string]want {
	out := map[string]want{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// TestFlavorFamilies renders each flavor after some simulated traffic, parses it with expfmt and
// checks the families and label names the references list, and the ones that must be absent.
func TestFlavorFamilies(t *testing.T) {
	cases := []struct {
		name    string
		cfg     func(*Config)
		profile bool
		need    map[string]want
		absent  []string
		created bool // _created series expected
	}{
		{
			name: "vllm-v1",
			cfg:  func(c *Config) { c.Engines = 2; c.SpecTokens = 3 },
			need: with(v1Core(), map[string]want{
				"vllm:num_requests_waiting_by_reason":        {gauge, []string{"engine", "model_name", "reason"}},
				"vllm:engine_sleep_state":                    {gauge, []string{"engine", "model_name", "sleep_state"}},
				"vllm:prompt_tokens_by_source_total":         {counter, []string{"engine", "model_name", "source"}},
				"vllm:prompt_tokens_cached_total":            {counter, engML},
				"vllm:request_time_per_output_token_seconds": {hist, engML},
				"vllm:request_prefill_kv_computed_tokens":    {hist, engML},
				"vllm:prompt_tokens_created":                 {gauge, engML},
				"vllm:time_to_first_token_seconds_created":   {gauge, engML},
				"process_start_time_seconds":                 {gauge, nil},
				"http_requests_total":                        {counter, []string{"handler", "method", "status"}},
			}),
			absent:  []string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_hits_total"},
			created: true,
		},
		{
			name: "vllm-v1-0.10",
			cfg:  func(c *Config) { c.Flavor = FlavorV1010; c.Engines = 2; c.SpecTokens = 2 },
			need: with(v1Core(), map[string]want{
				"vllm:gpu_cache_usage_perc":           {gauge, engML},
				"vllm:gpu_prefix_cache_queries_total": {counter, engML},
				"vllm:gpu_prefix_cache_hits_total":    {counter, engML},
				"vllm:time_per_output_token_seconds":  {hist, engML},
			}),
			absent:  []string{"vllm:engine_sleep_state", "vllm:prompt_tokens_by_source_total", "vllm:num_requests_waiting_by_reason"},
			created: true,
		},
		{
			name: "vllm-v0",
			cfg:  func(c *Config) { c.Flavor = FlavorV0; c.SpecTokens = 3 },
			need: map[string]want{
				"vllm:num_requests_running":                 {gauge, []string{"model_name"}},
				"vllm:num_requests_swapped":                 {gauge, []string{"model_name"}},
				"vllm:gpu_cache_usage_perc":                 {gauge, []string{"model_name"}},
				"vllm:cpu_cache_usage_perc":                 {gauge, []string{"model_name"}},
				"vllm:gpu_prefix_cache_hit_rate":            {gauge, []string{"model_name"}},
				"vllm:spec_decode_draft_acceptance_rate":    {gauge, []string{"model_name"}},
				"vllm:spec_decode_efficiency":               {gauge, []string{"model_name"}},
				"vllm:spec_decode_num_emitted_tokens_total": {counter, []string{"model_name"}},
				"vllm:tokens_total":                         {counter, []string{"model_name"}},
				"vllm:prompt_tokens_total":                  {counter, []string{"model_name"}},
				"vllm:request_success_total":                {counter, []string{"finished_reason", "model_name"}},
				"vllm:time_to_first_token_seconds":          {hist, []string{"model_name"}},
				"vllm:time_per_output_token_seconds":        {hist, []string{"model_name"}},
				"vllm:time_in_queue_requests":               {hist, []string{"model_name"}},
				"vllm:e2e_request_latency_seconds":          {hist, []string{"model_name"}},
				"process_start_time_seconds":                {gauge, nil},
			},
			absent: []string{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", "vllm:prefix_cache_queries_total"},
		},
		{
			name:    "vllm-ascend",
			cfg:     func(c *Config) { c.Flavor = FlavorAscend; c.Engines = 2; c.SpecTokens = 2 },
			profile: true,
			need: with(v1Core(), map[string]want{
				"vllm_profiling_batch_size":                             {hist, []string{"dp"}},
				"vllm_profiling_waiting_batch_size":                     {hist, []string{"dp"}},
				"vllm_profiling_total_tokens":                           {hist, []string{"dp"}},
				"vllm_profiling_second_token_latency":                   {hist, []string{"dp"}},
				"vllm_profiling_fine_grained_ttft":                      {hist, []string{"dp"}},
				"vllm_profiling_fine_grained_tpot":                      {hist, []string{"dp"}},
				"vllm_profiling_input_total":                            {counter, []string{"dp"}},
				"vllm_profiling_output_total":                           {counter, []string{"dp"}},
				"vllm_profiling_num_spec_tokens":                        {gauge, []string{"dp"}},
				"vllm_profiling_total_kvcache_blocks":                   {gauge, []string{"dp"}},
				"vllm_profiling_free_kvcache_blocks":                    {gauge, []string{"dp"}},
				"vllm_profiling_allocated_kvcache_blocks":               {gauge, []string{"dp"}},
				"vllm_profiling_server:create_chat_completion:duration": {hist, []string{"dp"}},
			}),
			absent: []string{"vllm:prompt_tokens_created", "process_start_time_seconds"},
		},
		{
			name: "dynamo-worker",
			cfg:  func(c *Config) { c.Flavor = FlavorDynamoWorker; c.Engines = 2 },
			need: map[string]want{
				"dynamo_component_inflight_requests":        {gauge, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace", "model"}},
				"dynamo_component_requests_total":           {counter, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace", "model"}},
				"dynamo_component_request_bytes_total":      {counter, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace", "model"}},
				"dynamo_component_response_bytes_total":     {counter, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace", "model"}},
				"dynamo_component_request_duration_seconds": {hist, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace", "model"}},
				"dynamo_component_gpu_cache_usage_percent":  {gauge, []string{"dp_rank", "dynamo_component", "dynamo_namespace"}},
				"dynamo_component_total_blocks":             {gauge, []string{"dp_rank", "dynamo_component", "dynamo_namespace"}},
				"dynamo_component_uptime_seconds":           {gauge, nil},
				"vllm:kv_cache_usage_perc":                  {gauge, engML},
				"vllm:engine_sleep_state":                   {gauge, []string{"engine", "model_name", "sleep_state"}},
				"vllm:time_to_first_token_seconds":          {hist, engML},
				"vllm:prompt_tokens_created":                {gauge, engML},
			},
			absent:  []string{"process_start_time_seconds", "python_info", "http_requests_total", "vllm:prompt_tokens_by_source_total"},
			created: true,
		},
		{
			name: "dynamo-frontend",
			cfg:  func(c *Config) { c.Flavor = FlavorDynamoFrontend; c.Engines = 2; c.MigrationRate = 0.05 },
			need: map[string]want{
				"dynamo_frontend_worker_active_decode_blocks":             {gauge, workerLabels},
				"dynamo_frontend_worker_active_prefill_tokens":            {gauge, workerLabels},
				"dynamo_frontend_worker_last_time_to_first_token_seconds": {gauge, workerLabels},
				"dynamo_frontend_worker_last_input_sequence_tokens":       {gauge, workerLabels},
				"dynamo_frontend_worker_last_inter_token_latency_seconds": {gauge, workerLabels},
				"dynamo_frontend_router_queue_pending_requests":           {gauge, []string{"model", "worker_type"}},
				"dynamo_frontend_cached_tokens":                           {hist, []string{"model"}},
				"dynamo_frontend_model_migration_total":                   {counter, []string{"migration_type", "model"}},
				"dynamo_component_router_requests_total":                  {counter, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace"}},
				"dynamo_component_router_kv_hit_rate":                     {hist, []string{"dynamo_component", "dynamo_endpoint", "dynamo_namespace"}},
				"dynamo_frontend_requests_total":                          {counter, []string{"endpoint", "model", "request_type", "status"}},
				"dynamo_frontend_inflight_requests":                       {gauge, []string{"model"}},
				"dynamo_frontend_queued_requests":                         {gauge, []string{"model"}},
				"dynamo_frontend_disconnected_clients":                    {gauge, nil},
				"dynamo_frontend_time_to_first_token_seconds":             {hist, []string{"model"}},
				"dynamo_frontend_inter_token_latency_seconds":             {hist, []string{"model"}},
				"dynamo_frontend_request_duration_seconds":                {hist, []string{"model"}},
				"dynamo_frontend_input_sequence_tokens":                   {hist, []string{"model"}},
				"dynamo_frontend_output_sequence_tokens":                  {hist, []string{"model"}},
				"dynamo_frontend_output_tokens_total":                     {counter, []string{"model"}},
				"dynamo_frontend_model_total_kv_blocks":                   {gauge, []string{"model"}},
				"dynamo_frontend_model_max_num_seqs":                      {gauge, []string{"model"}},
			},
			absent: []string{"vllm:num_requests_running", "process_start_time_seconds"},
		},
		{
			// Dynamo before the KV router's metrics: the older frontend, kept apart from current names.
			name: "dynamo-frontend-legacy",
			cfg:  func(c *Config) { c.Flavor = FlavorDynamoFrontend; c.Engines = 2; c.DynamoNames = "legacy" },
			need: map[string]want{
				"dynamo_frontend_inflight_requests":     {gauge, []string{"model"}},
				"dynamo_frontend_input_sequence_tokens": {hist, []string{"model"}},
			},
			absent: []string{"dynamo_frontend_worker_active_decode_blocks", "dynamo_frontend_router_queue_pending_requests",
				"dynamo_frontend_cached_tokens", "dynamo_component_router_kv_hit_rate", "dynamo_component_router_requests_total"},
		},
		{
			name: "dynamo-worker-legacy",
			cfg:  func(c *Config) { c.Flavor = FlavorDynamoWorker; c.DynamoNames = "legacy" },
			need: map[string]want{
				"dynamo_component_kvstats_active_blocks": {gauge, []string{"dynamo_component", "dynamo_namespace"}},
				"dynamo_component_kvstats_total_blocks":  {gauge, []string{"dynamo_component", "dynamo_namespace"}},
			},
			absent:  []string{"dynamo_component_total_blocks", "dynamo_component_gpu_cache_usage_percent"},
			created: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFleet(t, testConfig(tc.cfg))
			f.SetProfilingEnabled(tc.profile)
			f.Advance(3 * time.Minute)
			text := render(t, f)
			fams := parse(t, text)
			for name, w := range tc.need {
				fam := fams[name]
				if fam == nil {
					t.Errorf("family %s missing", name)
					continue
				}
				if fam.GetType() != w.typ {
					t.Errorf("%s: type %v, want %v", name, fam.GetType(), w.typ)
				}
				if len(fam.GetMetric()) == 0 {
					t.Errorf("%s: no series", name)
				}
				for _, m := range fam.GetMetric() {
					if got := labelNames(m); !reflect.DeepEqual(got, w.labels) && !(len(got) == 0 && len(w.labels) == 0) {
						t.Errorf("%s: labels %v, want %v", name, got, w.labels)
						break
					}
				}
			}
			for _, name := range tc.absent {
				if fams[name] != nil {
					t.Errorf("family %s must not be exposed by %s", name, tc.name)
				}
			}
			created := strings.Contains(text, "_created{")
			if created != tc.created {
				t.Errorf("_created series present = %v, want %v", created, tc.created)
			}
			for name, fam := range fams {
				for _, m := range fam.GetMetric() {
					if m.TimestampMs != nil {
						t.Fatalf("%s carries a timestamp; vLLM never does", name)
					}
				}
			}
		})
	}
}

// TestMatchesRealCaptures compares the simulator with real /metrics captures: every family the
// capture has must exist with the same type, HELP text, label names, label values of enumerated
// labels, and histogram bounds.
func TestMatchesRealCaptures(t *testing.T) {
	cases := []struct {
		fixture string
		cfg     func(*Config)
		profile bool
		// subsetBuckets: the fixture elides bucket lines, so only require its bounds to be ours.
		subsetBuckets bool
	}{
		{
			fixture: "dynamo_vllm_worker_8081_v1_single_engine.txt",
			cfg: func(c *Config) {
				c.Flavor, c.Model, c.MaxModelLen, c.DynamoNames = FlavorDynamoWorker, "Qwen/Qwen3-0.6B", 40960, "legacy"
			},
		},
		{
			fixture: "dynamo_frontend_fe.txt",
			cfg:     func(c *Config) { c.Flavor, c.Model = FlavorDynamoFrontend, "Qwen/Qwen3-0.6B" },
		},
		{
			fixture:       "ascend_vllm_profiling_doc_timer.txt",
			cfg:           func(c *Config) { c.Flavor = FlavorAscend },
			profile:       true,
			subsetBuckets: true,
		},
	}
	enumerated := map[string]bool{"finished_reason": true, "sleep_state": true, "dynamo_endpoint": true,
		"dynamo_component": true, "dynamo_namespace": true, "model": true, "model_name": true, "engine": true,
		"dp": true, "endpoint": true, "request_type": true, "status": true}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			real := parse(t, string(raw))
			if len(real) == 0 {
				t.Fatal("fixture has no families")
			}
			t.Logf("comparing %d families", len(real))
			f := newTestFleet(t, testConfig(tc.cfg))
			f.SetProfilingEnabled(tc.profile)
			f.Advance(2 * time.Minute)
			ours := parse(t, render(t, f))
			for name, rf := range real {
				of := ours[name]
				if of == nil {
					t.Errorf("%s: in the real capture, missing from the simulator", name)
					continue
				}
				if rf.GetType() != of.GetType() {
					t.Errorf("%s: type %v, real %v", name, of.GetType(), rf.GetType())
				}
				if rf.Help != nil && rf.GetHelp() != of.GetHelp() {
					t.Errorf("%s: HELP %q, real %q", name, of.GetHelp(), rf.GetHelp())
				}
				if got, want := labelShapes(of, enumerated), labelShapes(rf, enumerated); !subset(want, got) {
					t.Errorf("%s: label shapes\n ours %v\n real %v", name, got, want)
				}
				if rf.GetType() == dto.MetricType_HISTOGRAM {
					rb, ob := bounds(rf), bounds(of)
					if tc.subsetBuckets {
						if !subset(rb, ob) {
							t.Errorf("%s: real bounds %v not among ours %v", name, rb, ob)
						}
					} else if !reflect.DeepEqual(rb, ob) {
						t.Errorf("%s: bounds %v, real %v", name, ob, rb)
					}
				}
			}
		})
	}
}

// labelShapes lists, per series, the label names plus the values of enumerated labels.
func labelShapes(fam *dto.MetricFamily, enumerated map[string]bool) []string {
	seen := map[string]bool{}
	for _, m := range fam.GetMetric() {
		var parts []string
		for _, l := range m.GetLabel() {
			if enumerated[l.GetName()] {
				parts = append(parts, l.GetName()+"="+l.GetValue())
			} else {
				parts = append(parts, l.GetName())
			}
		}
		sort.Strings(parts)
		seen[strings.Join(parts, ",")] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func bounds(fam *dto.MetricFamily) []string {
	var out []string
	if len(fam.GetMetric()) == 0 {
		return out
	}
	for _, b := range fam.GetMetric()[0].GetHistogram().GetBucket() {
		out = append(out, pyFloat(b.GetUpperBound()))
	}
	return out
}

func subset(small, big []string) bool {
	have := map[string]bool{}
	for _, s := range big {
		have[s] = true
	}
	for _, s := range small {
		if !have[s] {
			return false
		}
	}
	return true
}

// TestSampleLayout pins how each exporter lays out lines, beyond what a parser would notice.
func TestSampleLayout(t *testing.T) {
	cases := []struct {
		name    string
		cfg     func(*Config)
		profile bool
		want    []string // substrings that must appear, in this order
	}{
		{"python histogram: buckets, _count, _sum, then a _created gauge family", nil, false, []string{
			`vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="meta-llama/Llama-3.1-8B-Instruct"} `,
			`vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",`,
			"vllm:time_to_first_token_seconds_count{",
			"vllm:time_to_first_token_seconds_sum{",
			"# HELP vllm:time_to_first_token_seconds_created Histogram of time to first token in seconds.\n# TYPE vllm:time_to_first_token_seconds_created gauge\n",
		}},
		{"python counter: _total then _created", nil, false, []string{
			"# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{",
			"# TYPE vllm:num_preemptions_created gauge\nvllm:num_preemptions_created{",
		}},
		{"multiprocess histogram: _sum first", func(c *Config) { c.Flavor = FlavorAscend }, true, []string{
			"# HELP vllm_profiling_server:create_chat_completion:duration Execution duration of server:create_chat_completion:duration\n" +
				"# TYPE vllm_profiling_server:create_chat_completion:duration histogram\n" +
				`vllm_profiling_server:create_chat_completion:duration_sum{dp="-1"} `,
			`vllm_profiling_server:create_chat_completion:duration_bucket{dp="-1",le="0.001"} `,
			`vllm_profiling_server:create_chat_completion:duration_count{dp="-1"} `,
		}},
		{"rust histogram: le last, _sum before _count", func(c *Config) { c.Flavor = FlavorDynamoFrontend }, false, []string{
			`dynamo_frontend_time_to_first_token_seconds_bucket{model="meta-llama/llama-3.1-8b-instruct",le="0"} 0`,
			`dynamo_frontend_time_to_first_token_seconds_sum{model="meta-llama/llama-3.1-8b-instruct"} `,
			`dynamo_frontend_time_to_first_token_seconds_count{model="meta-llama/llama-3.1-8b-instruct"} `,
		}},
		{"dynamo worker: dynamo_* first, vllm:* after", func(c *Config) { c.Flavor = FlavorDynamoWorker }, false, []string{
			"# HELP dynamo_component_gpu_cache_usage_percent ",
			"# HELP dynamo_component_uptime_seconds Total uptime of the DistributedRuntime in seconds\n",
			"# HELP vllm:num_requests_running ",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFleet(t, testConfig(tc.cfg))
			f.SetProfilingEnabled(tc.profile)
			f.Advance(time.Minute)
			text := render(t, f)
			pos := 0
			for _, w := range tc.want {
				i := strings.Index(text[pos:], w)
				if i < 0 {
					t.Fatalf("after offset %d, missing %q", pos, w)
				}
				pos += i + len(w)
			}
		})
	}
}

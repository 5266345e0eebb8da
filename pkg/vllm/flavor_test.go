package vllm

import (
	"os"
	"reflect"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

func parseFixture(t *testing.T, name string) *exposition.Scrape {
	t.Helper()
	b, err := os.ReadFile("../../testdata/fixtures/" + name)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := exposition.Parse(b, exposition.ParseOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sc
}

func TestDetectFixtures(t *testing.T) {
	cases := []struct {
		fixture string
		want    Detection
	}{
		{"dynamo_vllm_worker_8081_v1_single_engine.txt", Detection{Flavor: FlavorDynamoWorker, RankLabel: "engine", Ranks: []string{"0"}}},
		{"dynamo_frontend_fe.txt", Detection{Flavor: FlavorDynamoFrontend}},
		{"datadog_fixture_v0_plus_v1_merged.txt", Detection{Flavor: FlavorV0}},
		{"synthetic_v1_8engines_full.txt", Detection{Flavor: FlavorV1, RankLabel: "engine", SpecDecode: true, DeprecatedNames: true,
			Ranks: []string{"0", "1", "2", "3", "4", "5", "6", "7"}}},
		{"ascend_vllm_profiling_doc_timer.txt", Detection{Flavor: FlavorAscend, AscendProfiler: true}},
		{"ascend_vllm_profiling_ut_fixture_synthetic.txt", Detection{Flavor: FlavorAscend, AscendProfiler: true,
			RankLabel: "dp", Ranks: []string{"0"}}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			got := Detect(ScrapeExposed{parseFixture(t, tc.fixture)})
			if len(got.Ranks) == 0 {
				got.Ranks = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Detect = %+v\nwant     %+v", got, tc.want)
			}
		})
	}
}

// fakeExposed lets a test state exactly which names and labels an endpoint has.
type fakeExposed struct {
	names  []string
	labels map[string][]string // "prefix|label" -> values
}

func (f fakeExposed) Names() []string { return f.names }
func (f fakeExposed) LabelValues(prefix, label string) []string {
	return f.labels[prefix+"|"+label]
}

func TestDetectVersionsAndArtefacts(t *testing.T) {
	cases := []struct {
		name string
		e    fakeExposed
		want func(Detection) bool
	}{
		{"0.10 exposes old and new names", fakeExposed{names: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}},
			func(d Detection) bool { return d.Flavor == FlavorV1 && d.DeprecatedNames }},
		{"0.12 exposes only new names", fakeExposed{names: []string{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds_bucket"}},
			func(d Detection) bool { return d.Flavor == FlavorV1 && !d.DeprecatedNames }},
		{"multi-API-server pid artefact", fakeExposed{names: []string{"vllm:kv_cache_usage_perc"},
			labels: map[string][]string{"vllm:|pid": {"101", "102"}, "vllm:|engine": {"0"}}},
			func(d Detection) bool { return d.PIDLabel && reflect.DeepEqual(d.Ranks, []string{"0"}) }},
		{"Ascend API-server rank is not a scheduler rank", fakeExposed{names: []string{"vllm:num_requests_running", "vllm_profiling_batch_size_bucket"},
			labels: map[string][]string{"vllm_profiling_|dp": {"-1", "0", "1"}}},
			func(d Detection) bool { return d.RankLabel == "dp" && reflect.DeepEqual(d.Ranks, []string{"0", "1"}) }},
		{"ranks sort numerically", fakeExposed{names: []string{"vllm:num_requests_running"},
			labels: map[string][]string{"vllm:|engine": {"10", "2", "1"}}},
			func(d Detection) bool { return reflect.DeepEqual(d.Ranks, []string{"1", "2", "10"}) }},
		{"production-stack router look-alikes tell no flavor", fakeExposed{names: []string{"vllm:num_requests_running",
			"vllm:num_requests_swapped", "vllm:gpu_prefix_cache_hit_rate", "vllm:num_incoming_requests_total"},
			labels: map[string][]string{"vllm:|server": {"http://engine-0:8000"}}},
			func(d Detection) bool { return d.Router && d.Flavor == FlavorUnknown }},
		{"nothing known", fakeExposed{names: []string{"go_goroutines"}},
			func(d Detection) bool { return d.Flavor == FlavorUnknown && d.RankLabel == "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := Detect(tc.e); !tc.want(d) {
				t.Fatalf("unexpected detection %+v", d)
			}
		})
	}
}

func TestSignalNamePrefersNewest(t *testing.T) {
	both := map[string]bool{"vllm:inter_token_latency_seconds_bucket": true, "vllm:time_per_output_token_seconds_bucket": true}
	if n, _ := ITL.Name(func(s string) bool { return both[s] }); n != "vllm:inter_token_latency_seconds" {
		t.Fatalf("ITL resolved to %s", n)
	}
	old := map[string]bool{"vllm:gpu_cache_usage_perc": true}
	if n, _ := KVUsage.Name(func(s string) bool { return old[s] }); n != "vllm:gpu_cache_usage_perc" {
		t.Fatalf("KV usage resolved to %s", n)
	}
	if _, ok := TTFT.Name(func(string) bool { return false }); ok {
		t.Fatal("resolved a name that is not exposed")
	}
	if _, ok := TimerSignal("vllm:foo"); ok {
		t.Fatal("timer outside the profiler prefix accepted")
	}
}

// TestReadsFamily: the families InferScope reads, and the Python, process and HTTP families it leaves out.
func TestReadsFamily(t *testing.T) {
	for name, want := range map[string]bool{
		"vllm:num_requests_running":          true,
		"vllm_profiling_free_kvcache_blocks": true,
		"dynamo_component_total_blocks":      true,
		"lmcache:num_hit_tokens_total":       true,
		"lmcache_mp_lookup_hit_tokens_total": true,
		"python_gc_objects_collected_total":  false,
		"process_resident_memory_bytes":      true, // the API server's, by exact name (APIServerFamilies)
		"process_max_fds":                    false,
		"http_requests_total":                true,
		"http_request_size_bytes":            false,
		"vllmish_metric":                     false,
		"ray_vllm_num_requests_running":      true, // Ray Serve's vLLM
		"ray_node_cpu_utilization":           false,
	} {
		if got := ReadsFamily(name); got != want {
			t.Errorf("ReadsFamily(%q) = %v, want %v", name, got, want)
		}
	}
	if FamilySelector != `{__name__=~"vllm:.+|vllm_.+|dynamo_.+|lmcache:.+|lmcache_.+|ray_vllm.+"}` {
		t.Errorf("FamilySelector = %s", FamilySelector)
	}
}

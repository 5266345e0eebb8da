package vllm

import "testing"

func TestSampleNameSpellsSuffixedNames(t *testing.T) {
	for _, tc := range []struct{ name, suffix, want string }{
		{"vllm:time_to_first_token_seconds", "_bucket", "vllm:time_to_first_token_seconds_bucket"},
		{"vllm:e2e_request_latency_seconds", "_count", "vllm:e2e_request_latency_seconds_count"},
		{"ray_vllm_time_to_first_token_seconds", "_sum", "ray_vllm_time_to_first_token_seconds_sum"},
		{"vllm:num_requests_running", "", "vllm:num_requests_running"},
		{"not_in_the_catalog", "_bucket", "not_in_the_catalog_bucket"},
	} {
		if got := SampleName(tc.name, tc.suffix); got != tc.want {
			t.Errorf("SampleName(%q, %q) = %q, want %q", tc.name, tc.suffix, got, tc.want)
		}
	}
	// Every query probes every endpoint's names with the catalog's histograms: those names are made once.
	if n := testing.AllocsPerRun(100, func() { _ = BucketName(TTFT.Names[0]) }); n != 0 {
		t.Errorf("BucketName of a catalog histogram allocates %v times", n)
	}
	has := map[string]bool{TTFT.Names[len(TTFT.Names)-1] + "_bucket": true}
	if got, ok := TTFT.Name(func(n string) bool { return has[n] }); !ok || got != TTFT.Names[len(TTFT.Names)-1] {
		t.Errorf("TTFT.Name = %q, %v; want its last name, found by its buckets", got, ok)
	}
}

package vllm

import "testing"

// TestRankLabels checks which label carries the rank on each family and what it is reported as.
func TestRankLabels(t *testing.T) {
	cases := []struct {
		name                   string
		source, output, worker string
	}{
		{"vllm:num_requests_running", "engine", RankOutputLabel, ""},
		{"ray_vllm_num_requests_running", RayRankLabel, RankOutputLabel, ""},
		{"vllm_profiling_batch_size_bucket", "dp", AscendRankOutputLabel, ""},
		{"dynamo_component_total_blocks", "dp_rank", RankOutputLabel, ""},
		// The frontend's per-worker gauges: dp_rank repeats across workers, so the worker is part of the rank.
		{"dynamo_frontend_worker_active_decode_blocks", "dp_rank", RankOutputLabel, DynamoWorkerLabel},
		{"dynamo_frontend_inflight_requests", "", "", ""},
		{"lmcache:num_hit_tokens_total", "", "", ""},
	}
	for _, c := range cases {
		src, out := RankLabel(c.name)
		if src != c.source || out != c.output || RankWorker(c.name) != c.worker {
			t.Errorf("%s: rank from %q as %q, worker %q; want %q as %q, worker %q", c.name, src, out, RankWorker(c.name),
				c.source, c.output, c.worker)
		}
	}
}

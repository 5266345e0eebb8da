package sim_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// tenMinutes is the exposition of a simulator run with args after ten simulated minutes.
func tenMinutes(t *testing.T, args ...string) *exposition.Scrape {
	t.Helper()
	cfg, err := sim.ParseArgs(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.NewFleet(cfg, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	f.AdvanceTo(10 * time.Minute)
	var buf bytes.Buffer
	if err := f.WriteExposition(&buf); err != nil {
		t.Fatal(err)
	}
	sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// total sums the samples named name (of one label value, when labels gives a name and a value) of a scrape.
func total(t *testing.T, sc *exposition.Scrape, name string, labels ...string) float64 {
	t.Helper()
	fam := sc.FamilyOf(name)
	if fam == nil {
		t.Fatalf("no family for %s", name)
	}
	sum := 0.0
	for _, s := range fam.Samples {
		if s.Name == name && (len(labels) != 2 || s.Labels.Get(labels[0]) == labels[1]) {
			sum += s.Value
		}
	}
	return sum
}

// TestDecodeRoleTransfersPromptKV: a decode instance pulls the prompt KV its prefix cache misses over NIXL — the
// transfers are timed and sized, the configured share fails and is computed locally, and prompt tokens by source
// add up to all prompt tokens.
func TestDecodeRoleTransfersPromptKV(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-fail-rate=0.1", "-qps=10", "-seed=5")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	transfers := value("vllm:nixl_xfer_time_seconds_count")
	failed := value("vllm:nixl_num_failed_transfers_total")
	if transfers < 100 {
		t.Fatalf("%v transfers in 10 minutes at 10 requests/s", transfers)
	}
	if share := failed / (failed + transfers); share < 0.09 || share > 0.11 {
		t.Errorf("failed share %.3f, want 0.1", share)
	}
	if bytes := value("vllm:nixl_bytes_transferred_sum"); bytes < transfers*(1<<20) {
		t.Errorf("%v bytes in %v transfers: a prompt's KV is megabytes", bytes, transfers)
	}
	prompt := value("vllm:prompt_tokens_total")
	local := value("vllm:prompt_tokens_by_source_total", "source", "local_compute")
	hit := value("vllm:prompt_tokens_by_source_total", "source", "local_cache_hit")
	external := value("vllm:prompt_tokens_by_source_total", "source", "external_kv_transfer")
	if local+hit+external != prompt || external <= local || local == 0 {
		t.Errorf("prompt tokens %v by source: local %v, cache %v, transferred %v", prompt, local, hit, external)
	}
}

// TestOffloadingConnector: with CPU offloading, finished requests' KV is stored (bytes, time at the copy speed, one
// store per request but the failed share), the connector's hits are loaded back, and the CPU cache fills.
func TestOffloadingConnector(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-kv-offload-gb=40", "-kv-offload-fail-rate=0.2", "-external-prefix-hit-rate=0.5", "-qps=10", "-seed=6")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	stores, failures := value("vllm:kv_offload_store_size_count"), value("vllm:kv_offload_allocation_failure_total")
	finished := 0.0
	for _, s := range sc.FamilyOf("vllm:request_success_total").Samples {
		finished += s.Value
	}
	if stores+failures != finished || failures/finished < 0.19 || failures/finished > 0.21 {
		t.Errorf("%v stores and %v failed allocations for %v finished requests; want all of them, a fifth failed", stores, failures, finished)
	}
	if b, secs := value("vllm:kv_offload_store_bytes_total"), value("vllm:kv_offload_store_time_total"); b <= 0 || b/secs < 19e9 || b/secs > 21e9 {
		t.Errorf("stored %v bytes in %v s", b, secs)
	}
	if value("vllm:kv_offload_load_bytes_total") <= 0 || value("vllm:kv_offload_lookup_sync_delay_seconds_count") <= 0 {
		t.Error("nothing loaded back from CPU memory")
	}
	if u := value("vllm:kv_offload_cpu_cache_usage_perc"); u <= 0 || u > 1 {
		t.Errorf("CPU cache usage %v", u)
	}
}

// TestOffloadFlatAndLegacyNames: from vLLM 0.24.0 the CPU offloading spec records every transfer under the flat
// kv_offload_{load,store}_* names and mirrors it into the deprecated transfer_type names, whose children it creates
// for both directions at start; 0.20 has only the transfer_type names, created on a direction's first transfer.
func TestOffloadFlatAndLegacyNames(t *testing.T) {
	for _, rel := range []string{"0.24", "0.25", "0.20"} {
		sc := tenMinutes(t, "-vllm-version="+rel, "-kv-offload-gb=40", "-external-prefix-hit-rate=0.5", "-qps=10", "-seed=6")
		value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
		load, store := value("vllm:kv_offload_total_bytes_total", "transfer_type", "CPU_to_GPU"), value("vllm:kv_offload_total_bytes_total", "transfer_type", "GPU_to_CPU")
		if load <= 0 || store <= 0 {
			t.Fatalf("%s: transfer_type names loaded %v and stored %v bytes", rel, load, store)
		}
		if rel == "0.20" {
			if fam := sc.FamilyOf("vllm:kv_offload_load_bytes_total"); fam != nil {
				t.Errorf("0.20 exposes the flat names (%d samples), which 0.24.0 introduced", len(fam.Samples))
			}
			continue
		}
		for _, c := range []struct{ flat, legacy, dir string }{
			{"vllm:kv_offload_load_bytes_total", "vllm:kv_offload_total_bytes_total", "CPU_to_GPU"},
			{"vllm:kv_offload_store_bytes_total", "vllm:kv_offload_total_bytes_total", "GPU_to_CPU"},
			{"vllm:kv_offload_load_time_total", "vllm:kv_offload_total_time_total", "CPU_to_GPU"},
			{"vllm:kv_offload_store_time_total", "vllm:kv_offload_total_time_total", "GPU_to_CPU"},
			{"vllm:kv_offload_store_size_count", "vllm:kv_offload_size_count", "GPU_to_CPU"},
		} {
			if f, l := value(c.flat), value(c.legacy, "transfer_type", c.dir); f != l || f <= 0 {
				t.Errorf("%s: %s is %v, %s{transfer_type=%q} %v; want the same transfers under both", rel, c.flat, f, c.legacy, c.dir, l)
			}
		}
		if u := value("vllm:kv_offload_cpu_cache_usage_perc"); u < 0 || u > 1 {
			t.Errorf("%s: CPU cache usage %v", rel, u)
		}
		for _, name := range []string{"vllm:kv_offload_allocation_failure_total", "vllm:kv_offload_lookup_sync_delay_seconds_count"} {
			if fam := sc.FamilyOf(name); fam != nil {
				t.Errorf("%s exposes %s, which no release to 0.25.1 has", rel, name)
			}
		}
	}
	// At start, before any transfer, 0.24 already has both directions of the transfer_type names (at zero).
	sc := tenMinutes(t, "-vllm-version=0.24", "-kv-offload-gb=40", "-qps=0.001", "-seed=6")
	for _, dir := range []string{"CPU_to_GPU", "GPU_to_CPU"} {
		n := 0
		for _, s := range sc.FamilyOf("vllm:kv_offload_total_bytes_total").Samples {
			if s.Labels.Get("transfer_type") == dir {
				n++
			}
		}
		if n == 0 {
			t.Errorf("0.24 without transfers: no kv_offload_total_bytes{transfer_type=%q} child", dir)
		}
	}
	// The flat names' children come with their first observation: the families are declared, without samples.
	for _, name := range []string{"vllm:kv_offload_load_bytes_total", "vllm:kv_offload_store_bytes_total", "vllm:kv_offload_store_size_count"} {
		if fam := sc.FamilyOf(name); fam == nil || len(fam.Samples) != 0 {
			t.Errorf("0.24 without transfers: %s is %v, want declared without samples", name, fam)
		}
	}
}

// TestIterationTokensFollowTheRelease: vLLM's tokens per step count every prompt token of the prefills a step
// completes up to 0.22, only the ones it computed (prefix-cache hits and pulled KV left out) from 0.23.0.
func TestIterationTokensFollowTheRelease(t *testing.T) {
	for _, c := range []struct {
		release  string
		computed bool
	}{{"0.20", false}, {"0.24", true}, {"0.25", true}} {
		sc := tenMinutes(t, "-vllm-version="+c.release, "-prefix-hit-rate=0.5", "-qps=10", "-seed=8")
		value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
		prompt := value("vllm:prompt_tokens_total")
		if c.computed {
			prompt = value("vllm:prompt_tokens_by_source_total", "source", "local_compute")
		}
		want, got := prompt+value("vllm:generation_tokens_total"), value("vllm:iteration_tokens_total_sum")
		if cached := value("vllm:prompt_tokens_cached_total"); cached <= 0 || got != want {
			t.Errorf("%s: iteration tokens sum to %v, want %v (computed prompt tokens only: %v; %v cached)", c.release, got, want, c.computed, cached)
		}
	}
}

// TestLMCacheConnector: with LMCache as the KV connector, its own counters repeat the connector's lookups and hits
// (vLLM's external_prefix_cache_*), one retrieval per request and one store per finished request.
func TestLMCacheConnector(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-lmcache", "-external-prefix-hit-rate=0.4", "-qps=10", "-seed=7")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	if r, q := value("lmcache:num_requested_tokens_total"), value("vllm:external_prefix_cache_queries_total"); r != q || r == 0 {
		t.Errorf("LMCache was asked for %v tokens, the connector looked up %v", r, q)
	}
	if h, x := value("lmcache:num_hit_tokens_total"), value("vllm:external_prefix_cache_hits_total"); h != x || h == 0 {
		t.Errorf("LMCache hit %v tokens, the connector %v", h, x)
	}
	if got := value("lmcache:time_to_retrieve_count"); got != value("lmcache:num_retrieve_requests_total") || got == 0 {
		t.Errorf("%v timed retrievals for %v retrieve requests", got, value("lmcache:num_retrieve_requests_total"))
	}
	if value("lmcache:num_store_requests_total") == 0 {
		t.Error("nothing stored")
	}
}

// TestPrefillRoleHoldsKVForTheDecodeSide: a prefill instance generates one token per request and leaves the KV to
// the decode side: it registers the NIXL connector's families as both sides do, records no transfer itself (the
// puller does), and exposes no pending-send gauge, which no vLLM release has.
func TestPrefillRoleHoldsKVForTheDecodeSide(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-kv-role=prefill", "-kv-transfer-ms=2000", "-abort-rate=0", "-error-rate=0", "-qps=10", "-seed=8")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	finished, generated := value("vllm:request_success_total"), value("vllm:generation_tokens_total")
	if finished < 5000 || generated != finished || value("vllm:request_success_total", "finished_reason", "length") != finished {
		t.Errorf("%v requests finished with %v tokens: want one token each, finished by length", finished, generated)
	}
	if sc.FamilyOf("vllm:nixl_xfer_time_seconds_count") == nil {
		t.Error("the prefill side registers no NIXL transfer histogram")
	}
	if x := value("vllm:nixl_xfer_time_seconds_count"); x != 0 {
		t.Errorf("the prefill side timed %v transfers; the puller records them", x)
	}
	for _, name := range []string{"vllm:nixl_num_pending_sends", "vllm:nixl_num_in_process_reqs"} {
		if sc.FamilyOf(name) != nil {
			t.Errorf("%s is exposed; no vLLM release has it", name)
		}
	}
}

// TestKVCacheMetrics: with --kv-cache-metrics every finished request records its blocks' lifetime and idle time,
// the lifetime is its time since scheduling (so at least the prefill and decode it ran), and prefix-cache hits
// record reuse gaps.
func TestKVCacheMetrics(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-kv-cache-metrics", "-prefix-hit-rate=0.5", "-qps=10", "-seed=9")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	finished := value("vllm:request_success_total")
	if n := value("vllm:kv_block_lifetime_seconds_count"); n != finished || n == 0 {
		t.Errorf("%v lifetimes for %v finished requests", n, finished)
	}
	if n := value("vllm:kv_block_idle_before_evict_seconds_count"); n != finished {
		t.Errorf("%v idle times for %v finished requests", n, finished)
	}
	if life, inference := value("vllm:kv_block_lifetime_seconds_sum"), value("vllm:request_inference_time_seconds_sum"); life < inference*0.999 {
		t.Errorf("blocks lived %v s in all, the requests ran %v s", life, inference)
	}
	if n := value("vllm:kv_block_reuse_gap_seconds_count"); n < finished/4 {
		t.Errorf("%v reuse gaps for %v requests at a 50 %% prefix hit rate", n, finished)
	}
}

// TestLMCacheMultiProcess: multi-process LMCache counts the connector's lookups and hits as lmcache_mp_* (L1 and L2
// hits adding up to all hits), with one submitted and finished retrieval per request, and none of the lmcache:*
// names of the in-process connector.
func TestLMCacheMultiProcess(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-lmcache-mp", "-external-prefix-hit-rate=0.4", "-qps=10", "-seed=10")
	value := func(name string, labels ...string) float64 { t.Helper(); return total(t, sc, name, labels...) }
	if r, q := value("lmcache_mp_lookup_requested_tokens_total"), value("vllm:external_prefix_cache_queries_total"); r != q || r == 0 {
		t.Errorf("LMCache looked up %v tokens, the connector %v", r, q)
	}
	hit := value("lmcache_mp_lookup_hit_tokens_total")
	if l1, l2 := value("lmcache_mp_lookup_hit_l1_tokens_total"), value("lmcache_mp_lookup_hit_l2_tokens_total"); hit == 0 || l1+l2 < hit*0.999999 || l1+l2 > hit*1.000001 {
		t.Errorf("hits %v, L1 %v + L2 %v", hit, l1, l2)
	}
	if s, f := value("lmcache_mp_num_submitted_retrieves_total"), value("lmcache_mp_num_finished_retrieves_total"); s == 0 || s != f {
		t.Errorf("%v retrievals submitted, %v finished", s, f)
	}
	if u := value("lmcache_mp_l1_memory_usage_bytes"); u <= 0 || u > 20e9 {
		t.Errorf("L1 holds %v bytes", u)
	}
	if sc.FamilyOf("lmcache:num_hit_tokens_total") != nil {
		t.Error("the multi-process connector exposes the in-process connector's names")
	}
}

// TestLoRAAdapters: with four adapters and room for two at a time, lora_requests_info lists at most two running
// adapters, and the others' requests wait, named in waiting_lora_adapters; each change of the sets is a new series
// set to the time it changed, the newest holding the largest value.
func TestLoRAAdapters(t *testing.T) {
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-lora-adapters=4", "-max-lora=2", "-qps=20", "-seed=11"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.NewFleet(cfg, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for i := 1; i <= 60; i++ { // a scrape every 10 s
		f.AdvanceTo(time.Duration(i) * 10 * time.Second)
		buf.Reset()
		if err := f.WriteExposition(&buf); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fam := sc.FamilyOf("vllm:lora_requests_info")
	if fam == nil || len(fam.Samples) < 2 || len(fam.Samples) > 20 {
		t.Fatalf("lora_requests_info: %v", fam)
	}
	newest, waited := fam.Samples[0], false
	for _, s := range fam.Samples {
		if s.Labels.Get("max_lora") != "2" || s.Labels.Get("model_name") != "" {
			t.Errorf("labels %v", s.Labels)
		}
		if running := s.Labels.Get("running_lora_adapters"); running != "" && len(strings.Split(running, ",")) > 2 {
			t.Errorf("%q run at once with max_lora 2", running)
		}
		waited = waited || s.Labels.Get("waiting_lora_adapters") != ""
		if s.Value > newest.Value {
			newest = s
		}
	}
	if !waited || newest.Value < 1_700_000_000+590 {
		t.Errorf("no adapter ever waited (%v), or the newest set is from %v", waited, newest.Value)
	}
}

// TestMFUEstimates: with -mfu the per-GPU estimates count the work (2 FLOPs per parameter per token processed), giving an MFU between 0 and 1 against an H100's
// peak; without it they stay exposed at 0, as vLLM leaves them when MFU metrics are off.
func TestMFUEstimates(t *testing.T) {
	on := tenMinutes(t, "-flavor=vllm-v1", "-mfu", "-qps=10", "-seed=12")
	flops := total(t, on, "vllm:estimated_flops_per_gpu_total")
	prompt, generated := total(t, on, "vllm:prompt_tokens_total"), total(t, on, "vllm:generation_tokens_total")
	// Cached prompt tokens are not computed, so the work lies between the generated tokens' and all tokens'.
	if perParam := flops / 2 / 8.03e9; perParam < generated || perParam > (prompt+generated)*1.01 {
		t.Errorf("%v FLOPs for %v prompt and %v generated tokens", flops, prompt, generated)
	}
	if mfu := flops / 600 / 989e12; mfu <= 0 || mfu >= 1 {
		t.Errorf("MFU %v", mfu)
	}
	if r, w := total(t, on, "vllm:estimated_read_bytes_per_gpu_total"), total(t, on, "vllm:estimated_write_bytes_per_gpu_total"); r <= w || w <= 0 {
		t.Errorf("read %v bytes, wrote %v", r, w)
	}
	off := tenMinutes(t, "-flavor=vllm-v1", "-qps=10", "-seed=12")
	if v := total(t, off, "vllm:estimated_flops_per_gpu_total"); v != 0 {
		t.Errorf("without -mfu the estimate is %v", v)
	}
}

// TestRayNames: under -ray, vLLM's families carry Ray Serve's names and labels, and detection reads the instance
// as vLLM V1 whose ranks are its replicas.
func TestRayNames(t *testing.T) {
	sc := tenMinutes(t, "-flavor=vllm-v1", "-ray", "-engines=2", "-qps=4", "-seed=13")
	if sc.FamilyOf("vllm:num_requests_running") != nil || sc.FamilyOf("ray_vllm_num_requests_running") == nil {
		t.Fatal("vllm: names were not renamed")
	}
	for _, s := range sc.FamilyOf("ray_vllm_prompt_tokens_total").Samples {
		if s.Name != "ray_vllm_prompt_tokens_total" || s.Labels.Get("engine") != "0" || !strings.HasPrefix(s.Labels.Get("ReplicaId"), "replica-") {
			t.Errorf("%s %v", s.Name, s.Labels)
		}
	}
	d := vllm.Detect(vllm.ScrapeExposed{Scrape: sc})
	if d.Flavor != vllm.FlavorV1 || d.RankLabel != vllm.RayRankLabel || len(d.Ranks) != 2 {
		t.Errorf("detected %+v", d)
	}
}

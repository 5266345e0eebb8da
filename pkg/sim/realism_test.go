package sim

import (
	"math"
	"testing"
	"time"
)

func mean(h *histogram) float64 { return ratio(h.sum, h.count) }

// runFor steps a fleet for d, sampling every engine's KV usage each 10 simulated seconds.
func runFor(t *testing.T, cfg Config, d time.Duration) (*Fleet, float64) {
	t.Helper()
	f := newTestFleet(t, cfg)
	sum, n := 0.0, 0
	for at := 10 * time.Second; at <= d; at += 10 * time.Second {
		f.AdvanceTo(at)
		for _, e := range f.engines {
			sum += e.kv.usage()
			n++
		}
	}
	return f, sum / float64(n)
}

// TestRealismLlama8B checks the defaults behave like Llama-3.1-8B on one GPU, and that latency
// and KV usage grow with load.
func TestRealismLlama8B(t *testing.T) {
	light, lightKV := runFor(t, testConfig(nil), 20*time.Minute)
	busy, busyKV := runFor(t, testConfig(func(c *Config) { c.QPS = 9 }), 20*time.Minute)
	l, b := light.engines[0].st, busy.engines[0].st

	if m := mean(l.ttft); m < 0.03 || m > 0.3 {
		t.Errorf("mean TTFT at 4 req/s = %.3fs, want tens to hundreds of ms", m)
	}
	if m := mean(l.itl); m < 0.008 || m > 0.04 {
		t.Errorf("mean ITL at 4 req/s = %.4fs, want 8-40 ms", m)
	}
	if mean(b.ttft) <= mean(l.ttft) || mean(b.itl) <= mean(l.itl) {
		t.Errorf("latency does not grow with load: TTFT %.3f -> %.3f, ITL %.4f -> %.4f",
			mean(l.ttft), mean(b.ttft), mean(l.itl), mean(b.itl))
	}
	if lightKV > 0.5 || busyKV <= lightKV {
		t.Errorf("mean KV usage %.2f at 4 req/s, %.2f at 9 req/s: want low and rising", lightKV, busyKV)
	}
	if l.preemptions != 0 {
		t.Errorf("%v preemptions at light load", l.preemptions)
	}
	if hit := l.prefixHits / l.prefixQueries; math.Abs(hit-0.25) > 0.03 {
		t.Errorf("prefix hit rate %.3f, configured 0.25", hit)
	}
	if r := l.success["length"] / l.e2e.count; r < 0.02 || r > 0.3 {
		t.Errorf("share of requests stopped by max_tokens %.2f, want a minority", r)
	}
}

// TestSpecDecodeAcceptance: the per-position acceptance rate follows the profile, decreasing.
func TestSpecDecodeAcceptance(t *testing.T) {
	profile := []float64{0.85, 0.6, 0.4, 0.2}
	f, _ := runFor(t, testConfig(func(c *Config) { c.SpecTokens, c.SpecAcceptance = 4, profile }), 10*time.Minute)
	st := f.engines[0].st
	prev := 1.0
	for i, want := range profile {
		got := st.specAcceptedPerPos[i] / st.specDrafts
		if math.Abs(got-want) > 0.02 || got > prev {
			t.Errorf("position %d: acceptance %.3f, want %.2f and below %.3f", i, got, want, prev)
		}
		prev = got
	}
	if st.specAccepted != st.specAcceptedPerPos[0]+st.specAcceptedPerPos[1]+st.specAcceptedPerPos[2]+st.specAcceptedPerPos[3] {
		t.Error("accepted tokens differ from the per-position sum")
	}
}

// TestRouting: balanced routing spreads requests evenly, skewed routing piles them on engine 0
// (the imbalance operators report in vllm-project/vllm#48808).
func TestRouting(t *testing.T) {
	cases := []struct {
		routing      string
		minShare0    float64
		maxShare0    float64
		maxImbalance float64
	}{
		{"balanced", 0.2, 0.3, 0.15},
		{"skewed", 0.7, 0.85, 10},
	}
	for _, tc := range cases {
		t.Run(tc.routing, func(t *testing.T) {
			f, _ := runFor(t, testConfig(func(c *Config) { c.Engines, c.QPS, c.Routing, c.Skew = 4, 10, tc.routing, 0.7 }), 10*time.Minute)
			total := 0.0
			for _, e := range f.engines {
				total += e.st.workerRequests
			}
			share0 := f.engines[0].st.workerRequests / total
			if share0 < tc.minShare0 || share0 > tc.maxShare0 {
				t.Errorf("engine 0 took %.2f of requests, want %.2f-%.2f", share0, tc.minShare0, tc.maxShare0)
			}
			for _, e := range f.engines {
				if s := e.st.workerRequests / total; tc.routing == "balanced" && math.Abs(s-0.25) > 0.25*tc.maxImbalance {
					t.Errorf("engine %d took %.3f of requests under balanced routing", e.idx, s)
				}
			}
		})
	}
}

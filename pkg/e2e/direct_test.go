package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// fleetEndpoints starts the four simulated deployments of the direct-mode acceptance test, accelerated so a few
// seconds of scraping hold minutes of traffic.
func fleetEndpoints(t *testing.T) []map[string]string {
	return []map[string]string{
		{"name": "v1-dp4", "url": startSim(t, "-flavor=vllm-v1", "-engines=4", "-routing=skewed", "-qps=40", "-speed=20", "-seed=1", "-spec-tokens=3")},
		{"name": "v0", "url": startSim(t, "-flavor=vllm-v0", "-qps=8", "-speed=20", "-seed=2")},
		{"name": "ascend-dp2", "url": startSim(t, "-flavor=vllm-ascend", "-engines=2", "-qps=12", "-speed=20", "-seed=3", "-profiler-config="+profilerConfig(t, 1))},
		{"name": "dynamo", "url": startSim(t, "-flavor=dynamo-worker", "-qps=10", "-speed=20", "-seed=4")},
	}
}

// brokenEndpoints are the three ways an endpoint fails: refused, garbage, and hanging past the timeout.
func brokenEndpoints(t *testing.T) []map[string]string {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("vllm:num_requests_running{engine=\"0\" 3\nthis is not an exposition\n"))
	}))
	t.Cleanup(garbage.Close)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); hanging.Close() })
	return []map[string]string{
		{"name": "stopped", "url": stoppedEndpoint(t)},
		{"name": "garbage", "url": garbage.URL + "/metrics"},
		{"name": "hanging", "url": hanging.URL + "/metrics"},
	}
}

func TestDirectModeFleet(t *testing.T) {
	eps := append(fleetEndpoints(t), brokenEndpoints(t)...)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{
		UID:      "direct-e2e",
		JSONData: map[string]any{"mode": "direct", "endpoints": eps, "scrapeInterval": testScrapeInterval, "scrapeTimeout": testScrapeInterval},
	}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The simulators run inside this (race-instrumented) test binary: on a loaded machine a health check's scrape of
	// them can time out although they are up. The test is not about timeouts: ask again until the four live
	// endpoints answer (bounded by ctx), then check the last answer.
	var health *backend.CheckHealthResult
	poll(ctx, func() bool {
		var err error
		if health, err = p.CheckHealth(ctx, pc); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(health.Message, "4 of 7 endpoint(s) reachable")
	})
	if health.Status != backend.HealthStatusError {
		t.Errorf("health status %v with three broken endpoints", health.Status)
	}
	for _, want := range []string{"4 of 7 endpoint(s) reachable", "v1-dp4: vllm-v1, 4 engine rank(s), speculative decoding on",
		"v0: vllm-v0", "vLLM 0.7.3", "ascend-dp2: vllm-ascend, 2 dp rank(s)", "Ascend profiler metrics on", "dynamo: dynamo-worker",
		"stopped: scrape", "garbage: scrape", "hanging: scrape"} {
		if !strings.Contains(health.Message, want) {
			t.Errorf("health message lacks %q:\n%s", want, health.Message)
		}
	}

	cases := []struct {
		name      string
		query     map[string]any
		measure   string // a value field every answer must contain
		endpoints []string
	}{
		{"kv usage", map[string]any{"queryType": "kv_cache_usage"}, "kv_usage", []string{"v1-dp4", "v0", "ascend-dp2", "dynamo"}},
		{"kv blocks", map[string]any{"queryType": "kv_cache_usage", "measure": "blocks"}, "total_blocks", []string{"v1-dp4", "ascend-dp2"}},
		{"spec decode", map[string]any{"queryType": "spec_decode"}, "acceptance_rate", []string{"v1-dp4"}},
		{"dp balance", map[string]any{"queryType": "dp_balance", "measure": "running_waiting", "endpoint": "v1-dp4"}, "max_over_mean", nil},
		{"latency", map[string]any{"queryType": "latency", "metric": "ttft", "quantiles": []float64{0.95}}, "ttft", []string{"v1-dp4", "v0", "ascend-dp2", "dynamo"}},
		{"ascend timer", map[string]any{"queryType": "latency", "metric": "ascend_fine_ttft"}, "ascend_fine_ttft", []string{"ascend-dp2"}},
		{"throughput", map[string]any{"queryType": "throughput", "measure": "generation_tokens"}, "generation_tokens_per_second", []string{"v1-dp4", "v0", "ascend-dp2", "dynamo"}},
		{"queue", map[string]any{"queryType": "queue"}, "running", []string{"v1-dp4", "v0", "ascend-dp2", "dynamo"}},
		{"swapped", map[string]any{"queryType": "queue", "measure": "swapped"}, "swapped", []string{"v0"}},
		{"cache", map[string]any{"queryType": "cache", "measure": "prefix_hit_rate"}, "prefix_hit_rate", []string{"v1-dp4", "v0"}},
		{"capacity", map[string]any{"queryType": "capacity"}, "mean_tokens_per_request", []string{"v1-dp4"}},
		{"raw", map[string]any{"queryType": "raw", "metric": "vllm:num_requests_waiting"}, "vllm:num_requests_waiting", []string{"v1-dp4"}},
		{"up", map[string]any{"queryType": "raw", "metric": "up"}, "up", []string{"v1-dp4", "v0", "ascend-dp2", "dynamo", "stopped", "garbage", "hanging"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Rates and quantiles need a few scrape rounds of accelerated traffic: ask until every endpoint answers
			// (bounded by ctx), then check the last answer.
			var r backend.DataResponse
			seen := map[string]bool{}
			poll(ctx, func() bool {
				now := time.Now()
				resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: tc.query, From: now.Add(-time.Minute), To: now, Interval: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				r = resp.Responses["A"]
				seen = map[string]bool{}
				for _, f := range r.Frames {
					for _, fld := range valueFields(f) {
						if fld.Name == tc.measure && fld.Len() > 0 {
							seen[fld.Labels["endpoint"]] = true
						}
					}
				}
				return r.Error == nil && len(seen) > 0 && hasAll(seen, tc.endpoints)
			})
			if r.Error != nil {
				t.Fatalf("query failed: %v", r.Error)
			}
			if len(seen) == 0 {
				t.Fatalf("no %s values; frames: %s", tc.measure, frameSummary(r.Frames))
			}
			for _, ep := range tc.endpoints {
				if !seen[ep] {
					t.Errorf("no %s values for endpoint %s; have %v", tc.measure, ep, seen)
				}
			}
			if tc.measure == "up" {
				for _, f := range r.Frames {
					v, ok := lastFloat(f)
					if !ok {
						t.Errorf("an up frame has no value: %s", frameSummary(data.Frames{f}))
						continue
					}
					ep := valueFields(f)[0].Labels["endpoint"]
					if want := map[bool]float64{true: 0, false: 1}[ep == "stopped" || ep == "garbage" || ep == "hanging"]; v != want {
						t.Errorf("up{endpoint=%s} = %v, want %v", ep, v, want)
					}
				}
			}
			notices := noticeText(r.Frames)
			for _, broken := range []string{"endpoint stopped", "endpoint garbage", "endpoint hanging"} {
				if !strings.Contains(notices, broken) && (tc.query["endpoint"] == nil) {
					t.Errorf("no notice naming %q in %q", broken, notices)
				}
			}
			if f := firstFrame(t, r); f.Meta == nil || !strings.HasPrefix(f.Meta.Channel, "ds/direct-e2e/query/") {
				t.Errorf("frame meta %+v, want a live channel of this data source", f.Meta)
			}
		})
	}
}

func frameSummary(frames data.Frames) string {
	var b strings.Builder
	for _, f := range frames {
		for _, fld := range valueFields(f) {
			b.WriteString(fld.Name + fld.Labels.String() + " ")
		}
	}
	return b.String()
}

func noticeText(frames data.Frames) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Meta == nil {
			continue
		}
		for _, n := range f.Meta.Notices {
			b.WriteString(n.Text + "\n")
		}
	}
	return b.String()
}

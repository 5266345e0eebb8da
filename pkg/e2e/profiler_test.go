package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestProfilerSwitch toggles metric_enable through the app backend and watches a vllm-ascend simulator, which
// hot-reloads the same file, start and stop exposing vllm_profiling_* families.
func TestProfilerSwitch(t *testing.T) {
	path := profilerConfig(t, 0)
	metricsURL := startSim(t, "-flavor=vllm-ascend", "-engines=2", "-profiler-config="+path, "-profiler-poll=100ms")
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	jsonData := map[string]any{"profilerConfigs": []map[string]string{
		{"name": "ascend-dp2", "path": path, "metricsUrl": metricsURL},
	}}
	admin := harness.AppContext(t, jsonData, nil, harness.User("Admin"))
	viewer := harness.AppContext(t, jsonData, nil, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if n := profilingFamilies(ctx, t, metricsURL); n != 0 {
		t.Fatalf("metric_enable is 0 but the simulator exposes %d vllm_profiling_* families", n)
	}
	if v := listOne(ctx, t, p, viewer); v.MetricEnable != 0 || v.Exposed == nil || *v.Exposed {
		t.Fatalf("list before toggling: %+v", v)
	}
	res, err := p.CallResource(ctx, viewer, http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", []byte(`{"value": 1}`))
	if err != nil || res.Status != http.StatusForbidden {
		t.Fatalf("a Viewer's toggle: %v %+v", err, res)
	}

	for _, value := range []int{1, 0} {
		res, err := p.CallResource(ctx, admin, http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", fmt.Appendf(nil, `{"value": %d}`, value))
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("toggle to %d: %v %+v", value, err, res)
		}
		var v profilerView
		if err := json.Unmarshal(res.Body, &v); err != nil || v.MetricEnable != value {
			t.Fatalf("toggle to %d answered %s", value, res.Body)
		}
		// The simulator polls every 100ms; wait for it to follow, then for the app to report it.
		want := value == 1
		waitFor(ctx, t, fmt.Sprintf("simulator exposing vllm_profiling_* = %v", want), func() bool {
			return (profilingFamilies(ctx, t, metricsURL) > 0) == want
		})
		waitFor(ctx, t, fmt.Sprintf("app reporting exposed = %v", want), func() bool {
			v := listOne(ctx, t, p, viewer)
			return v.MetricEnable == value && v.Exposed != nil && *v.Exposed == want
		})
	}
}

type profilerView struct {
	Name         string `json:"name"`
	MetricEnable int    `json:"metricEnable"`
	Exposed      *bool  `json:"exposed"`
	ExposedError string `json:"exposedError"`
}

// listOne calls the app's list resource and returns its only entry.
func listOne(ctx context.Context, t *testing.T, p *harness.Plugin, pc *pluginv2.PluginContext) profilerView {
	t.Helper()
	res, err := p.CallResource(ctx, pc, http.MethodGet, "profiler-configs", nil)
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("list: %v %+v", err, res)
	}
	var list struct {
		ProfilerConfigs []profilerView `json:"profilerConfigs"`
	}
	if err := json.Unmarshal(res.Body, &list); err != nil || len(list.ProfilerConfigs) != 1 {
		t.Fatalf("list answered %s", res.Body)
	}
	return list.ProfilerConfigs[0]
}

// profilingFamilies scrapes the simulator and counts the vllm_profiling_* families with samples.
func profilingFamilies(ctx context.Context, t *testing.T, url string) int {
	t.Helper()
	res, err := exposition.Fetch(ctx, nil, url, exposition.ScrapeOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range res.Scrape.Families {
		if strings.HasPrefix(f.Name, "vllm_profiling_") && len(f.Samples) > 0 {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or ctx ends; only the overall deadline bounds it, no step is timed.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// TestPrometheusModeSeesDownEndpoints: in Prometheus mode `up` was not among the names the generator knew, so the
// endpoint-down alert rule and diagnosis never saw a dead vLLM endpoint. `up` counts for the jobs that scrape vLLM,
// Dynamo or Ascend metrics (here a deployment's two replicas, one of them dead), not for every target the server
// has (node exporters and the like).
func TestPrometheusModeSeesDownEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a simulator and Prometheus")
	}
	live := hostPort(startSim(t, "-flavor=vllm-v1", "-qps=5", "-seed=1"))
	dead := hostPort(stoppedEndpoint(t))
	other := hostPort(stoppedEndpoint(t))
	prom := promtest.Start(t, promtest.Options{ScrapeInterval: time.Second, Targets: []promtest.Target{
		{Job: "vllm", Addr: live}, {Job: "vllm", Addr: dead}, {Job: "node", Addr: other},
	}})
	prom.WaitFor(t, `count(up)`, time.Minute, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 3 })
	prom.WaitFor(t, `count(vllm:num_requests_running)`, time.Minute, func(v model.Vector) bool { return len(v) == 1 })
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "prom-down", URL: prom.URL,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ask := func(model map[string]any) data.Frames {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: model, From: now.Add(-2 * time.Minute), To: now, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Responses["A"]
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		return r.Frames
	}

	// Prometheus has scraped all three targets; ask until the answers hold a step after those scrapes (bounded by
	// ctx), then check the last ones.
	var up map[string]float64
	var upFrames data.Frames
	var down []string
	poll(ctx, func() bool {
		up = map[string]float64{}
		upFrames = ask(map[string]any{"queryType": "raw", "metric": "up"})
		for _, f := range upFrames {
			if v, ok := lastFloat(f); ok {
				up[valueFields(f)[0].Labels["endpoint"]] = v
			}
		}
		diagnosis := ask(map[string]any{"queryType": "diagnosis"})
		if len(diagnosis) == 0 {
			t.Fatal("the diagnosis returned no frame")
		}
		f := diagnosis[0]
		down = nil
		for i := 0; i < f.Rows(); i++ {
			if strings.HasPrefix(stringAt(t, f, 1, i), "endpoint down") {
				down = append(down, stringAt(t, f, 2, i))
			}
		}
		return len(up) == 2 && up[live] == 1 && up[dead] == 0 && len(down) == 1
	})
	if len(up) != 2 || up[live] != 1 || up[dead] != 0 {
		t.Errorf("up = %v, want %s=1 and %s=0 and nothing of the node job; frames %s", up, live, dead, frameSummary(upFrames))
	}
	if len(down) != 1 || down[0] != dead {
		t.Errorf("endpoint-down findings %v, want [%s]", down, dead)
	}
}

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
	live := strings.TrimSuffix(strings.TrimPrefix(startSim(t, "-flavor=vllm-v1", "-qps=5", "-seed=1"), "http://"), "/metrics")
	dead := strings.TrimSuffix(strings.TrimPrefix(stoppedEndpoint(t), "http://"), "/metrics")
	other := strings.TrimSuffix(strings.TrimPrefix(stoppedEndpoint(t), "http://"), "/metrics")
	prom := promtest.Start(t, promtest.Options{ScrapeInterval: time.Second, Targets: []promtest.Target{
		{Job: "vllm", Addr: live}, {Job: "vllm", Addr: dead}, {Job: "node", Addr: other},
	}})
	prom.WaitFor(t, `count(up)`, 20*time.Second, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 3 })
	prom.WaitFor(t, `count(vllm:num_requests_running)`, 20*time.Second, func(v model.Vector) bool { return len(v) == 1 })
	time.Sleep(3 * time.Second)

	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "prom-down", URL: prom.URL,
		JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now()
	ask := func(model map[string]any) data.Frames {
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

	up := map[string]float64{}
	upFrames := ask(map[string]any{"queryType": "raw", "metric": "up"})
	for _, f := range upFrames {
		if len(f.Fields) > 1 && f.Fields[1].Len() > 0 {
			up[f.Fields[1].Labels["endpoint"]] = f.Fields[1].At(f.Fields[1].Len() - 1).(float64)
		}
	}
	if len(up) != 2 || up[live] != 1 || up[dead] != 0 {
		t.Errorf("up = %v, want %s=1 and %s=0 and nothing of the node job; ran %s", up, live, dead, upFrames[0].Meta.ExecutedQueryString)
	}

	f := ask(map[string]any{"queryType": "diagnosis"})[0]
	var down []string
	for i := 0; i < f.Rows(); i++ {
		if strings.HasPrefix(f.Fields[1].At(i).(string), "endpoint down") {
			down = append(down, f.Fields[2].At(i).(string))
		}
	}
	if len(down) != 1 || down[0] != dead {
		t.Errorf("endpoint-down findings %v, want [%s]", down, dead)
	}
}

package provisioning

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/simtest"
)

// quietInDemo are the shipped panels the compose demo leaves empty on purpose, each with why; every other panel of
// every shipped dashboard must have data.
var quietInDemo = map[string]string{
	"vllm-fleet.json/Sleep and wake time":               "no simulator sleeps: an instance asleep half the time would look broken in a demo",
	"vllm-service-status.json/Requests with NaN logits": "no simulator counts NaN logits: vLLM counts them only with VLLM_COMPUTE_NANS_IN_LOGITS=1, and a demo with corrupted output would look broken",
}

// ascendProfiler is why the Ascend dashboard's profiler panels are empty at first: vLLM-Ascend records
// vllm_profiling_* only while metric_enable is 1, which the demo leaves for the app's switch to turn on.
const ascendProfiler = "profiler metrics are off until metric_enable is switched on from the app's page"

func init() {
	for _, title := range []string{"$timer p50 / p99", "$timer p50 / p99 in the API server", "Batch size: average and p99",
		"Draft tokens (num_spec_tokens)", "Fine-grained TPOT p50 / p99", "Fine-grained TTFT p50 / p99",
		"Input / output tokens/s", "Second-token latency p50 / p99", "Tokens per iteration (total_tokens) p50 / p99",
		"Waiting batch size: average and p99"} {
		quietInDemo["ascend-per-dp.json/"+title] = ascendProfiler
	}
}

// TestComposeFleetFillsEveryDashboard starts the compose stack's simulators as docker-compose.yaml runs them (30×
// faster, on loopback), scrapes them with the built data source as the provisioned direct-mode data source does, and
// queries every panel of every shipped dashboard: the demo must show each one with data.
func TestComposeFleetFillsEveryDashboard(t *testing.T) {
	root := harness.RepoRoot(t)
	var c composeFile
	readYAML(t, filepath.Join(root, "docker-compose.yaml"), &c)
	var ds struct {
		Datasources []struct {
			UID      string `yaml:"uid"`
			JSONData struct {
				Endpoints []struct{ URL, Name string } `yaml:"endpoints"`
			} `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, "provisioning/datasources/datasources.yaml"), &ds)
	names := map[string]string{} // compose service → endpoint name in the direct data source
	for _, d := range ds.Datasources {
		if d.UID != "inferscope-direct" {
			continue
		}
		for _, e := range d.JSONData.Endpoints {
			host := strings.TrimPrefix(e.URL, "http://")
			host, _, _ = strings.Cut(host, ":")
			names[host] = e.Name
		}
	}

	var eps []map[string]string
	var services []string
	for name, s := range c.Services {
		bm, _ := s.Build.(map[string]any)
		if df, _ := bm["dockerfile"].(string); df != "pkg/cmd/vllm-sim/Dockerfile" {
			continue
		}
		services = append(services, name)
		args := []string{"-speed=30"}
		for _, a := range s.Command {
			if !strings.HasPrefix(a, "-addr=") {
				args = append(args, a)
			}
		}
		if names[name] == "" {
			t.Errorf("simulator service %s is not an endpoint of the inferscope-direct data source", name)
		}
		eps = append(eps, map[string]string{"url": simtest.Start(t, args...), "name": names[name]})
	}
	sort.Strings(services)
	if len(eps) == 0 {
		t.Fatal("docker-compose.yaml runs no simulator")
	}

	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "compose", JSONData: map[string]any{
		// The whole 2 s interval as the timeout: on a loaded machine a scrape of a simulator may take a second or more.
		"mode": "direct", "endpoints": eps, "scrapeInterval": "2s", "scrapeTimeout": "2s"}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := p.CheckHealth(ctx, pc); err != nil { // creates the instance, which starts scraping
		t.Fatal(err)
	}

	files, err := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	vars := map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "dp": ".*", "role": ".*", "timer": ".*", "datasource": "compose",
		"ttft_target": "0.5", "tpot_target": "0.05"}
	type panel struct {
		key     string
		targets []map[string]any
	}
	var panels []panel
	for _, f := range files {
		ps, err := dashtest.Panels(f, vars)
		if err != nil {
			t.Fatal(err)
		}
		for _, pn := range ps {
			panels = append(panels, panel{filepath.Base(f) + "/" + pn.Title, pn.Targets})
		}
	}
	hasData := func(pn panel) bool {
		now := time.Now()
		for _, model := range pn.targets {
			resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: model, From: now.Add(-10 * time.Minute), To: now, Interval: time.Second, MaxDataPoints: 43200})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range resp.Responses["A"].Frames {
				if f.Rows() > 0 {
					return true
				}
			}
		}
		return false
	}
	// Rates and quantiles need a few scrapes and a request or two finished: poll, bounded, until the empty set
	// stops shrinking.
	empty := map[string]bool{}
	for _, pn := range panels {
		empty[pn.key] = true
	}
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		for _, pn := range panels {
			if empty[pn.key] && hasData(pn) {
				delete(empty, pn.key)
			}
		}
		if len(empty) <= len(quietInDemo) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	var missing []string
	for k := range empty {
		if _, ok := quietInDemo[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("%s has no data in the compose demo (simulators: %s)", k, strings.Join(services, ", "))
	}
	for k := range quietInDemo {
		if !empty[k] {
			t.Errorf("%s is listed as quiet in the demo but has data: remove it from quietInDemo", k)
		}
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestDiscoveryOfAHundredThousandTargetsStaysWithinMemory: a direct-mode data source with maxMemoryMB 64 whose
// http_sd source answers 100 000 targets every second — four healthy vLLM servers first, then 99 996 loopback
// addresses nobody listens on — in the built plugin process. From a cold start, the first query already answers
// the healthy servers (it waits for the first discovery round and their first scrape) and says what was cut; the
// data source keeps 1000 endpoints, Save & test says so, the healthy servers' history stays whole over a dozen
// discovery rounds, and the process's peak resident memory stays within the memory limit the settings imply
// (maxMemoryMB plus the process's 256 MB allowance).
func TestDiscoveryOfAHundredThousandTargetsStaysWithinMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 s")
	}
	var healthy []string
	for range 4 {
		u := fixtureServer(t, "synthetic_v1_8engines_full.txt", 0)
		healthy = append(healthy, hostPort(u))
	}
	bulk := make([]string, 100_000-len(healthy))
	for i := range bulk {
		bulk[i] = fmt.Sprintf("127.%d.%d.%d:1", 1+i>>16, (i>>8)&255, i&255)
	}
	body, err := json.Marshal([]map[string]any{
		{"targets": healthy, "labels": map[string]string{"tier": "a-healthy"}},
		{"targets": bulk, "labels": map[string]string{"tier": "z-bulk"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	sd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(sd.Close)

	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "discovery-100k", JSONData: map[string]any{"mode": "direct",
		"scrapeInterval": "5s", "scrapeTimeout": "2s", "maxMemoryMB": 64, "discoveryInterval": "1s",
		"discovery": []map[string]any{{"type": "http", "name": "inventory", "url": sd.URL, "nameTemplate": "{tier}-{__address__}"}}}},
		harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	peakRSS := sampleRSS(t, p, 50*time.Millisecond)

	start := time.Now()
	q := harness.Query{RefID: "A", JSON: map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running", "endpoint": "a-healthy-.*"},
		From: start.Add(-time.Minute), To: start.Add(time.Minute), Interval: time.Second}
	resp, err := p.QueryData(ctx, t, pc, q)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	endpoints, notices := map[string]bool{}, ""
	for _, f := range r.Frames {
		for _, fd := range f.Fields {
			if ep := fd.Labels["endpoint"]; ep != "" {
				endpoints[ep] = true
			}
		}
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				notices += n.Text + "\n"
			}
		}
	}
	if len(endpoints) != len(healthy) {
		t.Errorf("the first query answers %d healthy endpoints, want %d: %v", len(endpoints), len(healthy), endpoints)
	}
	if !strings.Contains(notices, "inventory found more than 1000 targets") {
		t.Errorf("the first query's notices do not say what was cut: %.600s", notices)
	}

	// A dozen discovery rounds and a few scrape rounds of the 1000 kept endpoints.
	for asked.Load() < 12 && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	h, err := p.CheckHealth(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "4 of 1000 endpoint(s) reachable") ||
		!strings.Contains(h.Message, "inventory found more than 1000 targets") {
		t.Errorf("health: %s %.800s", h.Status, h.Message)
	}
	end := time.Now()
	q.From, q.To, q.MaxDataPoints = start, end, 10_000
	resp, err = p.QueryData(ctx, t, pc, q)
	if err != nil {
		t.Fatal(err)
	}
	// The healthy servers were scraped every 5 s throughout (the first scrape at the cold start).
	want := int(end.Sub(start)/(5*time.Second)) - 1
	points := map[string]int{}
	for _, f := range resp.Responses["A"].Frames {
		for _, fd := range f.Fields {
			if ep := fd.Labels["endpoint"]; ep != "" {
				for i := range fd.Len() {
					if v, ok := fd.ConcreteAt(i); ok && v != nil {
						points[ep]++
					}
				}
			}
		}
	}
	if len(points) != len(healthy) {
		t.Errorf("%d healthy endpoints over the run, want %d", len(points), len(healthy))
	}
	for ep, n := range points {
		if n < want {
			t.Errorf("%s: %d points over %s, want at least %d", ep, n, end.Sub(start).Round(time.Second), want)
		}
	}
	peak := peakRSS()
	t.Logf("peak plugin RSS %d MB over %d discovery rounds", peak>>20, asked.Load())
	if limit := int64(64+256) << 20; peak > limit {
		t.Errorf("plugin RSS peaked at %d MB, over the %d MB the settings imply", peak>>20, limit>>20)
	}
}

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestAgentAttackSubnormalPeaks sends an MFU query with peakTflops 5e-324 to the built data source and saves the
// data source with the same peak: both are refused (every MFU point would be +Inf, and an MFU alert would fire).
func TestAgentAttackSubnormalPeaks(t *testing.T) {
	url := fixtureServer(t, "synthetic_v1_8engines_full.txt", 0)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jsonData := map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": url, "name": "e"}}, "scrapeInterval": "2s"}
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "peaks", JSONData: jsonData}, harness.User("Viewer"))
	resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "mfu", "peakTflops": 5e-324}})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Responses["A"]; r.Error == nil || !strings.Contains(r.Error.Error(), "5e-324") {
		t.Errorf("an MFU query with peakTflops 5e-324: error %v, %d frames", r.Error, len(r.Frames))
	}
	bad := map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": url, "name": "e"}}, "peakMemoryTBps": 5e-324}
	hc := harness.DataSourceContext(t, harness.DataSource{UID: "peaks-settings", JSONData: bad}, harness.User("Admin"))
	res, err := p.CheckHealth(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURES subnormal peaks: query error %v; health %s: %.200s", resp.Responses["A"].Error, res.Status, res.Message)
	if !strings.Contains(res.Message, "peakMemoryTBps 5e-324 is outside") {
		t.Errorf("settings with peakMemoryTBps 5e-324: %s %s", res.Status, res.Message)
	}
}

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestScaleOutPartialAnswer drives the built data source against Thanos over two shards, one of whose Prometheus
// is down behind its sidecar: Save & test and a panel say the answer is partial and name the failed store; with
// "Refuse partial answers" (denyPartialResponse) both fail, saying so, and the panel gets no frames.
func TestScaleOutPartialAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Thanos")
	}
	promtest.EnginesOf(t, promtest.ThanosShards)
	base := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	prom := promtest.Start(t, promtest.Options{Engine: promtest.ThanosShards, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
	prom.StopStore(t, 1)
	store := prom.StoreAddr(t, 1)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, deny := range []bool{false, true} {
		t.Run(fmt.Sprintf("deny=%v", deny), func(t *testing.T) {
			pc := harness.DataSourceContext(t, harness.DataSource{UID: fmt.Sprintf("thanos-partial-%v", deny), URL: prom.URL,
				JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "5s", "denyPartialResponse": deny}}, harness.User("Viewer"))
			h, err := p.CheckHealth(ctx, pc)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: query.Query{QueryType: query.TypeQueue, Measure: "running"},
				From: base, To: base.Add(time.Minute), Interval: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Responses["A"]
			if !deny {
				want := promapi.PartialNotice([]string{store})
				if h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, want) {
					t.Errorf("health: %v %s; want OK naming %s as failed", h.Status, h.Message, store)
				}
				if r.Error != nil || !strings.Contains(noticeText(r.Frames), want) {
					t.Errorf("panel: error %v, notices %q; want the partial notice naming %s", r.Error, noticeText(r.Frames), store)
				}
				return
			}
			want := promapi.PartialRefusedMessage([]string{store})
			if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, want) {
				t.Errorf("health: %v %s; want an error saying %s failed", h.Status, h.Message, store)
			}
			if r.Error == nil || !strings.Contains(r.Error.Error(), want) || len(r.Frames) > 0 {
				t.Errorf("panel: error %v, %d frames; want only the error saying %s failed", r.Error, len(r.Frames), store)
			}
		})
	}
}

package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
)

// TestSaveAndTestPartialStore: Save & test through a Thanos querier one of whose two shards' Prometheus is down
// (its sidecar up) says the answer is partial and names the store; with "Refuse partial answers"
// (denyPartialResponse) it fails, saying why, rather than report the surviving shard's endpoints as the fleet; the
// same once the store's sidecar is gone too and Thanos Query leaves the store out without a warning. A panel query
// gets the same notice, or only the error.
func TestSaveAndTestPartialStore(t *testing.T) {
	promtest.EnginesOf(t, promtest.ThanosShards)
	base := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	prom := promtest.Start(t, promtest.Options{Engine: promtest.ThanosShards, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
	prom.StopStore(t, 1)
	store := prom.StoreAddr(t, 1)
	check := func(deny bool) (*backend.CheckHealthResult, backend.DataResponse) {
		js, _ := json.Marshal(map[string]any{"mode": "prometheus", "scrapeInterval": "5s", "denyPartialResponse": deny})
		d := instance(t, backend.DataSourceInstanceSettings{UID: fmt.Sprintf("thanos-partial-%v", deny), URL: prom.URL, JSONData: js})
		h, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A",
			JSON: []byte(`{"queryType":"queue","measure":"running"}`), Interval: 5 * time.Second, MaxDataPoints: 1000,
			TimeRange: backend.TimeRange{From: base, To: base.Add(time.Minute)}}}})
		if err != nil {
			t.Fatal(err)
		}
		return h, resp.Responses["A"]
	}
	partial := promapi.PartialNotice([]string{store})
	h, r := check(false)
	if h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, partial) {
		t.Errorf("Save & test, partial answers allowed: %v %s; want OK with the partial notice naming %s", h.Status, h.Message, store)
	}
	var notices []string
	for _, f := range r.Frames {
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				notices = append(notices, n.Text)
			}
		}
	}
	if r.Error != nil || !slices.Contains(notices, partial) {
		t.Errorf("panel, partial answers allowed: error %v, notices %q; want the partial notice naming %s", r.Error, notices, store)
	}
	refused := promapi.PartialRefusedMessage([]string{store})
	h, r = check(true)
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, refused) {
		t.Errorf("Save & test, partial answers refused: %v %s; want an error saying store %s failed", h.Status, h.Message, store)
	}
	if r.Error == nil || !strings.Contains(r.Error.Error(), refused) || len(r.Frames) > 0 {
		t.Errorf("panel, partial answers refused: error %v, %d frames; want only the error saying store %s failed", r.Error, len(r.Frames), store)
	}

	// With its sidecar gone too, Thanos Query drops the store from its answers without a warning; its list of stores
	// still names it.
	prom.StopSidecar(t, 1)
	client := &promapi.Client{BaseURL: prom.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}
	deadline := time.Now().Add(2 * time.Minute)
	for down, _ := client.DownStores(context.Background()); !slices.Equal(down, []string{store}); down, _ = client.DownStores(context.Background()) {
		if time.Now().After(deadline) {
			t.Fatalf("Thanos Query does not list %s as unhealthy after 2 minutes (down: %q)", store, down)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if h, _ := check(false); h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, partial) {
		t.Errorf("Save & test, store left out, partial answers allowed: %v %s; want OK with the partial notice naming %s", h.Status, h.Message, store)
	}
	if h, _ := check(true); h.Status != backend.HealthStatusError || !strings.Contains(h.Message, refused) {
		t.Errorf("Save & test, store left out, partial answers refused: %v %s; want an error saying store %s failed", h.Status, h.Message, store)
	}
}

// TestDenyPartialSettingLabel: the messages that tell the user to turn on (or that they turned on) refusing
// partial answers name the setting as the config editor labels it in English.
func TestDenyPartialSettingLabel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "src", "datasource", "locales", "en-US", "inferscope-vllm-datasource.json"))
	if err != nil {
		t.Fatal(err)
	}
	var locale struct {
		ConfigEditor map[string]struct {
			Label string `json:"label"`
		} `json:"config-editor"`
	}
	if err := json.Unmarshal(b, &locale); err != nil {
		t.Fatal(err)
	}
	if got := locale.ConfigEditor["deny-partial-response"].Label; got != promapi.DenyPartialSetting {
		t.Errorf("config editor labels the setting %q, the messages call it %q", got, promapi.DenyPartialSetting)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/datasource"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// dataSourceHTTP is the HTTP client the data source builds for prom: what the server needs on every request (Cortex's
// tenant) is set as a user sets it, as the data source's custom headers (httpHeaderName1 / httpHeaderValue1, the
// value a secret), and goes through the SDK's own settings parsing and header middleware.
func dataSourceHTTP(prom *promtest.Server) *http.Client {
	jsonData := map[string]any{"timeout": 20}
	secure := map[string]string{}
	i := 1
	for name, vals := range prom.Header {
		jsonData[fmt.Sprintf("httpHeaderName%d", i)] = name
		secure[fmt.Sprintf("httpHeaderValue%d", i)] = vals[0]
		i++
	}
	raw, err := json.Marshal(jsonData)
	if err == nil {
		// Type as the SDK sets it from the plugin ID: without it the client's metrics middleware logs an error for every
		// client built, which in a failing CI run crowded the failure out of what was shown.
		s := backend.DataSourceInstanceSettings{Type: datasource.PluginID, URL: prom.URL, JSONData: raw, DecryptedSecureJSONData: secure}
		var opts httpclient.Options
		if opts, err = s.HTTPClientOptions(context.Background()); err == nil {
			var c *http.Client
			if c, err = httpclient.New(opts); err == nil {
				return c
			}
		}
	}
	// Not reached with the settings above; a plain client makes the comparison fail on the missing header.
	return &http.Client{Timeout: 20 * time.Second}
}

// scaleOutLayout is the layout the scale-out engines are walked on: on step boundaries, where direct mode follows
// Prometheus 3's left-open windows, which Thanos 0.42 and Cortex 1.21 evaluate with (their PromQL engines are
// Prometheus 3's). One layout, not both, to keep CI's share of these servers small (Prometheus 3 is compared on
// both).
func scaleOutLayout(engines ...promtest.Engine) func(layout) []promtest.Engine {
	return func(l layout) []promtest.Engine {
		if l.offset != 0 {
			return nil
		}
		return engines
	}
}

// TestCatalogWalkScaleOut walks the catalog (see TestCatalogWalk) through Thanos over an HA pair with
// deduplication, through Thanos over two shards, and through a multi-tenant Cortex fed by remote write and queried
// under /prometheus with the tenant header set as the data source's custom header: every entry must give the
// numbers direct mode gives, within TestCatalogWalk's tolerances (1e-9 relative, 1e-6 for quantiles) — no new ones.
// On current VictoriaMetrics (1.151) it compares as TestCatalogWalkVictoriaMetrics does on 1.79 (rate-based means
// within 25 % or 0.05, everything else exact). One simulated run serves all four.
func TestCatalogWalkScaleOut(t *testing.T) {
	t.Parallel() // see doc.go
	if testing.Short() {
		t.Skip("starts Thanos and Cortex")
	}
	onEngines(t, catalogArgs(), 12*time.Minute, true,
		scaleOutLayout(promtest.ThanosHA, promtest.ThanosShards, promtest.Cortex, promtest.VictoriaMetrics151),
		func(t *testing.T, run *simRun, prom *promtest.Server) {
			if prom.Engine.IsVictoriaMetrics() {
				walkCatalogWith(t, run, prom, victoriaRates)
				return
			}
			walkCatalog(t, run, prom)
		})
}

// TestPrometheusModeMatchesDirectScaleOut is TestPrometheusModeMatchesDirectOnSameSamples through Thanos (HA pair
// with deduplication, and shards) and Cortex (tenant header), with its tolerances unchanged.
func TestPrometheusModeMatchesDirectScaleOut(t *testing.T) {
	t.Parallel() // see doc.go
	if testing.Short() {
		t.Skip("starts Thanos and Cortex")
	}
	onEngines(t, modeFleet, 15*time.Minute, true, scaleOutLayout(promtest.ThanosHA, promtest.ThanosShards, promtest.Cortex), prometheusModeMatchesDirect)
}

// TestHAPairWithoutDedup queries the HA pair on the same samples as direct mode: through a querier without
// --query.replica-label every answer carries the notice naming the replica label, and its sums are twice direct
// mode's; through the deduplicating querier there is no such notice and the numbers equal direct mode's (1e-9).
func TestHAPairWithoutDedup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Thanos")
	}
	promtest.EnginesOf(t, promtest.ThanosHA)
	fleet := map[string][]string{"v1": {"-flavor=vllm-v1", "-engines=2", "-qps=20", "-seed=31"}}
	run := newSimRunAt(t, fleet, 5*time.Minute, 5*time.Second, 0)
	om := strings.ReplaceAll(run.openMetrics(), `{endpoint="`, `{instance="`)
	notice := promapi.ReplicaNotice(promtest.ReplicaLabel)
	queries := []query.Query{
		{QueryType: query.TypeThroughput, Measure: "generation_tokens"},
		{QueryType: query.TypeQueue, Measure: "running"},
	}
	for _, dedup := range []bool{true, false} {
		t.Run(fmt.Sprintf("dedup=%v", dedup), func(t *testing.T) {
			prom := promtest.Start(t, promtest.Options{Engine: promtest.ThanosHA, OpenMetrics: om, NoDedup: !dedup})
			modes := newBothModes(run, prom)
			for _, q := range queries {
				direct, ans := modes.eval(t, q)
				if got := slices.Contains(ans.Result.Notices, notice); got == dedup {
					t.Errorf("%s/%s: replica notice %v, want %v (notices %q)", q.QueryType, q.Measure, got, !dedup, ans.Result.Notices)
				}
				if dedup {
					if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 1e-9, nil); n == 0 {
						t.Errorf("%s/%s: nothing compared", q.QueryType, q.Measure)
					}
					continue
				}
				// Without deduplication every sum counts both replicas.
				twice := func(_ string, d, p float64) bool { return math.Abs(p-2*d) <= 1e-9*math.Abs(2*d) }
				if n := compareOutputs(t, direct.Outputs, ans.Result.Outputs, 0, twice); n == 0 {
					t.Errorf("%s/%s: nothing compared", q.QueryType, q.Measure)
				}
			}
		})
	}
}

// TestScaleOutNotices drives the built data source (Save & test and a panel query) against live simulators
// scraped by the scale-out engines: Thanos over the HA pair without deduplication names the replica label in
// the health check and on the frame, and with deduplication does not; Cortex, fed by Prometheus remote_write,
// says to set X-Scope-OrgID when the tenant header is missing and answers when it is set as a custom header,
// whose value appears in no message.
func TestScaleOutNotices(t *testing.T) {
	t.Parallel() // see doc.go
	if testing.Short() {
		t.Skip("starts simulators, Thanos and Cortex")
	}
	promtest.EnginesOf(t, promtest.ThanosHA, promtest.Cortex)
	u := startSim(t, "-flavor=vllm-v1", "-engines=2", "-qps=10", "-speed=4", "-seed=7")
	targets := []promtest.Target{{Addr: hostPort(u)}}
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	notice := promapi.ReplicaNotice(promtest.ReplicaLabel)
	// Counted 2 s back, so that the panel's range (ending now, at a whole second) holds every replica's scrapes.
	running := `count(vllm:num_requests_running offset 2s)`
	panel := func(t *testing.T, pc *pluginv2.PluginContext) (string, string) {
		t.Helper()
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: query.Query{QueryType: query.TypeQueue, Measure: "running"},
			From: now.Add(-time.Minute), To: now, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Responses["A"]
		errText := ""
		if r.Error != nil {
			errText = r.Error.Error()
		}
		return noticeText(r.Frames), errText
	}

	for _, dedup := range []bool{false, true} {
		t.Run(fmt.Sprintf("thanos-ha/dedup=%v", dedup), func(t *testing.T) {
			prom := promtest.Start(t, promtest.Options{Engine: promtest.ThanosHA, Targets: targets, NoDedup: !dedup})
			want := 4.0 // 2 engines, twice
			if dedup {
				want = 2
			}
			prom.WaitFor(t, running, 2*time.Minute, func(v model.Vector) bool { return len(v) == 1 && float64(v[0].Value) == want })
			pc := harness.DataSourceContext(t, harness.DataSource{UID: fmt.Sprintf("thanos-%v", dedup), URL: prom.URL,
				JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s"}}, harness.User("Viewer"))
			h, err := p.CheckHealth(ctx, pc)
			if err != nil {
				t.Fatal(err)
			}
			if h.Status != backend.HealthStatusOk {
				t.Fatalf("health: %v %s", h.Status, h.Message)
			}
			if got := strings.Contains(h.Message, notice); got == dedup {
				t.Errorf("health names the replica label: %v, want %v: %s", got, !dedup, h.Message)
			}
			notices, errText := panel(t, pc)
			if errText != "" {
				t.Fatalf("panel: %s", errText)
			}
			if got := strings.Contains(notices, notice); got == dedup {
				t.Errorf("frame notice names the replica label: %v, want %v: %s", got, !dedup, notices)
			}
		})
	}

	t.Run("cortex", func(t *testing.T) {
		prom := promtest.Start(t, promtest.Options{Engine: promtest.Cortex, Targets: targets})
		prom.WaitFor(t, running, 2*time.Minute, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 2 })
		without := harness.DataSourceContext(t, harness.DataSource{UID: "cortex-no-tenant", URL: prom.URL,
			JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s"}}, harness.User("Viewer"))
		h, err := p.CheckHealth(ctx, without)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, promapi.NoTenantMessage) {
			t.Errorf("health without a tenant: %v %s, want the X-Scope-OrgID hint", h.Status, h.Message)
		}
		if _, errText := panel(t, without); !strings.Contains(errText, "X-Scope-OrgID") {
			t.Errorf("panel without a tenant: %q, want the X-Scope-OrgID hint", errText)
		}
		with := harness.DataSourceContext(t, harness.DataSource{UID: "cortex-tenant", URL: prom.URL,
			JSONData: map[string]any{"mode": "prometheus", "scrapeInterval": "1s", "httpHeaderName1": promtest.TenantHeader},
			Secure:   map[string]string{"httpHeaderValue1": promtest.Tenant}}, harness.User("Viewer"))
		h, err = p.CheckHealth(ctx, with)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, "1 endpoint(s)") {
			t.Errorf("health with the tenant header: %v %s", h.Status, h.Message)
		}
		notices, errText := panel(t, with)
		if errText != "" {
			t.Fatalf("panel with the tenant header: %s", errText)
		}
		for _, text := range []string{h.Message, notices} {
			if strings.Contains(text, promtest.Tenant) {
				t.Errorf("the tenant header's value is in a message: %s", text)
			}
		}
	})
}

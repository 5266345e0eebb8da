package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	promclient "github.com/prometheus/client_golang/prometheus"
)

// TestScrapesReuseConnectionsAcrossAFleet: direct mode scrapes every endpoint in turn, so beyond the SDK's 100 idle
// connections each scrape used to dial (and, in production, handshake TLS) again. Two rounds over 150 endpoints now
// open one connection per endpoint.
func TestScrapesReuseConnectionsAcrossAFleet(t *testing.T) {
	const n = 150
	var dials atomic.Int64
	var endpoints []map[string]string
	for i := range n {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} %d\n", i)
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				dials.Add(1)
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		endpoints = append(endpoints, map[string]string{"url": srv.URL + "/metrics", "name": fmt.Sprintf("e%03d", i)})
	}
	jd, _ := json.Marshal(map[string]any{"mode": "direct", "endpoints": endpoints, "scrapeInterval": "1h"})
	inst, err := NewInstance(context.Background(), backend.DataSourceInstanceSettings{UID: "conns", JSONData: jd})
	if err != nil {
		t.Fatal(err)
	}
	d := inst.(*Datasource)
	defer d.Dispose()
	dr := d.mode.(*direct)
	for range 2 {
		dr.scraper.ScrapeAll(context.Background())
	}
	for _, st := range dr.scraper.Statuses() {
		if !st.Up {
			t.Fatalf("%s: %s", st.Name, st.Error)
		}
	}
	if got := dials.Load(); got > n+n/10 {
		t.Errorf("two scrape rounds over %d endpoints opened %d connections; want about one per endpoint", n, got)
	}
}

// TestClientsBindRequestMetricsOnce: the SDK's middleware that records a data source's outgoing requests built its
// instrumentation again at every request, 60 µs and two hundred allocations each, which at 256 endpoints was 5 % of
// scraping's CPU. The clients both modes build record the same metrics with it bound once (pkg/httpmetrics).
func TestClientsBindRequestMetricsOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\n")
	}))
	t.Cleanup(srv.Close)
	// A type of its own, so that no other client's requests are counted with this one's.
	s := backend.DataSourceInstanceSettings{UID: "metrics", Type: "bound-metrics-test"}
	st := Settings{Mode: ModeDirect, Endpoints: []Endpoint{{URL: srv.URL + "/metrics"}}}
	opts, err := httpClientOptions(context.Background(), s, st, st.egress(false))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := httpclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Middlewares = nil // the SDK's defaults
	sdk, err := httpclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *http.Client) {
		res, err := c.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
	}
	per := func(c *http.Client) float64 {
		get(c)
		return testing.AllocsPerRun(20, func() { get(c) })
	}
	before := requestsRecorded(t, "boundmetricstest")
	a, b := per(sdk), per(ours)
	t.Logf("allocations a request: %.0f through the SDK's middlewares, %.0f through the data source's", a, b)
	if b > 0.75*a {
		t.Errorf("a request allocates %.0f times through the data source's client, %.0f through the SDK's: its metrics are bound per request", b, a)
	}
	// Both clients recorded every request: 2 × (1 + 21) (AllocsPerRun runs once more than asked).
	if got := requestsRecorded(t, "boundmetricstest") - before; got != 44 {
		t.Errorf("%v requests recorded in plugins_datasource_request_total, want 44", got)
	}
}

// requestsRecorded sums plugins_datasource_request_total of one data source type in the default registry.
func requestsRecorded(t *testing.T, dsType string) float64 {
	t.Helper()
	families, err := promclient.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != "plugins_datasource_request_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "datasource_type" && l.GetValue() == dsType {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

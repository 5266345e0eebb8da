package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
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

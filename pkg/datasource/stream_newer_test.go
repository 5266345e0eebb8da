package datasource

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

// TestStreamSendsOnlyNewerPoints: a scrape round that brings nothing newer (the endpoint failed or timed out, as
// on a loaded machine) sends no frame; the stream used to send the same newest point again, a duplicate row in
// live panels (pkg/e2e's stream test saw "stream did not move forward" beside a CPU hog).
func TestStreamSendsOnlyNewerPoints(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	var served atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if served.Add(1) > 2 { // two good scrapes, then the endpoint fails
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(body)
	}))
	defer ts.Close()
	store := history.New(history.Options{})
	sc := scraper.New([]scraper.Target{{Name: "w", URL: ts.URL + "/metrics"}}, store,
		scraper.Options{Interval: time.Second, Timeout: time.Second, Client: ts.Client()})
	d := &Datasource{uid: "ds", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(time.Second), ScrapeTimeout: Duration(time.Second)},
		mode: &direct{store: store, scraper: sc, engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: time.Second}}}
	rounds, unsubscribe := sc.Subscribe()
	defer unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sender := &countingSender{}
	path := strings.TrimPrefix(d.streams.register("ds", query.Query{QueryType: query.TypeQueue, Measure: "running"}), "ds/ds/")
	done := make(chan error, 1)
	go func() {
		done <- d.RunStream(ctx, &backend.RunStreamRequest{Path: path}, backend.NewStreamSender(sender))
	}()
	sc.Start()
	defer sc.Stop()
	for n := 0; n < 6; n++ { // six rounds: two with data, four failing
		select {
		case <-rounds:
		case <-ctx.Done():
			t.Fatalf("only %d scrape rounds in 30 s", n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := sender.count(); got == 0 || got > 2 {
		t.Errorf("the stream sent %d frames over 2 scrapes with data and 4 failed ones, want 1 or 2", got)
	}
}

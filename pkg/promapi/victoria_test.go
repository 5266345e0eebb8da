package promapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// victoriaLike answers as VictoriaMetrics does: its X-Server-Hostname header, an empty build info, and one
// counter for every query.
func victoriaLike(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Server-Hostname", "vm")
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/label/__name__/values":
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:generation_tokens_total"]}`))
		case "/api/v1/label/job/values":
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm"]}`))
		case "/api/v1/label/instance/values":
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm-0:8000"]}`))
		default:
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestVictoriaMetricsDifferencesAreNoticed checks the two ways VictoriaMetrics answers differently from
// Prometheus are said on the queries they affect (#12 items 5 and 6): rates without extrapolation, and the
// newest 30 s left out by its default latency offset.
func TestVictoriaMetricsDifferencesAreNoticed(t *testing.T) {
	srv := victoriaLike(t)
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	ev := &Evaluator{Client: c, Discovery: &Discovery{Client: c}, ScrapeInterval: 5 * time.Second}
	now := time.Now()
	cases := []struct {
		name   string
		q      query.Query
		to     time.Time
		notice []string
	}{
		{"rate, ending now", query.Query{QueryType: query.TypeThroughput, Measure: "generation_tokens"}, now, []string{VictoriaRateNotice, VictoriaRecentNotice}},
		{"rate, ending an hour ago", query.Query{QueryType: query.TypeThroughput, Measure: "generation_tokens"}, now.Add(-time.Hour), []string{VictoriaRateNotice}},
		{"gauge, ending an hour ago", query.Query{QueryType: query.TypeQueue, Measure: "running"}, now.Add(-time.Hour), nil},
		{"raw quantiles", query.Query{QueryType: query.TypeRaw, Metric: "vllm:generation_tokens_total", Histogram: query.HistogramQuantiles}, now.Add(-time.Hour), []string{VictoriaRateNotice}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := ev.Eval(context.Background(), tc.q, query.Request{From: tc.to.Add(-10 * time.Minute), To: tc.to, Interval: 15 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{VictoriaRateNotice, VictoriaRecentNotice} {
				if want, got := slices.Contains(tc.notice, n), slices.Contains(ans.Result.Notices, n); want != got {
					t.Errorf("notice %.40q: got %v, want %v (%v)", n, got, want, ans.Result.Notices)
				}
			}
		})
	}
	if !c.VictoriaMetrics() {
		t.Error("the server was not recognised as VictoriaMetrics")
	}
	// A Prometheus never gets them.
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":["vllm:generation_tokens_total"]}`))
	}))
	defer prom.Close()
	pc := &Client{BaseURL: prom.URL, HTTP: prom.Client()}
	if _, _, _ = pc.LabelValues(context.Background(), "job", nil, now.Add(-time.Hour), now); pc.VictoriaMetrics() {
		t.Error("a server without the header was taken for VictoriaMetrics")
	}
}

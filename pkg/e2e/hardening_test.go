package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// fixtureServer serves a real /metrics capture after delay, on loopback.
func fixtureServer(t *testing.T, name string, delay time.Duration) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func valueCount(r backend.DataResponse) int {
	n := 0
	for _, f := range r.Frames {
		if len(f.Fields) > 1 {
			n += f.Fields[1].Len()
		}
	}
	return n
}

// TestColdStartFirstQueryHasData: Grafana creates the instance on the first request (and after every settings
// save); that first query used to answer empty because no scrape had finished yet.
func TestColdStartFirstQueryHasData(t *testing.T) {
	url := fixtureServer(t, "synthetic_v1_8engines_full.txt", time.Second) // a scrape takes a second to answer
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "cold-start",
		JSONData: map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": url, "name": "slow"}},
			// A timeout of seconds beyond the endpoint's one: the test is about the first query waiting, not timeouts.
			"scrapeInterval": "4s", "scrapeTimeout": "3s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now()
	resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "kv_cache_usage"},
		From: now.Add(-5 * time.Minute), To: now.Add(5 * time.Second), Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	if n := valueCount(r); n == 0 {
		t.Fatalf("the first query after the instance started has no values; notices: %s", noticeText(r.Frames))
	}
}

// TestViewerQueriesAreBounded drives the attacks of the hardening issue through the executable: a 100-year range
// at 1e9 points, 10,000 quantiles, and a large query whose JSON must not be copied into every frame.
func TestViewerQueriesAreBounded(t *testing.T) {
	url := fixtureServer(t, "synthetic_v1_8engines_full.txt", 0)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "bounded",
		JSONData: map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": url, "name": "v1"}},
			"scrapeInterval": "1s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := p.CheckHealth(ctx, pc); err != nil {
		t.Fatal(err)
	}
	// A few scrapes before the last step (queries below use 1 s steps): wait until the running gauge has two.
	poll(ctx, func() bool {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "queue", "measure": "running", "engine": "0"},
			From: now.Add(-time.Minute), To: now, Interval: time.Second})
		return err == nil && valueCount(resp.Responses["A"]) >= 2
	})
	now := time.Now()
	ask := func(t *testing.T, model map[string]any, from time.Time, maxPoints int64) backend.DataResponse {
		t.Helper()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: model, From: from, To: now, Interval: time.Second, MaxDataPoints: maxPoints})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Responses["A"]
	}

	t.Run("100 years at 1e9 points", func(t *testing.T) {
		r := ask(t, map[string]any{"queryType": "queue"}, now.AddDate(-100, 0, 0), 1e9)
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if !strings.Contains(noticeText(r.Frames), "a series holds at most 11000 points") {
			t.Errorf("no notice about the raised step: %q", noticeText(r.Frames))
		}
		for _, f := range r.Frames {
			if f.Rows() > query.MaxPointsPerSeries {
				t.Errorf("frame %s has %d rows", f.Name, f.Rows())
			}
		}
	})
	t.Run("10000 quantiles", func(t *testing.T) {
		qs := make([]float64, 10_000)
		for i := range qs {
			qs[i] = float64(i) / 10_000
		}
		r := ask(t, map[string]any{"queryType": "latency", "quantiles": qs}, now.Add(-time.Hour), 1000)
		if r.Error == nil || !strings.Contains(r.Error.Error(), "at most 32 quantiles") {
			t.Fatalf("error = %v, want the quantile limit", r.Error)
		}
	})
	t.Run("executed query string once and small", func(t *testing.T) {
		r := ask(t, map[string]any{"queryType": "queue", "engine": strings.Repeat("(0|1|2|3)|", 3000) + "0"}, now.Add(-5*time.Minute), 1000)
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if len(r.Frames) < 8 {
			t.Fatalf("want queue series per engine, got %d frames", len(r.Frames))
		}
		if m := r.Frames[0].Meta; m == nil || m.ExecutedQueryString == "" || len(m.ExecutedQueryString) > query.MaxExecutedQueryBytes {
			t.Errorf("first frame's meta %+v, want an executed query string of at most %d bytes", m, query.MaxExecutedQueryBytes)
		}
		for _, f := range r.Frames[1:] {
			if f.Meta != nil && f.Meta.ExecutedQueryString != "" {
				t.Fatalf("frame %s carries the executed query again", f.Name)
			}
		}
	})
	t.Run("still answering", func(t *testing.T) {
		if r := ask(t, map[string]any{"queryType": "raw", "metric": "up"}, now.Add(-time.Minute), 100); r.Error != nil || valueCount(r) == 0 {
			t.Fatalf("after the attacks: %v, %d values", r.Error, valueCount(r))
		}
	})
}

// TestDiagnosisNamesDownEndpoints: with endpoints down, the diagnosis used to show only the healthy ones' findings
// and drop the notices saying which endpoints failed.
func TestDiagnosisNamesDownEndpoints(t *testing.T) {
	eps := append([]map[string]string{{"name": "v1", "url": fixtureServer(t, "synthetic_v1_8engines_full.txt", 0)}}, brokenEndpoints(t)[:2]...)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "diagnosis-down",
		JSONData: map[string]any{"mode": "direct", "endpoints": eps, "scrapeInterval": "1s"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := p.CheckHealth(ctx, pc); err != nil {
		t.Fatal(err)
	}
	// Steps are aligned down to the second: ask until a scrape has fallen before the last one and the findings say
	// which endpoints are down, then check the last answer.
	var r backend.DataResponse
	var f *data.Frame
	down := map[string]bool{}
	poll(ctx, func() bool {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "diagnosis"},
			From: now.Add(-time.Hour), To: now, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r = resp.Responses["A"]
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		f = firstFrame(t, r)
		down = map[string]bool{}
		for i := 0; i < f.Rows(); i++ {
			if strings.HasPrefix(stringAt(t, f, 1, i), "endpoint down") {
				down[stringAt(t, f, 2, i)] = true
			}
		}
		return down["stopped"] && down["garbage"]
	})
	if !down["stopped"] || !down["garbage"] || down["v1"] {
		t.Errorf("endpoint-down findings for %v, want stopped and garbage; frame:\n%s", down, frameTable(f))
	}
	notices := noticeText(r.Frames)
	for _, want := range []string{"endpoint stopped", "endpoint garbage"} {
		if !strings.Contains(notices, want) {
			t.Errorf("notices lack %q: %q", want, notices)
		}
	}
}

func frameTable(f *data.Frame) string {
	s, err := f.StringTable(20, 8)
	if err != nil {
		return err.Error()
	}
	return s
}

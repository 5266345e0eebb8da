package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// hugePrometheus answers every query with a million series (~170 MB), written as it goes, and stops when the
// client hangs up; label values name one vLLM metric so queries are generated.
func hugePrometheus(t *testing.T, series int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/v1/label/") {
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running"]}`))
			return
		}
		if r.URL.Path == "/api/v1/status/buildinfo" {
			_, _ = w.Write([]byte(`{"status":"success","data":{"version":"2.42.0"}}`))
			return
		}
		_ = r.ParseForm()
		bw := bufio.NewWriterSize(w, 1<<16)
		defer bw.Flush()
		kind, sample := "matrix", `"values":[[1700000000,"1"],[1700000015,"2"]]`
		if r.URL.Path == "/api/v1/query" {
			kind, sample = "vector", `"value":[1700000000,"1"]`
		}
		fmt.Fprintf(bw, `{"status":"success","data":{"resultType":%q,"result":[`, kind)
		for i := 0; i < series; i++ {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			if _, err := fmt.Fprintf(bw, `{"metric":{"__name__":"vllm:num_requests_running","instance":"host-%d:8000","engine":"%d","model_name":"meta-llama/Llama-3.1-8B-Instruct"},%s}`, i/8, i%8, sample); err != nil {
				return // the client hung up
			}
		}
		_, _ = bw.WriteString(`]},"warnings":["a warning after the data"]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestPrometheusModeBoundsHugeAnswers (item 4): a million-series answer used to drive a raw query past 4 GB and
// make a 40 MB health message. Now the answer is cut at MaxSeriesPerQuery with a notice, decoded as it streams,
// and the health message stays short.
func TestPrometheusModeBoundsHugeAnswers(t *testing.T) {
	srv := hugePrometheus(t, 1_000_000)
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{UID: "huge-prom", URL: srv.URL, JSONData: map[string]any{"mode": "prometheus"}}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before := p.RSS()

	h, err := p.CheckHealth(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Message) > 8<<10 {
		t.Errorf("health message is %d bytes", len(h.Message))
	}
	if !strings.Contains(h.Message, "… and") || !strings.Contains(h.Message, "counted from the first 10000 series only") {
		t.Errorf("health message does not say it is cut: %.500s", h.Message)
	}
	now := time.Now()
	resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "raw", "metric": "vllm:num_requests_running"},
		From: now.Add(-time.Hour), To: now, Interval: 15 * time.Second, MaxDataPoints: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	if len(r.Frames) > query.MaxSeriesPerQuery {
		t.Errorf("%d frames", len(r.Frames))
	}
	if !strings.Contains(noticeText(r.Frames), "only the first") {
		t.Errorf("no truncation notice: %q", noticeText(r.Frames))
	}
	if rss := p.RSS(); rss > before+512<<20 {
		t.Errorf("plugin RSS grew from %d MB to %d MB", before>>20, rss>>20)
	} else {
		t.Logf("plugin RSS %d MB → %d MB", before>>20, rss>>20)
	}
}

package promapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestRangeQueriesStayWithinPrometheusPointLimit: a 100-year range at 1e9 points must reach the server as a range
// query of at most 11,000 steps (Prometheus refuses more), with the raised step in a notice.
func TestRangeQueriesStayWithinPrometheusPointLimit(t *testing.T) {
	var (
		mu    sync.Mutex // the evaluator may send a query's expressions concurrently
		steps []float64
	)
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/v1/query_range" {
			_ = r.ParseForm()
			start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
			end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
			step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
			mu.Lock()
			steps = append(steps, (end-start)/step+1)
			mu.Unlock()
		}
		return false
	})
	now := time.Unix(1_790_000_000, 0)
	ans, err := evaluator(srv.URL, time.Second).Eval(context.Background(), query.Query{QueryType: query.TypeQueue, Measure: "running"},
		query.Request{From: now.AddDate(-100, 0, 0), To: now, Interval: time.Second, MaxDataPoints: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(steps) == 0 {
		t.Fatal("no range query reached the server")
	}
	for _, n := range steps {
		if !(n >= 1 && n <= query.MaxPointsPerSeries) {
			t.Errorf("range query of %.0f steps sent", n)
		}
	}
	if !strings.Contains(strings.Join(ans.Result.Notices, "\n"), "at most 11000 points") {
		t.Errorf("notices %q lack the raised step", ans.Result.Notices)
	}
}

// TestScoreSelectsOneExpression (issue 12, item 1): the DP-balance generator ignored Score and returned every load
// and score; the shipped balance panels and the DP-imbalance alert rule read one score.
func TestScoreSelectsOneExpression(t *testing.T) {
	names := Names{"vllm:num_requests_running": true, "vllm:num_requests_waiting": true}
	for _, score := range query.BalanceScores {
		exprs, err := Generate(query.Query{QueryType: query.TypeDPBalance, Measure: "running_waiting", Score: score}, names, nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(exprs) != 1 || exprs[0].Measure != score {
			t.Errorf("score %s: %d expressions %v", score, len(exprs), exprs)
		}
	}
}

// TestEmptyLabelsAreAbsent (issue 12, item 4): VictoriaMetrics' label_replace writes the target label as "" when
// the regex does not match; frames then carried model_name="" and no longer matched direct mode's.
func TestEmptyLabelsAreAbsent(t *testing.T) {
	m := model.Matrix{{Metric: model.Metric{"instance": "a:8000", "engine": "", "model_name": "", "finished_reason": "stop"},
		Values: []model.SamplePair{{Timestamp: 1_700_000_000_000, Value: 1}}}}
	outs := Outputs(query.Query{QueryType: query.TypeRaw, Metric: "x"}, Expr{Measure: "x"}, m)
	if len(outs) != 1 || len(outs[0].Labels) != 2 || outs[0].Labels["endpoint"] != "a:8000" || outs[0].Labels["finished_reason"] != "stop" {
		t.Fatalf("labels %v", outs[0].Labels)
	}
}

// TestVictoriaMetrics422IsInvalidPromQL (issue 12, item 6): VictoriaMetrics answers a rejected expression with 422.
func TestVictoriaMetrics422IsInvalidPromQL(t *testing.T) {
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/v1/query_range" {
			promErr(w, http.StatusUnprocessableEntity, "422", `cannot parse "rate(x[": unexpected end of stream`)
			return true
		}
		return false
	})
	now := time.Unix(1_790_000_000, 0)
	_, err := evaluator(srv.URL, time.Second).EvalPromQL(context.Background(), query.Query{QueryType: query.TypePromQL, Expr: "rate(x["},
		query.Request{From: now.Add(-time.Hour), To: now, Interval: 15 * time.Second})
	if err == nil || !strings.HasPrefix(err.Error(), "invalid PromQL: cannot parse") {
		t.Fatalf("err = %v", err)
	}
}

package query

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

func pts(start int64, vals ...float64) []derive.Point {
	out := make([]derive.Point, len(vals))
	for i, v := range vals {
		out[i] = derive.Point{T: start + int64(i)*5000, V: v}
	}
	return out
}

func evalOne(t *testing.T, src *memSource, q Query, from, to int64) *Result {
	t.Helper()
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	res, err := eng.Eval(context.Background(), q, Request{From: time.UnixMilli(from), To: time.UnixMilli(to), Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPIDFolding covers vllm-project/vllm#28792: with several API-server processes, kv_cache_usage_perc comes
// once per pid; the engine reports one series per engine, the larger value.
func TestPIDFolding(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:kv_cache_usage_perc", map[string]string{"engine": "0", "model_name": "m", "pid": "101"}, pts(t0, 0.2, 0.3, 0.4))
	src.add("a", "vllm:kv_cache_usage_perc", map[string]string{"engine": "0", "model_name": "m", "pid": "102"}, pts(t0, 0.5, 0.1, derive.StaleNaN))
	res := evalOne(t, src, Query{QueryType: TypeKVCacheUsage}, t0, t0+10000)
	if len(res.Outputs) != 1 {
		t.Fatalf("want one series, got %+v", res.Outputs)
	}
	o := res.Outputs[0]
	if _, ok := o.Labels["pid"]; ok {
		t.Fatal("pid label leaked into the output")
	}
	want := []float64{50, 30, 40} // max per scrape; a stale marker from one pid does not hide the other's value
	for i, p := range o.Points {
		if math.Abs(p.V-want[i]) > 1e-9 {
			t.Fatalf("point %d = %v, want %v (all %v)", i, p.V, want[i], o.Points)
		}
	}
}

func TestStalenessStopsGauges(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "0"}, append(pts(t0, 3, 4), derive.Point{T: t0 + 10000, V: derive.StaleNaN}))
	res := evalOne(t, src, Query{QueryType: TypeQueue, Measure: "running"}, t0, t0+60000)
	if got := len(res.Outputs[0].Points); got != 2 {
		t.Fatalf("a down endpoint's gauge went on for %d points, want 2: %v", got, res.Outputs[0].Points)
	}
}

func TestRetentionNotice(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "0"}, pts(t0, 1, 2, 3))
	res := evalOne(t, src, Query{QueryType: TypeQueue, Measure: "running"}, t0-3_600_000, t0+10000)
	if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "history is held from") {
		t.Fatalf("notices = %v", res.Notices)
	}
	res = evalOne(t, src, Query{QueryType: TypeQueue, Measure: "running"}, t0, t0+10000)
	if len(res.Notices) != 0 {
		t.Fatalf("unexpected notices %v", res.Notices)
	}
}

func TestValidation(t *testing.T) {
	cases := map[string]string{
		`{}`:                                                  "queryType is missing",
		`{"queryType":"nope"}`:                                "queryType \"nope\" is unknown",
		`{"queryType":"queue","measure":"ttft"}`:              "measure \"ttft\" is not one of",
		`{"queryType":"queue","engine":"("}`:                  "engine \"(\" is not a valid regular expression",
		`{"queryType":"latency","quantiles":[2]}`:             "quantile 2 is outside 0–1",
		`{"queryType":"raw"}`:                                 "raw queries need a metric name",
		`{"queryType":"capacity","headroom":1}`:               "headroom 1 is outside 0–0.9",
		`{"queryType":"throughput","window":"soon"}`:          "window \"soon\" is not a positive duration",
		`{"queryType":"queue","groupBy":"rack"}`:              "groupBy \"rack\" is unknown",
		`{"queryType":"raw","metric":"x","histogram":"heat"}`: "histogram \"heat\" is unknown",
		`{"queryType":`:                                       "query JSON is invalid",
	}
	for raw, want := range cases {
		if _, err := Parse([]byte(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want error containing %q", raw, err, want)
		}
	}
	q, err := Parse([]byte(`{"queryType":"latency"}`))
	if err != nil || q.Metric != "ttft" || len(q.Quantiles) != 4 || q.GroupBy != GroupEngine {
		t.Fatalf("defaults not applied: %+v %v", q, err)
	}
}

func TestUnknownLatencyMetric(t *testing.T) {
	src := &memSource{}
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	_, err := eng.Eval(context.Background(), Query{QueryType: TypeLatency, Metric: "timer:vllm:foo"}, Request{From: time.Unix(0, 0), To: time.Unix(60, 0)})
	if err == nil || !strings.Contains(err.Error(), "not a vllm_profiling_* histogram") {
		t.Fatalf("err = %v", err)
	}
}

func TestLegend(t *testing.T) {
	if got := Legend("{{endpoint}} / engine {{ engine }} {{missing}}", map[string]string{"endpoint": "a", "engine": "3"}); got != "a / engine 3 " {
		t.Fatalf("Legend = %q", got)
	}
}

func TestDPBalanceScoreOnly(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "0"}, pts(t0, 9, 9))
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "1"}, pts(t0, 0, 0))
	src.add("a", "vllm:num_requests_waiting", map[string]string{"engine": "0"}, pts(t0, 4, 4))
	src.add("a", "vllm:num_requests_waiting", map[string]string{"engine": "1"}, pts(t0, 0, 0))
	res := evalOne(t, src, Query{QueryType: TypeDPBalance, Score: "idle_while_waiting", GroupBy: GroupEndpoint}, t0, t0+5000)
	if len(res.Outputs) != 1 || res.Outputs[0].Measure != "idle_while_waiting" || res.Outputs[0].Labels["endpoint"] != "a" {
		t.Fatalf("outputs = %+v", res.Outputs)
	}
	if v := res.Outputs[0].Points[0].V; v != 1 {
		t.Fatalf("idle ranks while another queues = %v, want 1", v)
	}
	res = evalOne(t, src, Query{QueryType: TypeDPBalance, Score: "max_over_mean"}, t0, t0+5000)
	if len(res.Outputs) != 1 || res.Outputs[0].Points[0].V != 2 {
		t.Fatalf("max/mean = %+v, want 2", res.Outputs)
	}
	if _, err := Parse([]byte(`{"queryType":"queue","score":"cv"}`)); err == nil {
		t.Fatal("score accepted on a queue query")
	}
}

// TestEnginesLeaveRolesToTheDataSource: a query that needs endpoints' roles is refused by an engine with an error
// saying who answers it, instead of being answered as if no role had been asked for.
func TestEnginesLeaveRolesToTheDataSource(t *testing.T) {
	eng := &Engine{Source: &memSource{}, ScrapeInterval: 5 * time.Second}
	for _, q := range []Query{
		{QueryType: TypeQueue, Role: "decode"},
		{QueryType: TypeQueue, GroupBy: GroupRole},
		{QueryType: TypeKVTransfer, Measure: "pd_ttft"},
	} {
		_, err := eng.Eval(context.Background(), q, Request{From: time.Unix(0, 0), To: time.Unix(600, 0)})
		var invalid *InvalidError
		if err == nil || !strings.Contains(err.Error(), "answered by the data source") || !errors.As(err, &invalid) {
			t.Errorf("%+v: %v", q, err)
		}
	}
}

package query

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// TestResolutionCapsPointsPerSeries: a Viewer's 100-year range with maxDataPoints 1e9 used to make the step the
// scrape interval (~3e9 steps, gigabytes allocated before anything was evaluated). Like Prometheus, no series has
// more than MaxPointsPerSeries points: the step is raised instead, and the result says so.
func TestResolutionCapsPointsPerSeries(t *testing.T) {
	now := time.UnixMilli(1_790_000_000_000)
	cases := []struct {
		name      string
		r         Request
		scrape    time.Duration
		wantNote  bool
		wantStep  time.Duration // 0: only check the cap
		wantError string
	}{
		{name: "100 years at 1e9 points", r: Request{From: now.AddDate(-100, 0, 0), To: now, Interval: time.Second, MaxDataPoints: 1e9}, scrape: time.Second, wantNote: true},
		{name: "a day at 1s interval, no maxDataPoints", r: Request{From: now.Add(-24 * time.Hour), To: now, Interval: time.Second}, scrape: time.Second, wantNote: true},
		{name: "an hour at 15s", r: Request{From: now.Add(-time.Hour), To: now, Interval: 15 * time.Second, MaxDataPoints: 1000}, scrape: 5 * time.Second, wantStep: 15 * time.Second},
		{name: "exactly 11000 points", r: Request{From: now.Add(-10999 * time.Second), To: now, Interval: time.Second}, scrape: time.Second, wantStep: time.Second},
		{name: "timestamps near the int64 limits", r: Request{From: time.UnixMilli(math.MinInt64 / 2), To: time.UnixMilli(math.MaxInt64 / 2), MaxDataPoints: 1e9}, scrape: time.Second, wantError: "outside the supported timestamps"},
		{name: "a range too long for 11000 steps of 100 years", r: Request{From: time.UnixMilli(-1 << 60), To: time.UnixMilli(1 << 60), MaxDataPoints: 1e9}, scrape: time.Second, wantError: "too long"},
		{name: "huge interval", r: Request{From: now.Add(-time.Hour), To: now, Interval: time.Duration(math.MaxInt64)}, scrape: time.Second, wantStep: maxStep},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ResolveRange(Query{}, tc.r, tc.scrape)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := len(derive.Steps(res.From.UnixMilli(), res.To.UnixMilli(), res.Step.Milliseconds()))
			if n > MaxPointsPerSeries {
				t.Fatalf("%d steps at step %s, more than %d", n, res.Step, MaxPointsPerSeries)
			}
			if (res.Notice != "") != tc.wantNote {
				t.Fatalf("notice %q, want one: %v", res.Notice, tc.wantNote)
			}
			if tc.wantNote && !strings.Contains(res.Notice, "11000") {
				t.Errorf("notice %q does not name the limit", res.Notice)
			}
			if tc.wantStep != 0 && res.Step != tc.wantStep {
				t.Errorf("step %s, want %s", res.Step, tc.wantStep)
			}
			if res.Window < res.Step {
				t.Errorf("window %s shorter than step %s", res.Window, res.Step)
			}
		})
	}
}

// TestStepsNeverOverflow: a range ending near the largest timestamp used to wrap t += step around and loop forever.
func TestStepsNeverOverflow(t *testing.T) {
	got := derive.Steps(math.MaxInt64-25, math.MaxInt64-1, 10)
	if len(got) != 3 || got[2] != math.MaxInt64-5 {
		t.Fatalf("steps near MaxInt64 = %v", got)
	}
}

// TestQuantileListIsBounded: 10,000 quantiles used to cost gigabytes (every frame also carried the whole query JSON).
func TestQuantileListIsBounded(t *testing.T) {
	many := make([]float64, 10_000)
	for i := range many {
		many[i] = float64(i) / 10_000
	}
	cases := []struct {
		name      string
		q         Query
		wantError string
	}{
		{"10000 quantiles", Query{QueryType: TypeLatency, Quantiles: many}, "at most 32 quantiles"},
		{"raw histogram quantiles", Query{QueryType: TypeRaw, Metric: "vllm:e2e_request_latency_seconds", Histogram: "quantiles", Quantiles: many}, "at most 32 quantiles"},
		{"32 quantiles", Query{QueryType: TypeLatency, Quantiles: many[:32]}, ""},
		{"above 1", Query{QueryType: TypeLatency, Quantiles: []float64{0.5, 1.5}}, "quantile 1.5 is outside 0–1"},
		{"negative", Query{QueryType: TypeLatency, Quantiles: []float64{-0.1}}, "quantile -0.1 is outside 0–1"},
		{"NaN", Query{QueryType: TypeLatency, Quantiles: []float64{math.NaN()}}, "outside 0–1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			err := q.Validate()
			if tc.wantError == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("err = %v, want %q", err, tc.wantError)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error message is %d bytes long", len(err.Error()))
			}
		})
	}
}

// TestQueryFieldsAreBounded: matchers are compiled per query, so their size and number are bounded.
func TestQueryFieldsAreBounded(t *testing.T) {
	long := strings.Repeat("a", MaxMatcherBytes+1)
	labels := map[string]string{}
	for i := 0; i <= MaxLabelMatchers; i++ {
		labels["l"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
	}
	for name, q := range map[string]Query{
		"endpoint": {QueryType: TypeQueue, Endpoint: long},
		"label":    {QueryType: TypeRaw, Metric: "up", Labels: map[string]string{"a": long}},
		"labels":   {QueryType: TypeRaw, Metric: "up", Labels: labels},
		"legend":   {QueryType: TypeQueue, LegendFormat: long + strings.Repeat("b", 4096)},
	} {
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("%s: err = %v, want a size limit", name, err)
		}
	}
}

// TestDescribeIsSmall: the executed-query string stays small however large the query.
func TestDescribeIsSmall(t *testing.T) {
	q := Query{QueryType: TypeRaw, Metric: "up", Endpoint: strings.Repeat("(a|b)", 2000)}
	b, _ := json.Marshal(q)
	if d := Describe("direct mode", time.Second, time.Minute, string(b)); len(d) > MaxExecutedQueryBytes {
		t.Fatalf("executed query string is %d bytes", len(d))
	}
}

// TestCancelledQueryStops: cancellation used to be checked only between measures, so a cancelled query over a
// large endpoint went on reading (and holding) its history.
func TestCancelledQueryStops(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	for i := 0; i < 100; i++ {
		src.add("big", "vllm:num_requests_running", map[string]string{"engine": strconv.Itoa(i)}, pts(t0, 1, 2, 3))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	_, err := eng.Eval(ctx, Query{QueryType: TypeQueue}, Request{From: time.UnixMilli(t0), To: time.UnixMilli(t0 + 10000), Interval: 5 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if src.selects.Load() > 0 {
		t.Fatalf("%d selects after the query was cancelled", src.selects.Load())
	}
}

// TestAnswersAreCappedAtMaxSeries: a high-cardinality endpoint used to return one frame per series (190k).
func TestAnswersAreCappedAtMaxSeries(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	for i := 0; i < MaxSeriesPerQuery+5; i++ {
		src.add("big", "vllm:request_success_total", map[string]string{"finished_reason": strconv.Itoa(i)}, pts(t0, 1))
	}
	res := evalOne(t, src, Query{QueryType: TypeRaw, Metric: "vllm:request_success_total"}, t0, t0)
	if len(res.Outputs) != MaxSeriesPerQuery {
		t.Fatalf("%d outputs", len(res.Outputs))
	}
	if !strings.Contains(strings.Join(res.Notices, "\n"), "only the first 10000 series are shown") {
		t.Fatalf("notices %q", res.Notices)
	}
}

// TestRawGroupBySums (issue 12, item 2): raw with groupBy model or fleet returned one identically-labelled series
// per endpoint; like Prometheus mode's sum, it is one series per group.
func TestRawGroupBySums(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "0", "model_name": "m"}, pts(t0, 1, 2))
	src.add("a", "vllm:num_requests_running", map[string]string{"engine": "1", "model_name": "m"}, pts(t0, 10, 20))
	src.add("b", "vllm:num_requests_running", map[string]string{"engine": "0", "model_name": "m"}, pts(t0, 100, 200))
	for _, g := range []Group{GroupModel, GroupFleet} {
		res := evalOne(t, src, Query{QueryType: TypeRaw, Metric: "vllm:num_requests_running", GroupBy: g}, t0, t0+5000)
		if len(res.Outputs) != 1 {
			t.Fatalf("%s: %d outputs: %+v", g, len(res.Outputs), res.Outputs)
		}
		if got := res.Outputs[0].Points; len(got) != 2 || got[0].V != 111 || got[1].V != 222 {
			t.Fatalf("%s: points %v, want sums 111, 222", g, got)
		}
	}
}

// TestRawEmptyLabelsAreAbsent: an exposed label with an empty value is no label at all, as in Prometheus, so both
// modes report the same label sets.
func TestRawEmptyLabelsAreAbsent(t *testing.T) {
	const t0 = 1_700_000_000_000
	src := &memSource{}
	src.add("a", "vllm:request_success_total", map[string]string{"finished_reason": "stop", "lora_name": ""}, pts(t0, 1))
	res := evalOne(t, src, Query{QueryType: TypeRaw, Metric: "vllm:request_success_total"}, t0, t0)
	if l := res.Outputs[0].Labels; len(l) != 2 || l["finished_reason"] != "stop" {
		t.Fatalf("labels %v", l)
	}
}

// TestMatchersCompiledOnce checks a query's regular expressions are compiled by Validate and reused by both
// modes, and compiled again only when a matcher changes afterwards.
func TestMatchersCompiledOnce(t *testing.T) {
	q := Query{QueryType: TypeQueue, Endpoint: "v1.*", Labels: map[string]string{"reason": "capacity"}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	m := q.Matchers()
	if m2 := q.Matchers(); m2 != m || !q.validated() || q.EnsureValid() != nil {
		t.Fatal("a validated query's matchers were compiled again")
	}
	if !m.Endpoint.MatchString("v1-dp4") || m.Endpoint.MatchString("xv1") || !m.Labels["reason"].MatchString("capacity") {
		t.Error("matchers are not anchored regular expressions")
	}
	copied := q
	copied.Endpoint = "v0"
	if copied.validated() || copied.Matchers() == m || !copied.Matchers().Endpoint.MatchString("v0") {
		t.Error("a changed matcher kept the old compiled expression")
	}
	copied.Labels = map[string]string{"reason": "deferred"}
	if copied.validated() || !copied.Matchers().Labels["reason"].MatchString("deferred") {
		t.Error("a changed label matcher kept the old compiled expression")
	}
}

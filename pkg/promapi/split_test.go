package promapi

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestSplitRange: the spans cover exactly the range's steps, in order and once each, none crossing a multiple of
// query.SplitInterval since the epoch (or of the widened interval when there would be more than query.MaxSplits).
func TestSplitRange(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		start, end time.Time
		step       time.Duration
		spans      int  // 0: only the properties
		widened    bool // more days than query.MaxSplits: spans of several days
	}{
		{"within a day", day.Add(time.Hour), day.Add(20 * time.Hour), time.Minute, 1, false},
		{"exactly a day", day, day.Add(24 * time.Hour), 5 * time.Minute, 1, false},
		{"three days from midnight", day, day.Add(72 * time.Hour), 5 * time.Minute, 4, false},
		{"two days off midnight, uneven step", day.Add(7*time.Hour + 7*time.Minute), day.Add(55*time.Hour + 7*time.Minute), 7 * time.Minute, 3, false},
		{"a step of a day", day, day.Add(30 * 24 * time.Hour), 24 * time.Hour, 1, false},
		{"a year at an hour: widened", day.AddDate(-1, 0, 0), day, time.Hour, 0, true},
		{"before 1970", time.Date(1969, 12, 30, 13, 0, 0, 0, time.UTC), time.Date(1970, 1, 2, 1, 0, 0, 0, time.UTC), 10 * time.Minute, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := splitRange(tc.start, tc.end, tc.step)
			if tc.spans != 0 && len(spans) != tc.spans {
				t.Errorf("%d spans, want %d: %v", len(spans), tc.spans, spans)
			}
			if len(spans) > query.MaxSplits {
				t.Errorf("%d spans, more than %d", len(spans), query.MaxSplits)
			}
			var want, got []int64
			for ts := tc.start.UnixMilli(); ts <= tc.end.UnixMilli(); ts += tc.step.Milliseconds() {
				want = append(want, ts)
			}
			day := query.SplitInterval.Milliseconds()
			for _, sp := range spans {
				if len(spans) > 1 && !tc.widened && floorDiv(sp.start.UnixMilli(), day) != floorDiv(sp.end.UnixMilli(), day) {
					t.Errorf("span %s–%s crosses a multiple of %s", sp.start.UTC(), sp.end.UTC(), query.SplitInterval)
				}
				for ts := sp.start.UnixMilli(); ts <= sp.end.UnixMilli(); ts += tc.step.Milliseconds() {
					got = append(got, ts)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the spans' steps (%d) are not the range's (%d)", len(got), len(want))
			}
		})
	}
}

// counting counts the requests a client sends.
type counting struct{ n atomic.Int64 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// history is OpenMetrics text from from on, a sample a minute on two endpoints: a counter
// whose rate changes every hour, a gauge, and a histogram, so rates, sums and quantiles all cross the day
// boundaries a split range query is cut at.
func history(from time.Time, minutes int) string {
	var b strings.Builder
	b.WriteString("# TYPE vllm:generation_tokens counter\n# TYPE vllm:num_requests_running gauge\n# TYPE vllm:time_to_first_token_seconds histogram\n")
	bounds := []string{"0.1", "0.5", "2.5", "+Inf"}
	for n, inst := range []string{"e0:8000", "e1:8000"} {
		labels := fmt.Sprintf(`instance=%q,engine="0",model_name="m"`, inst)
		var tokens, count, sum float64
		buckets := make([]float64, len(bounds))
		for i := 0; i <= minutes; i++ {
			ts := from.Add(time.Duration(i) * time.Minute).Unix()
			h := i / 60
			tokens += float64((h*7+n*3)%11+1) * 60
			count += float64(h%5 + 1)
			for j := range buckets {
				if j >= (h+n)%3 {
					buckets[j] += float64(h%5 + 1)
				}
			}
			sum += float64(h%5+1) * 0.3
			fmt.Fprintf(&b, "vllm:generation_tokens_total{%s} %g %d\n", labels, tokens, ts)
			fmt.Fprintf(&b, "vllm:num_requests_running{%s} %d %d\n", labels, (i/7+n)%9, ts)
			for j, le := range bounds {
				fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{%s,le=%q} %g %d\n", labels, le, buckets[j], ts)
			}
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_sum{%s} %g %d\n", labels, sum, ts)
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{%s} %g %d\n", labels, count, ts)
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// TestSplitRangeQueriesAnswerAsOne runs range queries over three days on real engines (Prometheus 2 and 3,
// VictoriaMetrics 1.151, Thanos over an HA pair with deduplication) twice: as one request, and split at midnights into several (sent SplitConcurrency at a
// time), as query frontends do. The answers must be identical, value for value: the user's PromQL (rates,
// quantiles, a subquery) through the client, and generated measure queries through the evaluator.
func TestSplitRangeQueriesAnswerAsOne(t *testing.T) {
	// Up to a minute ago, so that the evaluator's discovery of the names held finds them.
	now := time.Now().Truncate(time.Minute)
	day := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	from := day.Add(-3 * time.Hour)
	om := history(from, int(now.Add(-time.Minute).Sub(from)/time.Minute))
	start, end := day.Add(-2*time.Hour), now.Add(-time.Hour).Truncate(time.Hour) // crosses three or four midnights
	spans := len(splitRange(start, end, 5*time.Minute))
	if spans < 4 {
		t.Fatalf("the range is split into %d requests, want at least 4", spans)
	}
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus2, promtest.Prometheus3, promtest.VictoriaMetrics151, promtest.ThanosHA) {
		t.Run(eng.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: om})
			split, whole := &counting{}, &counting{}
			splitClient := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute, Transport: split}}
			wholeClient := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute, Transport: whole}, noSplit: true}
			ctx := context.Background()
			for _, expr := range []string{
				`vllm:num_requests_running`,
				`sum by (instance) (rate(vllm:generation_tokens_total[5m]))`,
				`histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[10m])))`,
				`max_over_time(sum(vllm:num_requests_running)[30m:1m])`,
			} {
				before := split.n.Load()
				got, _, err := splitClient.QueryRange(ctx, expr, start, end, 5*time.Minute)
				if err != nil {
					t.Fatalf("%s split: %v", expr, err)
				}
				if n := split.n.Load() - before; n != int64(spans) {
					t.Errorf("%s: %d requests, want %d (one per day touched)", expr, n, spans)
				}
				want, _, err := wholeClient.QueryRange(ctx, expr, start, end, 5*time.Minute)
				if err != nil {
					t.Fatalf("%s whole: %v", expr, err)
				}
				if len(want) == 0 || len(want[0].Values) < 800 {
					t.Fatalf("%s: the whole range's answer is nearly empty: %d series", expr, len(want))
				}
				sortMatrix(got)
				sortMatrix(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: the split answer differs from the whole range's:\n%s", expr, matrixDiff(got, want))
				}
			}
			for _, q := range []query.Query{
				{QueryType: query.TypeQueue, Measure: "running"},
				{QueryType: query.TypeThroughput, Measure: "generation_tokens"},
				{QueryType: query.TypeLatency, Metric: "ttft", Quantiles: []float64{0.5, 0.95}},
			} {
				r := query.Request{From: start, To: end, Interval: 5 * time.Minute, MaxDataPoints: 2000}
				evs := [2]*Evaluator{}
				for i, c := range []*Client{splitClient, wholeClient} {
					evs[i] = &Evaluator{Client: c, Discovery: &Discovery{Client: c}, ScrapeInterval: time.Minute}
				}
				splitBefore, wholeBefore := split.n.Load(), whole.n.Load()
				got, err := evs[0].Eval(ctx, q, r)
				if err != nil {
					t.Fatalf("%s split: %v", q.QueryType, err)
				}
				want, err := evs[1].Eval(ctx, q, r)
				if err != nil {
					t.Fatalf("%s whole: %v", q.QueryType, err)
				}
				if s, w := split.n.Load()-splitBefore, whole.n.Load()-wholeBefore; s < w+int64(spans-1) {
					t.Errorf("%s: %d requests split, %d whole: the evaluator's range queries were not split", q.QueryType, s, w)
				}
				if len(want.Result.Outputs) == 0 {
					t.Fatalf("%s: no outputs (notices %q)", q.QueryType, want.Result.Notices)
				}
				if !reflect.DeepEqual(got.Result.Outputs, want.Result.Outputs) {
					t.Errorf("%s: split outputs differ from the whole range's", q.QueryType)
				}
			}
		})
	}
}

func sortMatrix(m model.Matrix) {
	sort.Slice(m, func(i, j int) bool { return m[i].Metric.String() < m[j].Metric.String() })
}

// matrixDiff names the first difference of two sorted answers.
func matrixDiff(got, want model.Matrix) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d series, want %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].Metric.Equal(want[i].Metric) {
			return fmt.Sprintf("series %d is %s, want %s", i, got[i].Metric, want[i].Metric)
		}
		if len(got[i].Values) != len(want[i].Values) {
			return fmt.Sprintf("%s: %d points, want %d", got[i].Metric, len(got[i].Values), len(want[i].Values))
		}
		for j := range got[i].Values {
			if got[i].Values[j] != want[i].Values[j] {
				return fmt.Sprintf("%s: point %d is %v, want %v", got[i].Metric, j, got[i].Values[j], want[i].Values[j])
			}
		}
	}
	return "equal"
}

// TestSplitRangeFailsAsOne: a split range query fails with the first failing request's error (here the day in the
// middle answers Prometheus's 422), and an expression naming the query's own start or end (@ start()) is sent as
// one request, since each span would have its own.
func TestSplitRangeFailsAsOne(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var requests atomic.Int64
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		_ = r.ParseForm()
		if strings.Contains(r.Form.Get("query"), "@") {
			requests.Add(1) // counted apart: the first query's cancelled pieces may still arrive after it failed
		}
		if r.Form.Get("start") == fmt.Sprintf("%d.000", day.Add(24*time.Hour).Unix()) {
			promErr(w, http.StatusUnprocessableEntity, "execution", "query processing would load too many samples into memory")
			return true
		}
		return false
	})
	c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: 10 * time.Second}}
	_, _, err := c.QueryRange(context.Background(), "up", day, day.Add(72*time.Hour), time.Hour)
	if err == nil || !strings.Contains(err.Error(), "too many samples") {
		t.Errorf("error %v, want the failing day's", err)
	}
	if _, _, err := c.QueryRange(context.Background(), "up @ start()", day, day.Add(72*time.Hour), time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("@ start() sent as %d requests, want 1", n)
	}
}

// TestJoinSpans: series are matched across spans by their labels, whichever map holds them, in order of first
// appearance; each joined series' points are in span order in an array of exactly their number, and a series one
// span holds keeps that span's values.
func TestJoinSpans(t *testing.T) {
	pt := func(ts ...int64) []model.SamplePair {
		out := make([]model.SamplePair, len(ts))
		for i, t := range ts {
			out[i] = model.SamplePair{Timestamp: model.Time(t), Value: model.SampleValue(t)}
		}
		return out
	}
	a := func() model.Metric { return model.Metric{"instance": "a:8000", "model_name": "m"} }
	b := func() model.Metric { return model.Metric{"instance": "b:8000", "model_name": "m"} }
	only := pt(5, 6)
	got, truncated := joinSpans([]model.Matrix{
		{{Metric: a(), Values: pt(1, 2)}, {Metric: b(), Values: pt(1)}},
		{{Metric: model.Metric{"instance": "c:8000"}, Values: only}, {Metric: b(), Values: pt(3, 4)}, {Metric: a(), Values: pt(3)}},
	})
	want := model.Matrix{{Metric: a(), Values: pt(1, 2, 3)}, {Metric: b(), Values: pt(1, 3, 4)}, {Metric: model.Metric{"instance": "c:8000"}, Values: pt(5, 6)}}
	if truncated || !reflect.DeepEqual(got, want) {
		t.Fatalf("joinSpans = %v (truncated %v), want %v", got, truncated, want)
	}
	for _, s := range got[:2] {
		if cap(s.Values) != len(s.Values) {
			t.Errorf("%v: capacity %d for %d points", s.Metric, cap(s.Values), len(s.Values))
		}
	}
	if &got[2].Values[0] != &only[0] {
		t.Error("a series one span holds was copied")
	}
}

// BenchmarkJoinSpans joins what a warm refresh in Prometheus mode joins for one query: an hour's cached steps (241)
// of 1 000 series with the one new step the server answered for them, labelled as a per-engine recorded series.
func BenchmarkJoinSpans(b *testing.B) {
	var cached, fresh model.Matrix
	for i := range 1000 {
		m := func() model.Metric {
			return model.Metric{"__name__": "inferscope:vllm:time_to_first_token_seconds_bucket:rate5m:p95_engine",
				"instance": model.LabelValue(fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250)), "job": "vllm", "model_name": "meta-llama/Llama-3.1-8B-Instruct",
				"engine": model.LabelValue(strconv.Itoa(i % 8))}
		}
		v := make([]model.SamplePair, 241)
		for k := range v {
			v[k] = model.SamplePair{Timestamp: model.Time(k * 15000), Value: 1}
		}
		cached = append(cached, &model.SampleStream{Metric: m(), Values: v[:240:240]})
		fresh = append(fresh, &model.SampleStream{Metric: m(), Values: v[240:]})
	}
	for b.Loop() {
		if m, _ := joinSpans([]model.Matrix{cached, fresh}); len(m) != 1000 {
			b.Fatal(len(m))
		}
	}
}

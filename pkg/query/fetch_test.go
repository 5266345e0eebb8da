package query

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// TestFetchPlacesAFleetsInputsOnce: a fleet's endpoints differ in size (DP1 beside DP8); fetch sizes its inputs for
// all of them at once, so none is copied as the array grows, and each keeps its endpoint, rank and bucket bound.
func TestFetchPlacesAFleetsInputsOnce(t *testing.T) {
	const start = int64(1_700_000_000_000)
	src := &memSource{}
	bounds := []string{"0.1", "1", "+Inf"}
	ranks := map[string]int{"a": 1, "b": 2, "c": 8, "d": 3}
	for _, ep := range []string{"a", "b", "c", "d"} {
		for e := range ranks[ep] {
			for i, le := range bounds {
				src.add(ep, "vllm:time_to_first_token_seconds_bucket", map[string]string{"model_name": "m", "engine": fmt.Sprint(e), "le": le},
					[]derive.Point{{T: start, V: float64(i)}, {T: start + 5000, V: float64(2 * i)}})
			}
		}
	}
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	q := Query{QueryType: TypeLatency, Metric: "ttft", Quantiles: []float64{0.5}, Window: "1m"}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	c := eng.newEvalCtx(context.Background(), q, Range{From: time.UnixMilli(start), To: time.UnixMilli(start + 5000), Step: 5 * time.Second, Window: time.Minute}, start)
	for _, r := range []reads{c.rateReads(), c.instantReads()} {
		ins := c.fetch(vllm.TTFT, "_bucket", nil, r)
		if want := (1 + 2 + 8 + 3) * len(bounds); len(ins) != want || cap(ins) != len(ins) {
			t.Fatalf("instant %v: %d inputs in an array of %d, want %d in one of as many", r.instant, len(ins), cap(ins), want)
		}
		i := 0
		for _, ep := range []string{"a", "b", "c", "d"} {
			for e := range ranks[ep] {
				for _, le := range bounds {
					in := ins[i]
					want, _ := derive.ParseUpperBound(le)
					if in.endpoint != ep || in.labels["endpoint"] != ep || in.labels["engine"] != fmt.Sprint(e) || in.le != want {
						t.Errorf("input %d: endpoint %s, labels %v, le %v; want %s engine %d le %v", i, in.endpoint, in.labels, in.le, ep, e, want)
					}
					i++
				}
			}
		}
	}
	if err := c.stopped(); err != nil {
		t.Fatal(err)
	}
}

// TestUpperBoundsRemembersEachBound: a bound is parsed once and answers as derive.ParseUpperBound does, a label
// that is no number included.
func TestUpperBoundsRemembersEachBound(t *testing.T) {
	var u upperBounds
	for range 2 {
		for _, le := range []string{"0.5", "+Inf", "1e3", "NaN", "x", ""} {
			got, ok := u.of(le)
			want, wok := derive.ParseUpperBound(le)
			if ok != wok || (ok && got != want) {
				t.Errorf("%q: %v %v, want %v %v", le, got, ok, want, wok)
			}
		}
	}
	if len(u) != 6 {
		t.Errorf("%d bounds kept, want 6", len(u))
	}
}

// TestSelectorDecidesPerNameOnce: the selector passes and refuses what the query's filters and the catalog's
// matchers say, and is nil, running nothing per series, when it would pass every series of the name.
func TestSelectorDecidesPerNameOnce(t *testing.T) {
	lbl := func(kv ...string) exposition.Labels {
		var ls exposition.Labels
		for i := 0; i < len(kv); i += 2 {
			ls = append(ls, exposition.Label{Name: kv[i], Value: kv[i+1]})
		}
		return ls
	}
	engine0 := lbl("model_name", "m", "engine", "0")
	router := lbl("model_name", "m", "server", "http://e")
	for _, tc := range []struct {
		name    string
		q       Query
		sample  string
		match   []measure.Matcher
		all     bool
		pass    []exposition.Labels
		refuses []exposition.Labels
	}{
		{name: "all", q: Query{QueryType: TypeKVCacheUsage, Model: ".*", Engine: ".*", Endpoint: ".*"}, sample: "vllm:kv_cache_usage_perc", all: true},
		{name: "router look-alike", q: Query{QueryType: TypeQueue}, sample: "vllm:num_requests_running",
			pass: []exposition.Labels{engine0}, refuses: []exposition.Labels{router}},
		{name: "raw reads the router too", q: Query{QueryType: TypeRaw, Metric: "vllm:num_requests_running"}, sample: "vllm:num_requests_running", all: true},
		{name: "model", q: Query{QueryType: TypeKVCacheUsage, Model: "m"}, sample: "vllm:kv_cache_usage_perc",
			pass: []exposition.Labels{engine0, lbl("model", "m")}, refuses: []exposition.Labels{lbl("model_name", "n", "engine", "0")}},
		{name: "rank", q: Query{QueryType: TypeKVCacheUsage, Engine: "1"}, sample: "vllm:kv_cache_usage_perc",
			pass: []exposition.Labels{lbl("engine", "1")}, refuses: []exposition.Labels{engine0}},
		{name: "rank of a name without one", q: Query{QueryType: TypeRaw, Metric: "process_open_fds", Engine: "1"}, sample: "process_open_fds",
			refuses: []exposition.Labels{lbl("engine", "1")}},
		{name: "label matcher", q: Query{QueryType: TypeRaw, Metric: "vllm:x", Labels: map[string]string{"finished_reason": "stop|length"}}, sample: "vllm:x",
			pass: []exposition.Labels{lbl("finished_reason", "stop")}, refuses: []exposition.Labels{lbl("finished_reason", "abort")}},
		{name: "label matcher of everything", q: Query{QueryType: TypeRaw, Metric: "vllm:x", Labels: map[string]string{"finished_reason": ".*"}}, sample: "vllm:x", all: true},
		{name: "catalog matcher", q: Query{QueryType: TypeKVCacheUsage}, sample: "vllm:kv_cache_usage_perc", match: []measure.Matcher{measure.Match("source", "local_.*")},
			pass: []exposition.Labels{lbl("source", "local_compute")}, refuses: []exposition.Labels{lbl("source", "external")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.q.Validate(); err != nil {
				t.Fatal(err)
			}
			m := tc.q.Matchers()
			c := &evalCtx{q: tc.q, modelRe: m.Model, rankRe: m.Engine, labelRes: m.Labels}
			sel := c.selector(tc.sample, tc.match)
			if (sel == nil) != tc.all {
				t.Fatalf("selector nil: %v, want %v", sel == nil, tc.all)
			}
			for _, ls := range tc.pass {
				if !sel(ls) {
					t.Errorf("refused %v", ls)
				}
			}
			for _, ls := range tc.refuses {
				if sel(ls) {
					t.Errorf("passed %v", ls)
				}
			}
		})
	}
}

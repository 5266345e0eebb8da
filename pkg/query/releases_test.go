package query

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// TestOffloadOnEveryRelease runs one simulated offloading instance (same seed, so the same transfers) as each release
// prints it: 0.16 and 0.20 with only the per-direction kv_offload_total_* names, 0.24, 0.25 and main with those and
// the flat names, and the flavor's flat names alone. Bandwidth and copy speed must have values on each, and the same
// ones: the per-direction names are read by direction, and the two pairs of 0.24 on are not counted twice. On 0.20
// the CPU cache usage says from which release it exists, and the measures whose metrics only main has say which vLLM
// they need there and on 0.25; 0.24 and 0.25 have CPU cache usage. A prefill instance, whose NIXL histograms stay at
// zero, says "no transfers in range" rather than that it lacks the metrics.
func TestOffloadOnEveryRelease(t *testing.T) {
	common := []string{"-kv-offload-gb=20", "-external-prefix-hit-rate=0.3", "-qps=10", "-seed=61"}
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"r016":    append([]string{"-vllm-version=0.16"}, common...),
		"r020":    append([]string{"-vllm-version=0.20"}, common...),
		"r024":    append([]string{"-vllm-version=0.24"}, common...),
		"r025":    append([]string{"-vllm-version=0.25"}, common...),
		"main":    append([]string{"-vllm-version=main"}, common...),
		"flavor":  append([]string{"-flavor=vllm-v1"}, common...),
		"prefill": {"-vllm-version=0.20", "-kv-role=prefill", "-qps=6", "-seed=62"},
	})
	for range 10 * 12 {
		f.scrape("", "")
	}
	e := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	r := Request{From: now.Add(-5 * time.Minute), To: now, Interval: 15 * time.Second}
	ctx := context.Background()
	for _, m := range []string{"bandwidth", "copy_speed"} {
		res, err := e.Eval(ctx, Query{QueryType: TypeKVOffload, Measure: m, GroupBy: GroupEndpoint, Endpoint: "r016|r020|r024|r025|main|flavor"}, r)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]map[string]float64{} // measure → endpoint → newest value
		for _, o := range res.Outputs {
			for i := len(o.Points) - 1; i >= 0; i-- {
				if v := o.Points[i].V; !math.IsNaN(v) {
					if last[o.Measure] == nil {
						last[o.Measure] = map[string]float64{}
					}
					last[o.Measure][o.Labels["endpoint"]] = v
					break
				}
			}
		}
		if len(last) != 2 {
			t.Fatalf("%s: outputs %v, want load and store (notices %q)", m, last, res.Notices)
		}
		for measure, byEndpoint := range last {
			want := byEndpoint["flavor"]
			if want <= 0 {
				t.Fatalf("%s %s: the flat names read %v", m, measure, want)
			}
			for _, ep := range []string{"r016", "r020", "r024", "r025", "main"} {
				if got, ok := byEndpoint[ep]; !ok || math.Abs(got-want) > 1e-9*want {
					t.Errorf("%s %s on %s: %v (present %v), want %v as the flat names read", m, measure, ep, got, ok, want)
				}
			}
		}
	}
	for _, c := range []struct{ measure, endpoint, notice string }{
		{"failures", "r020", "kv_offload/failures needs vLLM newer than 0.25.1 (its metrics are on vLLM main only)"},
		{"lookup_delay", "r020", "kv_offload/lookup_delay needs vLLM newer than 0.25.1"},
		{"failures", "r025", "kv_offload/failures needs vLLM newer than 0.25.1"},
		{"lookup_delay", "r025", "kv_offload/lookup_delay needs vLLM newer than 0.25.1"},
		{"cpu_usage", "r020", "kv_offload/cpu_usage needs vLLM 0.24.0 or newer with KV offloading: no selected endpoint exposes"},
		{"cpu_usage", "r024", ""},
		{"cpu_usage", "r025", ""},
	} {
		res, err := e.Eval(ctx, Query{QueryType: TypeKVOffload, Measure: c.measure, Endpoint: c.endpoint}, r)
		if err != nil {
			t.Fatal(err)
		}
		if c.notice == "" {
			if len(res.Outputs) != 1 || len(res.Notices) != 0 {
				t.Errorf("%s on %s: %d series, notices %q, want one and none", c.measure, c.endpoint, len(res.Outputs), res.Notices)
			}
			continue
		}
		if len(res.Outputs) != 0 || len(res.Notices) != 1 || !strings.HasPrefix(res.Notices[0], c.notice) {
			t.Errorf("%s on %s: %d series, notices %q, want none and %q", c.measure, c.endpoint, len(res.Outputs), res.Notices, c.notice)
		}
	}
	// A prefill instance registers the NIXL histograms and never observes a transfer: they stay at zero.
	res, err := e.Eval(ctx, Query{QueryType: TypeKVTransfer, Measure: "latency", Endpoint: "prefill"}, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 0 || len(res.Notices) != 1 || !strings.HasPrefix(res.Notices[0], "no transfers in range") {
		t.Errorf("0.20 prefill instance: %d series, notices %q, want none and no transfers in range", len(res.Outputs), res.Notices)
	}
}

// TestDeferredOnDecode: a 0.20 decode instance counts the requests waiting for their KV to arrive as waiting and
// deferred (vLLM's WAITING_FOR_REMOTE_KVS), so queue/deferred shows them; its prefill peer defers none.
func TestDeferredOnDecode(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"decode":  {"-vllm-version=0.20", "-kv-role=decode", "-kv-transfer-ms=1500", "-qps=8", "-seed=71"},
		"prefill": {"-vllm-version=0.20", "-kv-role=prefill", "-kv-transfer-ms=1500", "-qps=8", "-seed=72"},
	})
	for range 10 * 12 {
		f.scrape("", "")
	}
	e := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	res, err := e.Eval(context.Background(), Query{QueryType: TypeQueue, Measure: "deferred", GroupBy: GroupEndpoint},
		Request{From: now.Add(-5 * time.Minute), To: now, Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	peak := map[string]float64{}
	for _, o := range res.Outputs {
		for _, p := range o.Points {
			peak[o.Labels["endpoint"]] = math.Max(peak[o.Labels["endpoint"]], p.V)
		}
	}
	if _, ok := peak["prefill"]; !ok || peak["prefill"] != 0 || peak["decode"] < 1 {
		t.Errorf("deferred peaks %v (notices %q): want some on decode, none on prefill", peak, res.Notices)
	}
}

// TestRouterLookalikesCountedOnce: two engines behind vLLM production-stack's router, whose /metrics repeats their
// running and waiting requests (and V0's swapped gauge, and prefix-cache gauges named like counters) under vLLM's
// names with a server label. The fleet's running and waiting are the engines' own, counted once; the swapped and
// prefix hit-rate measures see no engine of the router.
func TestRouterLookalikesCountedOnce(t *testing.T) {
	engines := []string{"-flavor=vllm-v1", "-engines=2", "-qps=20", "-seed=81"}
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"engines": engines,
		"router":  append([]string{"-router"}, engines...),
	})
	for range 5 * 12 {
		f.scrape("", "")
	}
	e := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	r := Request{From: now.Add(-2 * time.Minute), To: now, Interval: 5 * time.Second}
	ctx := context.Background()
	for _, m := range []string{"running", "waiting"} {
		fleet, err := e.Eval(ctx, Query{QueryType: TypeQueue, Measure: m, GroupBy: GroupFleet}, r)
		if err != nil {
			t.Fatal(err)
		}
		own, err := e.Eval(ctx, Query{QueryType: TypeQueue, Measure: m, GroupBy: GroupFleet, Endpoint: "engines"}, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(fleet.Outputs) != 1 || len(own.Outputs) != 1 {
			t.Fatalf("%s: %d and %d fleet series", m, len(fleet.Outputs), len(own.Outputs))
		}
		busy := false
		for i, p := range fleet.Outputs[0].Points {
			if q := own.Outputs[0].Points[i]; p.T != q.T || p.V != q.V {
				t.Fatalf("%s at %d: the fleet reads %v, its engines %v", m, p.T, p.V, q.V)
			}
			busy = busy || p.V > 0
		}
		if !busy && m == "running" {
			t.Errorf("the engines never ran a request")
		}
	}
	for _, q := range []Query{{QueryType: TypeQueue, Measure: "swapped", Endpoint: "router"}, {QueryType: TypeQueue, Measure: "running", Endpoint: "router"}} {
		res, err := e.Eval(ctx, q, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Outputs) != 0 {
			t.Errorf("%s/%s on the router: %d series, want none (its gauges are look-alikes)", q.QueryType, q.Measure, len(res.Outputs))
		}
	}
}

// TestDynamoFrontendErrorsByStatus: Dynamo's frontend counts requests by status and errors by error_type, never by
// finished_reason: its failed requests are the status="error" ones (the configured tenth), labelled with their
// error_type, and its requests per second are split by status.
func TestDynamoFrontendErrorsByStatus(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"frontend": {"-flavor=dynamo-frontend", "-engines=2", "-qps=10", "-error-rate=0.1", "-abort-rate=0", "-seed=97"},
	})
	for range 10 * 12 {
		f.scrape("", "")
	}
	e := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	r := Request{From: now.Add(-time.Minute), To: now, Interval: 15 * time.Second}
	res, err := e.Eval(context.Background(), Query{QueryType: TypeThroughput, Measure: "errors", Window: "5m"}, r)
	if err != nil {
		t.Fatal(err)
	}
	var ratio float64
	types := map[string]bool{}
	for _, o := range res.Outputs {
		switch o.Measure {
		case "failed_request_ratio":
			ratio = o.Points[len(o.Points)-1].V
		case "failed_requests_per_second":
			types[o.Labels["error_type"]] = true
		}
	}
	if ratio < 0.07 || ratio > 0.13 || !types["internal"] || len(types) != 1 {
		t.Errorf("failed ratio %v with error types %v, want about 0.1, all internal (notices %q)", ratio, types, res.Notices)
	}
	res, err = e.Eval(context.Background(), Query{QueryType: TypeThroughput, Measure: "requests"}, r)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]bool{}
	for _, o := range res.Outputs {
		statuses[o.Labels["status"]] = true
	}
	if !statuses["success"] || !statuses["error"] || len(statuses) != 2 {
		t.Errorf("requests by status %v, want success and error", statuses)
	}
}

// TestEmptyNoticeSaysTheRelease: with nothing exposed, a measure read only from names of later vLLM releases says
// from which release (and with what besides) it exists; one whose names are all unreleased says it needs a vLLM
// newer than the newest read; one with names of the oldest release read, or of another project, says only what is
// missing.
func TestEmptyNoticeSaysTheRelease(t *testing.T) {
	none := func(vllm.Signal) bool { return false }
	for _, c := range []struct {
		q      Query
		holder string
		want   string
	}{
		{Query{QueryType: TypeKVTransfer, Measure: "latency"}, HolderEndpoints,
			"kv_transfer/latency needs vLLM 0.11.1 or newer with a NIXL KV connector: no selected endpoint exposes what kv_transfer/latency needs"},
		{Query{QueryType: TypeKVOffload, Measure: "cpu_usage"}, HolderPrometheus,
			"kv_offload/cpu_usage needs vLLM 0.24.0 or newer with KV offloading: the Prometheus server holds none of the metrics kv_offload/cpu_usage needs"},
		{Query{QueryType: TypeKVOffload, Measure: "failures"}, HolderEndpoints,
			"kv_offload/failures needs vLLM newer than " + vllm.NewestRelease() + " (its metrics are on vLLM main only)"},
		{Query{QueryType: TypeQueue, Measure: "running"}, HolderEndpoints, "no selected endpoint exposes what queue/running needs"},
	} {
		if got := EmptyNotice(c.q, none, c.holder); got != c.want {
			t.Errorf("%s/%s: %q, want %q", c.q.QueryType, c.q.Measure, got, c.want)
		}
	}
}

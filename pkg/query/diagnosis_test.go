package query

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

func diagnose(t *testing.T, src *memSource, now int64) []Finding {
	t.Helper()
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	eval := func(ctx context.Context, q Query) ([]Output, error) {
		res, err := eng.Eval(ctx, q, Request{From: time.UnixMilli(now).Add(-DiagnosisWindow), To: time.UnixMilli(now), Interval: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		return res.Outputs, nil
	}
	f, skipped, err := Diagnose(context.Background(), Query{QueryType: TypeDiagnosis}, eval)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	return f
}

// diagnoseLive scrapes a live simulated fleet the given number of times and diagnoses its last DiagnosisWindow.
func diagnoseLive(t *testing.T, f *liveFleet, scrapes int) []Finding {
	t.Helper()
	for range scrapes {
		f.scrape("", "")
	}
	eng := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	now := f.start.Add(f.el)
	findings, skipped, err := Diagnose(context.Background(), Query{QueryType: TypeDiagnosis}, func(ctx context.Context, q Query) ([]Output, error) {
		res, err := eng.Eval(ctx, q, Request{From: now.Add(-DiagnosisWindow), To: now, Interval: 15 * time.Second})
		if err != nil {
			return nil, err
		}
		return res.Outputs, nil
	})
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	return findings
}

func series(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestDiagnosis(t *testing.T) {
	const t0 = 1_700_000_000_000
	const n = 90 // 7.5 minutes at 5 s
	now := int64(t0 + (n-1)*5000)
	l := func(engine string) map[string]string { return map[string]string{"engine": engine, "model_name": "m"} }

	sick := &memSource{}
	sick.add("hot", "vllm:num_requests_waiting", l("0"), pts(t0, series(n, func(int) float64 { return 25 })...))
	sick.add("hot", "vllm:num_requests_waiting", l("1"), pts(t0, series(n, func(int) float64 { return 0 })...))
	sick.add("hot", "vllm:num_requests_running", l("0"), pts(t0, series(n, func(int) float64 { return 256 })...))
	sick.add("hot", "vllm:num_requests_running", l("1"), pts(t0, series(n, func(int) float64 { return 0 })...))
	sick.add("hot", "vllm:kv_cache_usage_perc", l("0"), pts(t0, series(n, func(int) float64 { return 0.97 })...))
	sick.add("hot", "vllm:kv_cache_usage_perc", l("1"), pts(t0, series(n, func(int) float64 { return 0.95 })...))
	sick.add("hot", "vllm:num_preemptions_total", l("0"), pts(t0, series(n, func(i int) float64 { return float64(i) })...))
	sick.add("hot", "vllm:num_preemptions_total", l("1"), pts(t0, series(n, func(int) float64 { return 3 })...))
	sick.add("old", "vllm:num_requests_swapped", map[string]string{"model_name": "m"}, pts(t0, series(n, func(int) float64 { return 2 })...))
	// A wedged engine: requests wait, none run, the KV cache is empty.
	sick.add("stuck", "vllm:num_requests_waiting", l("0"), pts(t0, series(n, func(int) float64 { return 3 })...))
	sick.add("stuck", "vllm:num_requests_running", l("0"), pts(t0, series(n, func(int) float64 { return 0 })...))
	sick.add("stuck", "vllm:kv_cache_usage_perc", l("0"), pts(t0, series(n, func(int) float64 { return 0 })...))
	// Half the first tokens over 500 ms, and a tenth of the requests failing.
	for le, share := range map[string]float64{"0.25": 0.2, "0.5": 0.5, "1": 0.9, "+Inf": 1} {
		labels := l("0")
		labels["le"] = le
		sick.add("slow", "vllm:time_to_first_token_seconds_bucket", labels, pts(t0, series(n, func(i int) float64 { return 10 * share * float64(i) })...))
	}
	for reason, share := range map[string]float64{"stop": 0.9, "error": 0.1} {
		labels := l("0")
		labels["finished_reason"] = reason
		sick.add("slow", "vllm:request_success_total", labels, pts(t0, series(n, func(i int) float64 { return 10 * share * float64(i) })...))
	}

	got := diagnose(t, sick, now)
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Symptom+" @ "+f.Endpoint+"/"+f.Engine)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"more than 10 requests waiting for 5 minutes @ hot/0",
		"KV-cache usage above 90 % with preemptions @ hot/0",
		"requests swapped to CPU for 5 minutes (V0) @ old/",
		"DP ranks idle while others queue @ hot/",
		"engine wedged: requests waiting for 5 minutes while none run and the KV cache is empty @ stuck/0",
		"TTFT SLO burning fast: under 85.6 % of first tokens within 500 ms @ slow/0",
		"more than 5 % of requests failed or aborted @ slow/0",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing finding %q in:\n%s", want, all)
		}
	}
	// Engine 1 is nearly full too but does not preempt: the KV rule needs both.
	if strings.Contains(all, "KV-cache usage above 90 % with preemptions @ hot/1") || strings.Contains(all, "waiting for 5 minutes @ hot/1") ||
		strings.Contains(all, "wedged") && strings.Count(all, "wedged") != 1 {
		t.Errorf("rule fired on a healthy engine:\n%s", all)
	}
	frame := DiagnosisFrame(got)
	if frame.Rows() != len(got) || frame.Fields[6].Name != "knob" || !strings.Contains(frame.Fields[6].At(0).(string), "chunked-prefill") {
		t.Fatalf("diagnosis frame = %v", frame)
	}

	healthy := &memSource{}
	healthy.add("ok", "vllm:num_requests_waiting", l("0"), pts(t0, series(n, func(i int) float64 { return float64(i % 3) })...))
	healthy.add("ok", "vllm:kv_cache_usage_perc", l("0"), pts(t0, series(n, func(int) float64 { return 0.5 })...))
	healthy.add("ok", "vllm:num_preemptions_total", l("0"), pts(t0, series(n, func(int) float64 { return 7 })...))
	if got := diagnose(t, healthy, now); len(got) != 0 {
		t.Fatalf("healthy fleet diagnosed: %+v", got)
	}
}

// TestDiagnosisEndpointDown: with most of a fleet down, the diagnosis used to list only the healthy endpoints'
// findings; a down endpoint is the first finding there is.
func TestDiagnosisEndpointDown(t *testing.T) {
	const t0 = 1_700_000_000_000
	const n = 90
	now := int64(t0 + (n-1)*5000)
	src := &memSource{}
	src.add("dead", "up", nil, pts(t0, series(n, func(int) float64 { return 0 })...))
	src.add("flapping", "up", nil, pts(t0, series(n, func(i int) float64 { return float64(1 - i%2) })...)) // last scrape failed
	src.add("ok", "up", nil, pts(t0, series(n, func(int) float64 { return 1 })...))
	src.add("ok", "vllm:num_requests_waiting", map[string]string{"engine": "0"}, pts(t0, series(n, func(int) float64 { return 0 })...))
	got := diagnose(t, src, now)
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Severity+" "+f.Symptom+" @ "+f.Endpoint)
	}
	want := []string{"critical endpoint down: its last scrape failed @ dead", "critical endpoint down: its last scrape failed @ flapping"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestDiagnosisSkipsFailingRules: one rule query over a read limit used to fail the whole table.
func TestDiagnosisSkipsFailingRules(t *testing.T) {
	eval := func(ctx context.Context, q Query) ([]Output, error) {
		if q.QueryType == TypeQueue {
			return nil, errors.New("the query reads more than 250000 stored series")
		}
		if q.QueryType == TypeRaw {
			return []Output{{Measure: "up", Labels: map[string]string{"endpoint": "dead"}, Points: pts(1_700_000_000_000, 0)}}, nil
		}
		return nil, nil
	}
	f, skipped, err := Diagnose(context.Background(), Query{QueryType: TypeDiagnosis}, eval)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 1 || f[0].Endpoint != "dead" {
		t.Errorf("findings %+v", f)
	}
	if len(skipped) != 3 || !strings.Contains(skipped[0], "more than 10 requests waiting") || !strings.Contains(skipped[0], "250000 stored series") {
		t.Errorf("skipped %q", skipped)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Diagnose(ctx, Query{QueryType: TypeDiagnosis}, func(ctx context.Context, q Query) ([]Output, error) { return nil, ctx.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled diagnosis: %v", err)
	}
}

// TestDiagnosisKVConnectors: on simulated decode instances, a slow and lossy NIXL link is diagnosed — failures and
// a slow p95 on that instance — and a healthy link is not; an offloading instance short of memory is diagnosed
// (failing and thrashing), one with room is not.
func TestDiagnosisKVConnectors(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"lossy":   {"-flavor=vllm-v1", "-kv-role=decode", "-kv-transfer-ms=900", "-kv-transfer-fail-rate=0.1", "-qps=6", "-seed=51"},
		"healthy": {"-flavor=vllm-v1", "-kv-role=decode", "-qps=6", "-seed=52"},
		"full":    {"-flavor=vllm-v1", "-kv-offload-gb=8", "-kv-offload-fail-rate=0.2", "-external-prefix-hit-rate=0.3", "-qps=6", "-seed=53"},
		"roomy":   {"-flavor=vllm-v1", "-kv-offload-gb=4000", "-external-prefix-hit-rate=0.3", "-qps=6", "-seed=54"},
	})
	findings := diagnoseLive(t, f, 10*12)
	got := map[string]bool{}
	for _, x := range findings {
		if strings.HasPrefix(x.Symptom, "NIXL") || strings.HasPrefix(x.Symptom, "KV offload") {
			got[x.Endpoint+": "+x.Symptom[:strings.Index(x.Symptom, ":")]] = true
		}
	}
	want := map[string]bool{
		"lossy: NIXL KV transfers failing":         true,
		"lossy: NIXL KV transfer p95 above 500 ms": true,
		"full: KV offload stores failing":          true,
		"full: KV offload saturated":               true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("KV connector findings %v, want %v", got, want)
	}
}

// TestDiagnosisTellsAsleepFromUnhealthy: a sleeping engine is an info finding, not an outage; an engine fault
// tolerance reports unhealthy is critical; their awake and healthy neighbours are neither.
func TestDiagnosisTellsAsleepFromUnhealthy(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"asleep": {"-flavor=vllm-v1", "-sleep-level=1", "-qps=4", "-seed=81"},
		"ft":     {"-flavor=vllm-v1", "-engines=2", "-fault-tolerance", "-unhealthy-engines=1", "-qps=4", "-seed=82"},
	})
	findings := diagnoseLive(t, f, 6*12)
	got := map[string]string{}
	for _, x := range findings {
		if strings.HasPrefix(x.Symptom, "engine ") {
			got[x.Endpoint+"/"+x.Engine] = x.Severity + " " + x.Symptom[:strings.Index(x.Symptom, ":")]
		}
	}
	want := map[string]string{"asleep/0": "info engine asleep", "ft/1": "critical engine unhealthy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engine findings %v, want %v", got, want)
	}
}

// TestDiagnosisShortRequests: clients that ask for 16 tokens fill the batch with requests that stop at max_tokens
// after a few tokens, which the diagnosis names; clients asking for long answers are not named.
func TestDiagnosisShortRequests(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{
		"short":  {"-flavor=vllm-v1", "-max-tokens=16", "-qps=6", "-seed=83"},
		"normal": {"-flavor=vllm-v1", "-qps=6", "-seed=84"},
	})
	var got []string
	for _, x := range diagnoseLive(t, f, 6*12) {
		if strings.HasPrefix(x.Symptom, "batch full of short requests") {
			got = append(got, x.Endpoint)
		}
	}
	if !reflect.DeepEqual(got, []string{"short"}) {
		t.Errorf("short-request findings on %v, want short", got)
	}
}

// TestDiagnosisAsksEachQueryOnce: rules that read the same query (waiting requests twice, engine status twice)
// share one evaluation of it, and a rule still gets the answer another rule's query had.
func TestDiagnosisAsksEachQueryOnce(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	eval := func(ctx context.Context, q Query) ([]Output, error) {
		k, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		asked[string(k)]++
		mu.Unlock()
		if q.QueryType == TypeQueue && q.Measure == measure.QueueWaiting.Name {
			// 20 waiting for the whole window on one engine: both waiting rules read this answer.
			return []Output{{Measure: q.Measure, Labels: map[string]string{"endpoint": "busy", "engine": "0"}, Points: pts(1_700_000_000_000, 20, 20)}}, nil
		}
		return nil, nil
	}
	findings, skipped, err := Diagnose(context.Background(), Query{QueryType: TypeDiagnosis}, eval)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	for k, n := range asked {
		if n != 1 {
			t.Errorf("asked %d times: %s", n, k)
		}
	}
	if got := len(asked); got >= len(diagnosisRules()) {
		t.Errorf("%d distinct queries asked for %d rules: the rules reading one measure should share it", got, len(diagnosisRules()))
	}
	var symptoms []string
	for _, f := range findings {
		symptoms = append(symptoms, f.Symptom)
	}
	// The wedged rule's also-rules (running, KV usage) answered nothing, so only the waiting rule trips.
	if len(findings) != 1 || !strings.Contains(findings[0].Symptom, "waiting for 5 minutes") || findings[0].Endpoint != "busy" {
		t.Errorf("findings %q", symptoms)
	}
}

// TestDiagnosisAsksOnlyTheOutputsItReads holds each rule's query to the one output the rule reads: a measure's
// other outputs are queries of their own in Prometheus mode and evaluations in direct mode, and a cold dashboard
// waits on the diagnosis more than on any other panel.
func TestDiagnosisAsksOnlyTheOutputsItReads(t *testing.T) {
	var mu sync.Mutex
	var asked []Query
	eval := func(ctx context.Context, q Query) ([]Output, error) {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return nil, nil
	}
	if _, skipped, err := Diagnose(context.Background(), Query{QueryType: TypeDiagnosis}, eval); err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	// The also-rules run only where their rule trips: ask them directly.
	for _, r := range diagnosisRules() {
		for a := r.also; a != nil; a = a.also {
			q, _ := a.ask(Query{})
			asked = append(asked, q)
		}
	}
	for _, q := range asked {
		if n := len(q.Outputs()); n != 1 {
			t.Errorf("%s/%s asks %d outputs (Output %q); a rule reads one", q.QueryType, q.Measure, n, q.Output)
		}
	}
}

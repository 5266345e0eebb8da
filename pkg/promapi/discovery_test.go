package promapi

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// bucket is one bucket sample of a histogram's exposition.
func bucket(name, le string) string { return name + `_bucket{le="` + le + `"} 1` + "\n" }

// layoutExporters serves two exporters for a real server to scrape, as targets of job vllm: vLLM's TTFT on V1's bounds
// and on V0's (which stop at 10 s), the e2e and queue time histograms on the same three bounds, and extra lines.
func layoutExporters(t *testing.T, extra string) []promtest.Target {
	t.Helper()
	exporter := func(ttft []string) string {
		var b strings.Builder
		for _, le := range ttft {
			b.WriteString(bucket("vllm:time_to_first_token_seconds", le))
		}
		for _, le := range []string{"0.1", "0.5", "+Inf"} {
			b.WriteString(bucket("vllm:e2e_request_latency_seconds", le))
			b.WriteString(bucket("vllm:request_queue_time_seconds", le))
		}
		return b.String() + extra
	}
	var targets []promtest.Target
	for _, body := range []string{exporter([]string{"1", "10", "20", "+Inf"}), exporter([]string{"1", "10", "+Inf"})} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		t.Cleanup(srv.Close)
		targets = append(targets, promtest.Target{Job: "vllm", Addr: strings.TrimPrefix(srv.URL, "http://")})
	}
	return targets
}

// TestDiscoveryOnARealServer: from a real Prometheus 3 scraping two exporters and recording one rate, Names lists the
// families' names and the recorded series, not the server's other names; Layouts answers for the bucket names it is
// asked: a histogram both expose on one layout has that layout, one whose layouts differ (V1's TTFT beside V0's,
// which stops at 10 s) has "", as has a name the server does not hold; names not asked are not looked up.
func TestDiscoveryOnARealServer(t *testing.T) {
	targets := layoutExporters(t, "other_requests_total 3\nvllm: 1\n")
	recorded := RecordedName("vllm:e2e_request_latency_seconds_bucket", time.Minute)
	prom := promtest.Start(t, promtest.Options{Engine: promtest.EnginesOf(t, promtest.Prometheus3)[0], Targets: targets, ScrapeInterval: time.Second,
		Rules: "groups:\n  - name: r\n    rules:\n      - record: " + recorded + "\n        expr: rate(vllm:e2e_request_latency_seconds_bucket[1m])\n"})
	prom.WaitFor(t, `count(vllm:time_to_first_token_seconds_bucket)`, time.Minute, func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 7 })
	prom.WaitFor(t, `count({__name__="`+recorded+`"})`, time.Minute, func(v model.Vector) bool { return len(v) == 1 })

	names, err := (&Discovery{Client: &Client{BaseURL: prom.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}}).Names(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"vllm:time_to_first_token_seconds_bucket", "vllm:request_queue_time_seconds_bucket", recorded, "up"} {
		if !names.Has(n) {
			t.Errorf("Names lacks %s: %v", n, names.Sorted())
		}
	}
	for _, n := range []string{"other_requests_total", "vllm:", "scrape_samples_scraped", "prometheus_build_info"} {
		if names.Has(n) {
			t.Errorf("Names lists %s", n)
		}
	}

	var asked []string
	c := &Client{BaseURL: prom.URL, Method: http.MethodGet, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if q := r.URL.Query().Get("query"); q != "" { // not the names' lookups
			asked = append(asked, q)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}}
	d := &Discovery{Client: c}
	got, err := d.Layouts(context.Background(), []string{"vllm:time_to_first_token_seconds_bucket", "vllm:e2e_request_latency_seconds_bucket", "vllm:absent_bucket"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"vllm:time_to_first_token_seconds_bucket": "", "vllm:e2e_request_latency_seconds_bucket": "+Inf,0.1,0.5", "vllm:absent_bucket": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Layouts[%s] = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Layouts answered %v, want only the names asked", got)
	}
	if len(asked) != 1 || strings.Contains(asked[0], "queue") {
		t.Errorf("asked %q, want one query for the names asked", asked)
	}
	// Within the TTL, asking again reads the cache.
	if _, err := d.Layouts(context.Background(), []string{"vllm:e2e_request_latency_seconds_bucket"}); err != nil || len(asked) != 1 {
		t.Errorf("second call: %v, %d queries", err, len(asked))
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLayoutsReadTheRecordedCounts: where a real Prometheus 3 evaluates the generated layouts rule (and the names
// kept list its series), Layouts reads the
// recorded counts for the names they cover, in one query over their few series instead of a count over every bucket
// series, and answers as the count does (a layout shared by both exporters, "" where they differ); a name the rule
// does not cover, or one it covers but finds no series of, is counted as before, and only those.
func TestLayoutsReadTheRecordedCounts(t *testing.T) {
	targets := layoutExporters(t, bucket("custom_latency_seconds", "0.1")+bucket("custom_latency_seconds", "0.5")+bucket("custom_latency_seconds", "+Inf"))
	rules := "groups:\n  - name: " + layoutsGroup + "\n    interval: 1s\n    rules:\n      - record: " + LayoutsName + "\n        expr: " +
		strconv.Quote(layoutsRule()) + "\n"
	prom := promtest.Start(t, promtest.Options{Engine: promtest.EnginesOf(t, promtest.Prometheus3)[0], Targets: targets, ScrapeInterval: time.Second, Rules: rules})
	prom.WaitFor(t, `sum(`+LayoutsName+`{`+LayoutLabel+`="vllm:time_to_first_token_seconds_bucket"})`, time.Minute,
		func(v model.Vector) bool { return len(v) == 1 && v[0].Value == 7 })

	var mu sync.Mutex
	var asked []string
	c := &Client{BaseURL: prom.URL, Method: http.MethodGet, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if q := r.URL.Query().Get("query"); q != "" {
			mu.Lock()
			asked = append(asked, q)
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})}}
	const ttft, e2e, prompt, custom = "vllm:time_to_first_token_seconds_bucket", "vllm:e2e_request_latency_seconds_bucket",
		"vllm:request_prompt_tokens_bucket", "custom_latency_seconds_bucket"
	d := &Discovery{Client: c}
	if names, err := d.Names(context.Background()); err != nil || !names.Has(LayoutsName) { // as a query does first
		t.Fatalf("Names: %v, %v", names.Sorted(), err)
	}
	got, err := d.Layouts(context.Background(), []string{ttft, e2e, prompt, custom})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ttft: "", e2e: "+Inf,0.1,0.5", prompt: "", custom: "+Inf,0.1,0.5"}
	if !maps.Equal(got, want) {
		t.Errorf("Layouts = %v, want %v", got, want)
	}
	wantAsked := []string{
		"sum by (" + LayoutLabel + ", le) (" + LayoutsName + "{" + LayoutLabel + `=~"vllm:e2e_request_latency_seconds_bucket|vllm:request_prompt_tokens_bucket|vllm:time_to_first_token_seconds_bucket"})`,
		layoutCount([]string{custom, prompt}),
	}
	if !slices.Equal(asked, wantAsked) {
		t.Errorf("asked %q, want %q: the recorded counts, then a count of the names they do not answer", asked, wantAsked)
	}
}

package httpmetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// loopback serves a body of 1 000 bytes at /ok and a 404 elsewhere, on 127.0.0.1.
func loopback(tb testing.TB) *httptest.Server {
	tb.Helper()
	body := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// newClient is a client as a data source of type dsType builds one, with middlewares (nil: the SDK's defaults).
func newClient(tb testing.TB, dsType string, middlewares []httpclient.Middleware) *http.Client {
	tb.Helper()
	c, err := httpclient.New(httpclient.Options{Labels: map[string]string{"datasource_type": dsType}, Middlewares: middlewares})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// get requests url with ctx and reads the whole body, as a scrape does.
func get(tb testing.TB, c *http.Client, ctx context.Context, url string) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
}

// recorded is every plugins_datasource_* series of one datasource_type in the default registry: its labels but
// that type, and its sample count (histograms) or value (counters, gauges), as text.
func recorded(t *testing.T, dsType string) []string {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "plugins_datasource_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			mine := false
			for _, l := range m.GetLabel() {
				if l.GetName() == "datasource_type" {
					mine = l.GetValue() == dsType
					continue
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if !mine {
				continue
			}
			out = append(out, f.GetName()+"{"+strings.Join(labels, ",")+"} "+value(f.GetType(), strings.Contains(f.GetName(), "duration"), m))
		}
	}
	slices.Sort(out)
	return out
}

// value is what recorded compares of one series: durations differ from run to run, their count does not.
func value(t dto.MetricType, duration bool, m *dto.Metric) string {
	switch t {
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		if duration {
			return "count=" + strconv.FormatUint(h.GetSampleCount(), 10)
		}
		return "count=" + strconv.FormatUint(h.GetSampleCount(), 10) + " sum=" + strconv.FormatUint(uint64(h.GetSampleSum()), 10)
	case dto.MetricType_COUNTER:
		return strconv.FormatUint(uint64(m.GetCounter().GetValue()), 10)
	default:
		return strconv.FormatUint(uint64(m.GetGauge().GetValue()), 10)
	}
}

func TestFindsTheSDKsVectors(t *testing.T) {
	if registered() == nil {
		t.Fatal("the SDK's data source metrics were not found in the default registry: this SDK release changed them, and Middleware falls back to the SDK's own")
	}
}

// TestFindsNothingElsewhere: in a registry without the SDK's vectors, sdkVectors fails (Middleware then is the
// SDK's own) and leaves no collector registered.
func TestFindsNothingElsewhere(t *testing.T) {
	reg := prometheus.NewRegistry()
	if v, err := sdkVectors(reg); err == nil || v != nil {
		t.Fatalf("found vectors in an empty registry: %v, %v", v, err)
	}
	// What the search registered is gone: the SDK's vector can be registered there.
	if err := reg.Register(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "plugins", Name: "datasource_request_total",
		Help: "A counter for outgoing requests for an external data source"},
		[]string{"datasource_type", "code", "method", "secure_socks_ds_proxy_enabled", "endpoint"})); err != nil {
		t.Errorf("the search left a collector registered: %v", err)
	}
	// A vector whose labels differ from the SDK's is not taken for it.
	reg = prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "plugins", Name: "datasource_request_total",
		Help: "A counter for outgoing requests for an external data source"}, []string{"datasource_type"}))
	if _, err := sdkVectors(reg); err == nil {
		t.Error("a vector with other labels was taken for the SDK's")
	}
}

// TestRecordsWhatTheSDKRecords sends the same requests through a client with the SDK's middlewares and one with
// WithBoundMetrics, under two data source types, and compares every series each recorded.
func TestRecordsWhatTheSDKRecords(t *testing.T) {
	srv := loopback(t)
	sdk := newClient(t, "parity sdk", nil)
	bound := newClient(t, "parity bound", WithBoundMetrics(nil))
	query := backend.WithEndpoint(context.Background(), backend.EndpointQueryData)
	for _, c := range []*http.Client{sdk, bound} {
		for range 3 {
			get(t, c, context.Background(), srv.URL+"/ok")
		}
		get(t, c, query, srv.URL+"/ok")
		get(t, c, context.Background(), srv.URL+"/missing")
	}
	want, got := recorded(t, "parity_sdk"), recorded(t, "parity_bound")
	if len(want) == 0 {
		t.Fatal("the SDK's middleware recorded nothing")
	}
	if !slices.Equal(got, want) {
		t.Errorf("bound metrics:\n%s\nthe SDK's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range got {
		if strings.HasPrefix(s, "plugins_datasource_request_total{code=200,endpoint=queryData,method=get") && !strings.HasSuffix(s, " 1") {
			t.Errorf("one request under the query endpoint, recorded as %s", s)
		}
	}
}

// TestKeepsWhatAClientIsGiven checks that only the metrics middleware is replaced, in place, and that a client
// without a data source type is not instrumented, as with the SDK's.
func TestKeepsWhatAClientIsGiven(t *testing.T) {
	defaults := httpclient.DefaultMiddlewares()
	got := WithBoundMetrics(nil)
	if len(got) != len(defaults) {
		t.Fatalf("%d middlewares, the SDK's defaults are %d", len(got), len(defaults))
	}
	for i, m := range got {
		name, want := m.(httpclient.MiddlewareName).MiddlewareName(), defaults[i].(httpclient.MiddlewareName).MiddlewareName()
		if name != want {
			t.Errorf("middleware %d is %q, the SDK's default is %q", i, name, want)
		}
	}
	next := http.DefaultTransport
	if rt := Middleware().CreateMiddleware(httpclient.Options{}, next); rt != next {
		t.Error("a client without labels is instrumented")
	}
	if rt := Middleware().CreateMiddleware(httpclient.Options{Labels: map[string]string{"datasource_type": "-.-"}}, next); rt != next {
		t.Error("a client whose type is no label value is instrumented")
	}
}

// TestBindsOncePerClient counts what a request allocates through each client: the SDK's metrics middleware builds
// its instrumentation at every request, the bound one once. The ratio is measured in one run.
func TestBindsOncePerClient(t *testing.T) {
	srv := loopback(t)
	per := func(c *http.Client) float64 {
		get(t, c, context.Background(), srv.URL+"/ok") // the connection, and the bound instrumentation
		return testing.AllocsPerRun(50, func() { get(t, c, context.Background(), srv.URL+"/ok") })
	}
	sdk, bound := per(newClient(t, "allocs sdk", nil)), per(newClient(t, "allocs bound", WithBoundMetrics(nil)))
	t.Logf("allocations a request: %.0f with the SDK's middleware, %.0f bound", sdk, bound)
	if bound > 0.75*sdk {
		t.Errorf("a request allocates %.0f times through the bound client, %.0f through the SDK's: the instrumentation is built per request", bound, sdk)
	}
}

// BenchmarkClient is one scrape-sized request (1 000 bytes) on loopback through a client with the SDK's
// middlewares and through one with its metrics bound once: what each request costs the data source's CPU.
func BenchmarkClient(b *testing.B) {
	srv := loopback(b)
	for _, c := range []struct {
		name        string
		middlewares []httpclient.Middleware
	}{{"sdk", nil}, {"bound", WithBoundMetrics(nil)}} {
		b.Run("metrics="+c.name, func(b *testing.B) {
			client := newClient(b, "bench "+c.name, c.middlewares)
			b.ReportAllocs()
			for b.Loop() {
				get(b, client, context.Background(), srv.URL+"/ok")
			}
		})
	}
}

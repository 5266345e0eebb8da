package promtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// demoCounter is OpenMetrics text of one counter series with the given labels, growing by 10 every 5 s for five
// minutes from base: 2/s.
func demoCounter(base time.Time, labels string) string {
	var b strings.Builder
	b.WriteString("# TYPE demo_requests counter\n")
	for i := 0; i <= 60; i++ {
		fmt.Fprintf(&b, "demo_requests_total{%s} %d %d\n", labels, i*10, base.Add(time.Duration(i)*5*time.Second).Unix())
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// TestBackfillAndQuery proves the helper round-trips on every engine: samples we write are the samples PromQL sees.
// Every engine agrees here: the counter grows evenly and the window holds a sample at each end, so Prometheus's
// extrapolation and VictoriaMetrics' sample-before-the-window both give 2/s.
func TestBackfillAndQuery(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	om := demoCounter(base, `engine="0"`)
	check := func(t *testing.T, s *Server) {
		v, err := s.Query(context.Background(), "rate(demo_requests_total[1m])", base.Add(4*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 1 || float64(v[0].Value) != 2 {
			t.Fatalf("rate = %v, want one series at 2/s", v)
		}
		if got := string(v[0].Metric["engine"]); got != "0" {
			t.Fatalf("engine label = %q", got)
		}
	}
	// The original API: Backfill and DataDir, Prometheus 2.
	t.Run("default", func(t *testing.T) {
		s := Start(t, Options{DataDir: Backfill(t, om)})
		if s.Engine != Prometheus2 {
			t.Fatalf("default engine = %s", s.Engine)
		}
		check(t, s)
	})
	for _, eng := range Engines(t) {
		t.Run(eng.String(), func(t *testing.T) {
			check(t, Start(t, Options{Engine: eng, OpenMetrics: om}))
		})
	}
}

// TestScrape: every engine scrapes a loopback target with the job_name label the tests rely on.
func TestScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	var n atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE demo_scrapes counter\ndemo_scrapes_total %d\n", n.Add(1))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, eng := range Engines(t) {
		t.Run(eng.String(), func(t *testing.T) {
			t.Parallel()
			s := Start(t, Options{Engine: eng, Targets: []Target{{Addr: ln.Addr().String()}}})
			v := s.WaitFor(t, `demo_scrapes_total`, 30*time.Second, func(v model.Vector) bool { return len(v) == 1 })
			if got := string(v[0].Metric["job_name"]); got != "vllm" {
				t.Errorf("job_name = %q, want vllm (labels %v)", got, v[0].Metric)
			}
			if !eng.IsPrometheus() {
				return // the targets API is a Prometheus's
			}
			ts, err := s.Targets(context.Background())
			if err != nil || len(ts) != 1 || ts[0].Labels["instance"] != ln.Addr().String() || ts[0].Health != "up" || ts[0].LastError != "" {
				t.Errorf("targets: %+v, %v; want the one target, up", ts, err)
			}
		})
	}
}

// TestEngineBinaries: a Prometheus is taken only with the major version its engine names.
func TestEngineBinaries(t *testing.T) {
	for _, eng := range Engines(t) {
		if !eng.IsPrometheus() {
			continue
		}
		v := eng.Version()
		want := map[Engine]string{Prometheus2: "2.", Prometheus3: Prometheus3Version}[eng]
		if !strings.HasPrefix(v, want) {
			t.Errorf("%s version %q, want %s…", eng, v, want)
		}
		t.Logf("%s: %s", eng, v)
	}
	t.Setenv(Prometheus3Env, t.TempDir())
	if err := available(Prometheus3); err == nil {
		t.Errorf("an empty %s directory counts as Prometheus 3", Prometheus3Env)
	}
}

// TestThanosHADedup: the HA pair holds every series twice; the querier with --query.replica-label answers as one
// Prometheus, the one without doubles every sum and keeps the replica label.
func TestThanosHADedup(t *testing.T) {
	EnginesOf(t, ThanosHA)
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	om := demoCounter(base, `instance="e0"`)
	for _, tc := range []struct {
		noDedup  bool
		series   int
		sum      float64
		replicas string
	}{{false, 1, 2, ""}, {true, 2, 4, "a b"}} {
		t.Run(fmt.Sprintf("nodedup=%v", tc.noDedup), func(t *testing.T) {
			s := Start(t, Options{Engine: ThanosHA, OpenMetrics: om, NoDedup: tc.noDedup})
			at := base.Add(4 * time.Minute)
			v, err := s.Query(context.Background(), "demo_requests_total", at)
			if err != nil {
				t.Fatal(err)
			}
			var replicas []string
			for _, smp := range v {
				if r := string(smp.Metric[ReplicaLabel]); r != "" {
					replicas = append(replicas, r)
				}
			}
			slices.Sort(replicas)
			if len(v) != tc.series || strings.Join(replicas, " ") != tc.replicas {
				t.Fatalf("series %v, want %d with replicas %q", v, tc.series, tc.replicas)
			}
			sum, err := s.Query(context.Background(), "sum(rate(demo_requests_total[1m]))", at)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum) != 1 || float64(sum[0].Value) != tc.sum {
				t.Fatalf("sum of rates %v, want %v", sum, tc.sum)
			}
		})
	}
}

// TestTwoServersOfEachEngineAtOnce: the e2e tests that start engines run in parallel, so two servers of one engine
// must run side by side, each answering its own samples. Cortex's alertmanager gossip once listened on the fixed
// 0.0.0.0:9094, and the second Cortex failed to start.
func TestTwoServersOfEachEngineAtOnce(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	for _, eng := range EnginesOf(t, ScaleEngines...) {
		t.Run(eng.String(), func(t *testing.T) {
			first := Start(t, Options{Engine: eng, OpenMetrics: demoCounter(base, `instance="first"`)})
			second := Start(t, Options{Engine: eng, OpenMetrics: demoCounter(base, `instance="second"`)})
			for want, s := range map[string]*Server{"first": first, "second": second} {
				v, err := s.Query(context.Background(), "demo_requests_total", base.Add(4*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				if len(v) == 0 || string(v[0].Metric["instance"]) != want {
					t.Fatalf("%s server answers %v, want its own series", want, v)
				}
			}
		})
	}
}

// TestRemoteWriteRetriesServerErrors: a push the server answers 5xx is sent again (Cortex's internal calls time out
// on a loaded machine), a bounded number of times.
func TestRemoteWriteRetriesServerErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "context deadline exceeded", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	remoteWrite(t, srv.URL, nil, demoCounter(time.Now().Add(-time.Hour).Truncate(time.Minute), `instance="e0"`))
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d requests, want two refused and one accepted", n)
	}
}

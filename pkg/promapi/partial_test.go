package promapi

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestThanosPartialAnswer stops the Prometheus behind one of two Thanos shards (its sidecar stays up, so the
// querier still asks it): by default the querier answers from the other shard only, and the answer must carry the
// notice that it is partial, naming the failed store; with DenyPartial (the data source's "Refuse partial answers")
// the query must fail with a message saying so, never come back with the surviving shard's numbers.
func TestThanosPartialAnswer(t *testing.T) {
	promtest.EnginesOf(t, promtest.ThanosShards)
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	srv := promtest.Start(t, promtest.Options{Engine: promtest.ThanosShards, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
	q := query.Query{QueryType: query.TypeQueue, Measure: "running"}
	r := query.Request{From: base, To: base.Add(time.Minute), Interval: 5 * time.Second}
	eval := func(deny bool) (*Answer, error) {
		ev := evaluator(srv.URL, 30*time.Second)
		ev.Client.DenyPartial = deny
		return ev.Eval(context.Background(), q, r)
	}
	endpoints := func(ans *Answer) []string {
		var out []string
		for _, o := range ans.Result.Outputs {
			out = append(out, o.Labels["endpoint"])
		}
		return out
	}

	for _, deny := range []bool{false, true} {
		ans, err := eval(deny)
		if err != nil {
			t.Fatalf("both stores up, deny=%v: %v", deny, err)
		}
		if got := endpoints(ans); !slices.Equal(got, []string{"e0:8000", "e1:8000"}) {
			t.Fatalf("both stores up, deny=%v: endpoints %q", deny, got)
		}
		for _, n := range ans.Result.Notices {
			if strings.Contains(n, "Partial answer") {
				t.Errorf("both stores up, deny=%v: notice %q", deny, n)
			}
		}
	}

	srv.StopStore(t, 1)
	store := srv.StoreAddr(t, 1)
	ans, err := eval(false)
	if err != nil {
		t.Fatalf("partial answers allowed: %v", err)
	}
	if got := endpoints(ans); !slices.Equal(got, []string{"e0:8000"}) {
		t.Errorf("partial answer: endpoints %q, want the surviving shard's e0:8000", got)
	}
	if want := PartialNotice([]string{store}); !slices.Contains(ans.Result.Notices, want) {
		t.Errorf("partial answer: notices %q lack %q", ans.Result.Notices, want)
	}
	for _, n := range ans.Result.Notices {
		if strings.HasPrefix(n, "Prometheus warning: receive series") {
			t.Errorf("the store's failure is also shown raw: %q", n)
		}
	}

	ans, err = eval(true)
	if err == nil {
		t.Fatalf("partial answers refused: no error, endpoints %q", endpoints(ans))
	}
	if want := PartialRefusedMessage([]string{store}); !strings.Contains(err.Error(), want) {
		t.Errorf("partial answers refused: error %q lacks %q", err, want)
	}
	if strings.Contains(err.Error(), "rejected the generated PromQL") {
		t.Errorf("a failed store reported as a bad expression: %q", err)
	}
}

// TestAnnotationsBecomeNotices checks that the annotations a real engine attaches to an answer (Prometheus 3's
// "infos" and "warnings", which Thanos and Cortex pass on) reach the user as notices, each once, over the user's
// own PromQL.
func TestAnnotationsBecomeNotices(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus3, promtest.ThanosShards, promtest.Cortex) {
		t.Run(eng.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
			ev := evaluatorFor(srv)
			r := query.Request{From: base, To: base.Add(time.Minute), Interval: 5 * time.Second}
			for _, tc := range []struct{ expr, want string }{
				{`rate(vllm:num_requests_running[1m])`, `Prometheus: PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "vllm:num_requests_running"`},
				{`histogram_quantile(0.5, vllm:num_requests_running)`, `Prometheus: PromQL warning: bucket label "le" is missing or has a malformed value`},
			} {
				ans, err := ev.EvalPromQL(context.Background(), query.Query{QueryType: query.TypePromQL, Expr: tc.expr}, r)
				if err != nil {
					t.Fatalf("%s: %v", tc.expr, err)
				}
				n := 0
				for _, notice := range ans.Result.Notices {
					if strings.HasPrefix(notice, tc.want) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%s: %d notices start with %q: %q", tc.expr, n, tc.want, ans.Result.Notices)
				}
			}
		})
	}
}

// TestWarningNotices: every way Thanos names a failed store (series, label names, a store that sent nothing in
// time, one it could not dial), and the stores it lists as unhealthy, fold into one partial notice naming each store once; other warnings keep the server's words.
func TestWarningNotices(t *testing.T) {
	const (
		series = `receive series from Addr: 10.0.0.7:10901 MinTime: 0 MaxTime: 9223372036854775807: rpc error: code = Unknown desc = connection refused`
		slow   = `failed to receive any data in 5s from Addr: 10.0.0.8:10901 MinTime: 0 MaxTime: 1: context deadline exceeded`
		names  = `fetch label names from store Addr: 10.0.0.7:10901 MinTime: 0 MaxTime: 1: rpc error`
		// A store the querier could not dial, after its external labels (which may hold spaces).
		sharded = `fetch series for {shard="1", zone="eu west"} Addr: 10.0.0.9:10901 MinTime: 0 MaxTime: 1: rpc error: code = Unavailable`
	)
	for _, tc := range []struct {
		name        string
		warns, down []string
		want        []string
		truncated   bool
	}{
		{"none", nil, nil, nil, false},
		{"one store", []string{series, series}, nil, []string{PartialNotice([]string{"10.0.0.7:10901"})}, false},
		{"two stores, four ways", []string{series, slow, names, sharded}, nil, []string{PartialNotice([]string{"10.0.0.7:10901", "10.0.0.8:10901", "10.0.0.9:10901"})}, false},
		{"a store known down and one failing", []string{series}, []string{"10.0.0.9:10901"}, []string{PartialNotice([]string{"10.0.0.9:10901", "10.0.0.7:10901"})}, false},
		{"a store known down, no warning", nil, []string{"10.0.0.9:10901"}, []string{PartialNotice([]string{"10.0.0.9:10901"})}, false},
		{"VictoriaMetrics cluster", []string{VictoriaPartialWarning}, nil, []string{PartialNotice(nil)}, false},
		{"annotations and others", []string{`PromQL info: metric might not be a counter`, "partial response: store 2 unavailable", TruncatedWarning}, nil,
			[]string{"Prometheus: PromQL info: metric might not be a counter", "Prometheus warning: partial response: store 2 unavailable"}, true},
		{"partial first", []string{"something else", slow}, nil, []string{PartialNotice([]string{"10.0.0.8:10901"}), "Prometheus warning: something else"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated := WarningNotices(tc.warns, tc.down)
			if !slices.Equal(got, tc.want) || truncated != tc.truncated {
				t.Errorf("WarningNotices = %q, %v; want %q, %v", got, truncated, tc.want, tc.truncated)
			}
		})
	}
}

// TestVictoriaIsPartial: VictoriaMetrics cluster marks an answer missing vmstorage nodes "isPartial": true (its
// single-node build, which the tests run, never does, so the answer is written here as the cluster's
// app/vmselect/prometheus/query_range_response.qtpl writes it); the answer gets the partial notice, and with
// DenyPartial the request asks for deny_partial_response=1.
func TestVictoriaIsPartial(t *testing.T) {
	var (
		mu     sync.Mutex // the evaluator's requests arrive concurrently
		denied []string
	)
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		_ = r.ParseForm()
		if r.URL.Path != "/api/v1/stores" { // Thanos's list of stores takes no such parameter
			mu.Lock()
			denied = append(denied, r.Form.Get("deny_partial_response")+"/"+r.Form.Get("partial_response"))
			mu.Unlock()
		}
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		_, _ = w.Write([]byte(`{"status":"success","isPartial":true,"data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000","engine":"0","model_name":"m"},"values":[[1700000040,"3"]]}]}}`))
		return true
	})
	now := time.Unix(1700000100, 0)
	for _, deny := range []bool{false, true} {
		mu.Lock()
		denied = nil
		mu.Unlock()
		ev := evaluator(srv.URL, time.Second)
		ev.Client.DenyPartial = deny
		ans, err := ev.Eval(context.Background(), query.Query{QueryType: query.TypeQueue, Measure: "running"},
			query.Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ans.Result.Notices, PartialNotice(nil)) {
			t.Errorf("deny=%v: notices %q lack the partial notice", deny, ans.Result.Notices)
		}
		want := "/"
		if deny {
			want = "1/false"
		}
		mu.Lock()
		sent := slices.Clone(denied)
		mu.Unlock()
		for _, d := range sent {
			if d != want {
				t.Errorf("deny=%v: a request sent deny_partial_response/partial_response %q, want %q", deny, d, want)
			}
		}
	}
}

// TestThanosStoreLeftOut stops one of two Thanos shards' sidecar: once its health check fails, Thanos Query leaves
// the store out of every answer without a warning (with partial_response=false too), and only its /api/v1/stores
// says so. The answer must still carry the partial notice naming the store, and with DenyPartial the query must
// fail, never come back with the surviving shard's numbers as the fleet's.
func TestThanosStoreLeftOut(t *testing.T) {
	promtest.EnginesOf(t, promtest.ThanosShards)
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	srv := promtest.Start(t, promtest.Options{Engine: promtest.ThanosShards, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
	c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}
	if down, err := c.DownStores(context.Background()); err != nil || len(down) != 0 {
		t.Fatalf("both stores up: down %q, err %v", down, err)
	}
	srv.StopSidecar(t, 1)
	store := srv.StoreAddr(t, 1)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		down, err := c.DownStores(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(down, []string{store}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Thanos Query does not list %s as unhealthy after 2 minutes (down: %q)", store, down)
		}
		time.Sleep(500 * time.Millisecond)
	}
	q := query.Query{QueryType: query.TypeQueue, Measure: "running"}
	r := query.Request{From: base, To: base.Add(time.Minute), Interval: 5 * time.Second}
	for _, deny := range []bool{false, true} {
		ev := evaluator(srv.URL, 30*time.Second)
		ev.Client.DenyPartial = deny
		ans, err := ev.Eval(context.Background(), q, r)
		if deny {
			if err == nil || !strings.Contains(err.Error(), PartialRefusedMessage([]string{store})) {
				t.Errorf("partial answers refused: error %v, want one saying store %s failed", err, store)
			}
			continue
		}
		if err != nil {
			t.Fatalf("partial answers allowed: %v", err)
		}
		if want := PartialNotice([]string{store}); !slices.Contains(ans.Result.Notices, want) {
			t.Errorf("partial answer: notices %q lack %q", ans.Result.Notices, want)
		}
		if n := len(ans.Result.Outputs); n != 1 {
			t.Errorf("partial answer: %d outputs, want the surviving shard's one", n)
		}
	}
}

// TestDenyPartialElsewhere: servers that know neither partial_response nor deny_partial_response (Prometheus,
// VictoriaMetrics single-node, Cortex) answer as without them, so the setting is safe whatever the data source
// points at.
func TestDenyPartialElsewhere(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	for _, eng := range promtest.EnginesOf(t, promtest.Prometheus3, promtest.VictoriaMetrics151, promtest.Cortex) {
		t.Run(eng.String(), func(t *testing.T) {
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: promtest.RunningGauges(base, "e0:8000", "e1:8000")})
			var answers [2]*Answer
			for i, deny := range []bool{false, true} {
				ev := evaluatorFor(srv)
				ev.Client.DenyPartial = deny
				ans, err := ev.Eval(context.Background(), query.Query{QueryType: query.TypeQueue, Measure: "running"},
					query.Request{From: base, To: base.Add(time.Minute), Interval: 5 * time.Second})
				if err != nil {
					t.Fatalf("deny=%v: %v", deny, err)
				}
				answers[i] = ans
			}
			if len(answers[0].Result.Outputs) != 2 || !reflect.DeepEqual(answers[0].Result, answers[1].Result) {
				t.Errorf("answers differ with DenyPartial: %+v\nwithout: %+v", answers[1].Result, answers[0].Result)
			}
		})
	}
}

// evaluatorFor is evaluator for a test engine, sending what its queries must carry (Cortex's tenant).
func evaluatorFor(srv *promtest.Server) *Evaluator {
	ev := evaluator(srv.URL, 30*time.Second)
	for k, v := range srv.Header {
		ev.Client.HTTP.Transport = headerTransport{k, v[0]}
	}
	return ev
}

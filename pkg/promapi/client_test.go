package promapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

const secret = "s3cr3t-t0ken"

// fakeProm answers like Prometheus: a matrix for query_range, names for label values, or the configured failure.
func fakeProm(t *testing.T, h func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h != nil && h(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/label/"):
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running"]}`))
		case r.URL.Path == "/api/v1/query_range":
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000","engine":"0"},"values":[[1700000000,"3"],[1700000005,"NaN"]]}]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func evaluator(url string, timeout time.Duration) *Evaluator {
	c := &Client{BaseURL: url, HTTP: &http.Client{Timeout: timeout}}
	return &Evaluator{Client: c, Discovery: &Discovery{Client: c}, ScrapeInterval: 5 * time.Second}
}

func promErr(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": typ, "error": msg})
}

func TestEvalErrorsAreClear(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://user:" + secret + "@" + ln.Addr().String()
	ln.Close()
	release := make(chan struct{})
	defer close(release)
	cases := []struct {
		name    string
		url     string
		handler func(w http.ResponseWriter, r *http.Request) bool
		q       query.Query
		want    string
	}{
		{"server down", down, nil, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "Prometheus is unreachable"},
		{"5xx with Prometheus's JSON error", "", func(w http.ResponseWriter, r *http.Request) bool {
			promErr(w, http.StatusServiceUnavailable, "unavailable", "TSDB not ready")
			return true
		}, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "Prometheus answered 503 (unavailable): TSDB not ready"},
		{"422 execution error", "", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/api/v1/query_range" {
				return false
			}
			promErr(w, http.StatusUnprocessableEntity, "execution", "query processing would load too many samples into memory")
			return true
		}, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "too many samples"},
		{"invalid expression", "", func(w http.ResponseWriter, r *http.Request) bool {
			promErr(w, http.StatusBadRequest, "bad_data", `1:5: parse error: unexpected "}"`)
			return true
		}, query.Query{QueryType: query.TypePromQL, Expr: "sum(}"}, `invalid PromQL: 1:5: parse error: unexpected "}"`},
		{"wrong credentials", "", func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("Unauthorized"))
			return true
		}, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "refused the credentials"},
		{"timeout", "", func(w http.ResponseWriter, r *http.Request) bool {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		}, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "did not answer in time"},
		{"not Prometheus", "", func(w http.ResponseWriter, r *http.Request) bool {
			_, _ = w.Write([]byte("<html>login</html>"))
			return true
		}, query.Query{QueryType: query.TypeQueue, Measure: "running"}, "Prometheus answered 200: <html>login</html>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.url
			if u == "" {
				u = fakeProm(t, tc.handler).URL
				u = strings.Replace(u, "http://", "http://user:"+secret+"@", 1)
			}
			ev := evaluator(u, 300*time.Millisecond)
			now := time.Unix(1700000100, 0)
			eval := ev.Eval
			if tc.q.QueryType == query.TypePromQL {
				eval = ev.EvalPromQL
			}
			_, err := eval(context.Background(), tc.q, query.Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error reveals the secret: %q", err)
			}
		})
	}
}

func TestEvalWarningsBecomeNotices(t *testing.T) {
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		_, _ = w.Write([]byte(`{"status":"success","warnings":["partial response: store 2 unavailable"],"data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000","engine":"0","model_name":"m"},"values":[[1700000040,"3"]]}]}}`))
		return true
	})
	now := time.Unix(1700000100, 0)
	ans, err := evaluator(srv.URL, time.Second).Eval(context.Background(), query.Query{QueryType: query.TypeQueue, Measure: "running"},
		query.Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Result.Notices) != 1 || ans.Result.Notices[0] != "Prometheus warning: partial response: store 2 unavailable" {
		t.Errorf("notices = %q", ans.Result.Notices)
	}
	o := ans.Result.Outputs
	if len(o) != 1 || o[0].Measure != "running" || o[0].Labels["endpoint"] != "a:8000" || o[0].Labels["instance"] != "" || o[0].Unit != "short" {
		t.Errorf("outputs = %+v", o)
	}
	if !strings.Contains(ans.PromQL(), `sum by (instance, model_name, engine) (max without (pid) (vllm:num_requests_running{server=""}))`) {
		t.Errorf("PromQL = %s", ans.PromQL())
	}
}

func TestPassThroughExpandsMacros(t *testing.T) {
	var got string
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/v1/query_range" {
			_ = r.ParseForm()
			got = r.Form.Get("query")
		}
		return false
	})
	now := time.Unix(1700000100, 0)
	ans, err := evaluator(srv.URL, time.Second).EvalPromQL(context.Background(),
		query.Query{QueryType: query.TypePromQL, Expr: `rate(x[$__rate_interval]) / $__interval_ms + rate(y[${__interval}]) + z[$__range]`},
		query.Request{From: now.Add(-time.Hour), To: now, Interval: 15 * time.Second, MaxDataPoints: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if want := `rate(x[20s]) / 15000 + rate(y[15s]) + z[1h]`; got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
	if o := ans.Result.Outputs; len(o) != 1 || o[0].Labels["instance"] != "a:8000" || len(o[0].Points) != 1 {
		t.Errorf("pass-through outputs = %+v (labels kept as the server sent them, NaN dropped)", o)
	}
}

func TestBuildInfoToleratesServersWithoutIt(t *testing.T) {
	srv := fakeProm(t, nil) // 404 for /api/v1/status/buildinfo
	_, ok, err := (&Client{BaseURL: srv.URL, HTTP: http.DefaultClient}).BuildInfo(context.Background())
	if err != nil || ok {
		t.Errorf("BuildInfo = ok %v, err %v; want no build info and no error", ok, err)
	}
}

// TestCutAnswerShowsNoSliceOfIt checks that an answer cut off mid-stream (here: the client's timeout while a large
// matrix arrives) is reported as what happened, never with bytes of the answer as the server's message: the
// decoder's buffer has moved on from the answer's head by then.
func TestCutAnswerShowsNoSliceOfIt(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000"},"values":[`))
		for i := range 20000 {
			if i > 0 {
				_, _ = w.Write([]byte(","))
			}
			fmt.Fprintf(w, `[%d,"6377952755905.0501"]`, 1700000000+i)
		}
		w.(http.Flusher).Flush()
		select { // the rest never comes
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	ev := evaluator(srv.URL, 500*time.Millisecond)
	now := time.Unix(1700000100, 0)
	_, err := ev.Eval(context.Background(), query.Query{QueryType: query.TypeQueue, Measure: "running"},
		query.Request{From: now.Add(-time.Minute), To: now, Interval: 5 * time.Second})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "6377952755905") || strings.Contains(err.Error(), "],[") {
		t.Fatalf("the error carries a slice of the answer: %v", err)
	}
	if !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("the error does not say the answer was cut by the timeout: %v", err)
	}
}

// TestStatusAnswersAreBounded: buildinfo and flags are a few kB from any Prometheus; whatever else answers them is
// read to maxStatusAnswer and then dropped (a server without build info), not read whole up to a query's maxBody.
func TestStatusAnswersAreBounded(t *testing.T) {
	const chunk, total = 64 << 10, 64 << 20
	written := make(chan int, 1)
	srv := fakeProm(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/status/buildinfo" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		n, _ := w.Write([]byte(`{"status":"success","data":{"version":"3.16.0","padding":"`))
		pad := []byte(strings.Repeat("x", chunk))
		for n < total {
			m, err := w.Write(pad)
			n += m
			if err != nil {
				break
			}
		}
		_, _ = w.Write([]byte(`"}}`))
		written <- n
		return true
	})
	version, ok, err := (&Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}).BuildInfo(context.Background())
	if err != nil || ok || version != "" {
		t.Errorf("BuildInfo = %q (ok %v), err %v; want no build info and no error", version, ok, err)
	}
	select {
	case n := <-written:
		// What the client did not read stays in the sockets' buffers, a few MB on loopback at most.
		if n > total/2 {
			t.Errorf("the client read %d MB of a status answer before giving up, want about %d MB", n>>20, maxStatusAnswer>>20)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server's write never ended: the client neither read the answer nor closed the connection")
	}
}

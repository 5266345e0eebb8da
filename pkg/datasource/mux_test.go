package datasource

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// fakePrometheus answers discovery with one vLLM job and records the expressions of range queries.
type fakePrometheus struct {
	mu    sync.Mutex
	exprs []string
}

func (f *fakePrometheus) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/v1/label/__name__/values":
			_, _ = w.Write([]byte(`{"status":"success","data":["up","vllm:num_requests_running"]}`))
		case r.URL.Path == "/api/v1/label/job/values":
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm"]}`))
		case strings.HasPrefix(r.URL.Path, "/api/v1/label/"):
			_, _ = w.Write([]byte(`{"status":"success","data":["a:8000"]}`))
		case r.URL.Path == "/api/v1/series":
			_, _ = w.Write([]byte(`{"status":"success","data":[{"__name__":"vllm:num_requests_running","job":"vllm","instance":"a:8000"}]}`))
		case r.URL.Path == "/api/v1/query_range":
			f.mu.Lock()
			f.exprs = append(f.exprs, r.Form.Get("query"))
			f.mu.Unlock()
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"a:8000","job":"vllm"},"values":[[1700000000,"1"]]}]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakePrometheus) sent() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.exprs, "\n")
}

// TestQueryTypesRoute: each query type reaches its handler in each mode through the one query-type table: the
// findings table for diagnosis, the user's expression as is for promql (refused outside Prometheus mode), raw up
// narrowed to vLLM's jobs in Prometheus mode, measures with a stream channel only where the mode scrapes, and the
// settings error for every type when the settings are unusable.
func TestQueryTypesRoute(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer target.Close()
	directJSON, _ := json.Marshal(map[string]any{"endpoints": []map[string]string{{"url": target.URL + "/metrics", "name": "w"}}})
	prom := &fakePrometheus{}
	modes := map[string]backend.DataSourceInstanceSettings{
		"direct":        {UID: "d", JSONData: directJSON},
		"prometheus":    {UID: "p", JSONData: []byte(`{"mode":"prometheus"}`), URL: prom.serve(t)},
		"misconfigured": {UID: "m", JSONData: []byte(`{"mode":"direct"}`)},
	}
	diagnosis := map[string]any{"queryType": "diagnosis"}
	promql := map[string]any{"queryType": "promql", "expr": "sum(up)"}
	up := map[string]any{"queryType": "raw", "metric": "up"}
	running := map[string]any{"queryType": "queue", "measure": "running"}
	cases := []struct {
		mode  string
		q     map[string]any
		frame string // the first frame's name when checked (the fake server's answers name other frames)
		err   string
		// channel says the frames carry a stream channel; sent is what Prometheus mode sent.
		channel bool
		sent    string
	}{
		{"direct", diagnosis, "diagnosis", "", false, ""},
		{"direct", promql, "", "promql queries need a data source in Prometheus mode", false, ""},
		{"direct", up, "raw", "", true, ""},
		{"direct", running, "queue", "", true, ""},
		{"prometheus", promql, "up", "", false, "sum(up)"},
		{"prometheus", up, "", "", false, `job=~"vllm"`},
		{"prometheus", running, "", "", false, "vllm:num_requests_running"},
		{"misconfigured", diagnosis, "", "data source configuration", false, ""},
		{"misconfigured", promql, "", "data source configuration", false, ""},
		{"misconfigured", running, "", "data source configuration", false, ""},
	}
	instances := map[string]*Datasource{}
	for name, s := range modes {
		instances[name] = instance(t, s)
	}
	for _, tc := range cases {
		t.Run(tc.mode+"/"+tc.q["queryType"].(string), func(t *testing.T) {
			js, _ := json.Marshal(tc.q)
			now := time.Now()
			resp, err := instances[tc.mode].QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{
				RefID: "A", JSON: js, Interval: 5 * time.Second, MaxDataPoints: 100,
				TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Responses["A"]
			if tc.err != "" {
				if r.Error == nil || !strings.Contains(r.Error.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", r.Error, tc.err)
				}
				return
			}
			if r.Error != nil {
				t.Fatal(r.Error)
			}
			if len(r.Frames) == 0 {
				t.Fatal("no frames")
			}
			if f := r.Frames[0]; tc.frame != "" && f.Name != tc.frame {
				t.Errorf("frame %q, want %q", f.Name, tc.frame)
			}
			if got := r.Frames[0].Meta != nil && r.Frames[0].Meta.Channel != ""; got != tc.channel {
				t.Errorf("stream channel %v, want %v", got, tc.channel)
			}
			if tc.sent != "" && !strings.Contains(prom.sent(), tc.sent) {
				t.Errorf("Prometheus was sent %q, want %q in it", prom.sent(), tc.sent)
			}
		})
	}
}

// TestGlueCallsOnlyTheModeInterface: no type assertion or type switch on a mode in the glue, so a capability
// differs by mode in one place (mode.go) and a new mode cannot be forgotten by an assertion.
func TestGlueCallsOnlyTheModeInterface(t *testing.T) {
	concrete := map[string]bool{"direct": true, "prometheus": true, "misconfigured": true}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			a, ok := n.(*ast.TypeAssertExpr)
			if !ok {
				return true
			}
			typ := a.Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			id, named := typ.(*ast.Ident)
			sel, onField := a.X.(*ast.SelectorExpr)
			if (named && concrete[id.Name]) || a.Type == nil && onField && sel.Sel.Name == "mode" {
				t.Errorf("%s: type assertion on a mode; give the mode interface the capability instead", fset.Position(a.Pos()))
			}
			return true
		})
	}
}

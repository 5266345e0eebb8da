package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "s3cret-agent-token-0123456789"

// fakeVLLM is the local vLLM the agent drives: /version, /metrics and the torch profiler routes, which it counts.
type fakeVLLM struct {
	*httptest.Server
	starts, stops atomic.Int32
	metrics       string
	failStart     bool
}

func newFakeVLLM(t *testing.T) *fakeVLLM {
	f := &fakeVLLM{metrics: "# TYPE vllm_profiling_server:create_chat_completion:duration histogram\n" +
		"vllm_profiling_server:create_chat_completion:duration_bucket{dp=\"-1\",le=\"+Inf\"} 3\n" +
		"vllm_profiling_server:create_chat_completion:duration_sum{dp=\"-1\"} 0.5\n" +
		"vllm_profiling_server:create_chat_completion:duration_count{dp=\"-1\"} 3\n"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"version":"0.11.0"}`) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, f.metrics) })
	mux.HandleFunc("POST /start_profile", func(w http.ResponseWriter, _ *http.Request) {
		if f.failStart {
			http.Error(w, "profiler not enabled", http.StatusNotFound)
			return
		}
		f.starts.Add(1)
	})
	mux.HandleFunc("POST /stop_profile", func(http.ResponseWriter, *http.Request) { f.stops.Add(1) })
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// testAgent is an agent on loopback with its files in a temporary directory and its audit lines captured.
type testAgent struct {
	*httptest.Server
	srv    *Server
	dir    string
	config string
	traces string
	audit  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestAgent(t *testing.T, vllm *fakeVLLM, mod func(*Config)) *testAgent {
	t.Helper()
	dir := t.TempDir()
	a := &testAgent{dir: dir, config: filepath.Join(dir, "ms_service_profiler_config.json"), traces: filepath.Join(dir, "traces"), audit: &syncBuffer{}}
	if err := os.Mkdir(a.traces, 0o750); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Token: testToken, ProfilerConfig: a.config, VLLM: vllm.URL, TraceDir: a.traces,
		Audit: slog.New(slog.NewJSONHandler(a.audit, nil)), Symbols: filepath.Join(dir, "service_metrics_symbols.yaml")}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.srv = srv
	a.Server = httptest.NewServer(srv.Handler())
	t.Cleanup(func() { a.Close(); srv.Close() })
	return a
}

func (a *testAgent) call(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set(HeaderUser, "alice")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestRefusesToStartWithoutAToken(t *testing.T) {
	for _, tok := range []string{"", "short"} {
		if _, err := New(Config{Token: tok, VLLM: "http://127.0.0.1:1"}); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}

// TestWrongTokenChangesNothing calls every route without the token and with a wrong one: 401 (429 once the
// address's small budget for refusals is spent), the token never echoed, the profiler config byte for byte as it
// was, and the refusals summed up in one audit line.
func TestWrongTokenChangesNothing(t *testing.T) {
	vllm := newFakeVLLM(t)
	a := newTestAgent(t, vllm, nil)
	orig := []byte("{\n  \"enable\": 1,\n  \"metric_enable\": 0,\n  \"prof_dir\": \"/data/prof\"\n}\n")
	if err := os.WriteFile(a.config, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	routes := []struct{ method, path, body string }{
		{"GET", PathProfilerConfig, ""}, {"PUT", PathMetricEnable, `{"value":1}`}, {"GET", PathSymbols, ""},
		{"GET", PathProfile, ""}, {"POST", PathProfile, `{"seconds":5}`}, {"POST", PathProfileStop, "{}"},
		{"GET", PathTraces, ""}, {"GET", PathTraces + "/x.json", ""},
	}
	n := 0
	for _, tok := range []string{"", "wrong-token-wrong-token", testToken + "x", strings.ToUpper(testToken)} {
		for _, r := range routes {
			code, body := a.call(t, r.method, r.path, tok, r.body)
			n++
			if (code != http.StatusUnauthorized && code != http.StatusTooManyRequests) || (n <= RefusedBurst && code != http.StatusUnauthorized) ||
				strings.Contains(body, testToken) {
				t.Errorf("%s %s with token %q: %d %s", r.method, r.path, tok, code, body)
			}
		}
	}
	if got, _ := os.ReadFile(a.config); !bytes.Equal(got, orig) {
		t.Errorf("the file changed:\n%s", got)
	}
	if vllm.starts.Load() != 0 {
		t.Error("an unauthenticated call started a profile")
	}
	a.srv.Close()
	if got := strings.Count(a.audit.String(), "\n"); got != 2 || !strings.Contains(a.audit.String(), `"msg":"refused requests","count":1,"unauthorized":1`) ||
		!strings.Contains(a.audit.String(), fmt.Sprintf(`"count":%d,"unauthorized":%d,"rate_limited":%d`, n-1, RefusedBurst-1, n-RefusedBurst)) {
		t.Errorf("refusals are not summed up in two lines (the first at once, the rest at shutdown): %s", a.audit.String())
	}
	if code, _ := a.call(t, "GET", PathHealth, "", ""); code != http.StatusOK {
		t.Errorf("health needs no token, got %d", code)
	}
}

// TestMetricEnable switches the flag and reads it back, with one audit line naming the Grafana user.
func TestMetricEnable(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	code, body := a.call(t, "GET", PathProfilerConfig, testToken, "")
	if code != http.StatusOK || !strings.Contains(body, `"exists":false`) || !strings.Contains(body, `"metricEnable":0`) {
		t.Fatalf("a missing file: %d %s", code, body)
	}
	code, body = a.call(t, "PUT", PathMetricEnable, testToken, `{"value":1}`)
	if code != http.StatusOK || !strings.Contains(body, `"metricEnable":1`) {
		t.Fatalf("switching on: %d %s", code, body)
	}
	if doc, _ := os.ReadFile(a.config); !strings.Contains(string(doc), `"metric_enable": 1`) {
		t.Errorf("file: %s", doc)
	}
	if !strings.Contains(a.audit.String(), `"msg":"metric_enable changed","log"`) && !strings.Contains(a.audit.String(), `"msg":"metric_enable changed"`) {
		t.Errorf("no audit line: %s", a.audit.String())
	}
	if !strings.Contains(a.audit.String(), `"user":"alice"`) || !strings.Contains(a.audit.String(), `"new":1`) {
		t.Errorf("the audit line lacks the user or the value: %s", a.audit.String())
	}
	for _, bad := range []string{``, `{"value":2}`, `{"value":"1"}`, `{"value":1,"x":0}`, `{"value":1}{"value":0}`, `[1]`, strings.Repeat(" ", MaxBodyBytes+1) + `{"value":1}`} {
		if code, body := a.call(t, "PUT", PathMetricEnable, testToken, bad); code != http.StatusBadRequest {
			t.Errorf("body %.40q: %d %s", bad, code, body)
		}
	}
}

// TestConcurrentToggles switches metric_enable from 200 callers at once: every call answers, and the file is
// valid JSON with every byte but the value as it was.
func TestConcurrentToggles(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	orig := "{\n    \"enable\": 1,\n    \"metric_enable\": 0,\n    \"prof_dir\": \"/data/prof\",\n    \"domain\": \"Request;KVCache\",\n    \"timelimit\": 0\n}\n"
	if err := os.WriteFile(a.config, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("PUT", a.URL+PathMetricEnable, strings.NewReader(`{"value":`+string(rune('0'+i%2))+`}`))
			req.Header.Set("Authorization", "Bearer "+testToken)
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				failed.Add(1)
			}
			if res != nil {
				res.Body.Close()
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of 200 toggles failed", failed.Load())
	}
	doc, _ := os.ReadFile(a.config)
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("the file is not JSON any more: %v\n%s", err, doc)
	}
	if s := strings.Replace(string(doc), `"metric_enable": 1`, `"metric_enable": 0`, 1); s != orig {
		t.Errorf("bytes other than the value changed:\n%s", doc)
	}
}

// TestProfileStopsItself starts a profile from a caller that goes away at once: the agent's timer stops it after its
// seconds, a second start meanwhile is refused, and stopping twice says there is nothing to stop.
func TestProfileStopsItself(t *testing.T) {
	vllm := newFakeVLLM(t)
	a := newTestAgent(t, vllm, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", a.URL+PathProfile, strings.NewReader(`{"seconds":1}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cancel() // the caller disappears
	if res.StatusCode != http.StatusOK || vllm.starts.Load() != 1 {
		t.Fatalf("start: %d, %d starts", res.StatusCode, vllm.starts.Load())
	}
	if code, body := a.call(t, "POST", PathProfile, testToken, `{"seconds":1}`); code != http.StatusConflict {
		t.Errorf("a second profile: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for vllm.stops.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if vllm.stops.Load() != 1 {
		t.Fatal("the agent did not stop the profile after its second")
	}
	if code, body := a.call(t, "GET", PathProfile, testToken, ""); code != http.StatusOK || !strings.Contains(body, `"running":false`) || !strings.Contains(body, `"lastStopped"`) {
		t.Errorf("status after the stop: %d %s", code, body)
	}
	if code, _ := a.call(t, "POST", PathProfileStop, testToken, "{}"); code != http.StatusConflict {
		t.Errorf("stopping nothing: %d", code)
	}
	if !strings.Contains(a.audit.String(), `"user":"(agent timer)"`) {
		t.Errorf("the timer's stop is not audited: %s", a.audit.String())
	}
	for _, bad := range []string{`{"seconds":0}`, `{"seconds":601}`, `{"seconds":"5"}`, `{}`} {
		if code, _ := a.call(t, "POST", PathProfile, testToken, bad); code != http.StatusBadRequest {
			t.Errorf("start %s: %d", bad, code)
		}
	}
	vllm.failStart = true
	if code, body := a.call(t, "POST", PathProfile, testToken, `{"seconds":5}`); code != http.StatusBadGateway || !strings.Contains(body, "VLLM_TORCH_PROFILER_DIR") {
		t.Errorf("vLLM refusing: %d %s", code, body)
	}
}

// TestCloseStopsARunningProfile checks that an agent shutting down never leaves vLLM profiling.
func TestCloseStopsARunningProfile(t *testing.T) {
	vllm := newFakeVLLM(t)
	a := newTestAgent(t, vllm, nil)
	if code, body := a.call(t, "POST", PathProfile, testToken, `{"seconds":300}`); code != http.StatusOK {
		t.Fatalf("start: %d %s", code, body)
	}
	a.srv.Close()
	if vllm.stops.Load() != 1 {
		t.Error("Close left the profile running")
	}
}

// TestTraces lists and downloads traces: regular files only, no path outside the directory, at most MaxTraceBytes.
func TestTraces(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	trace := []byte(`{"traceEvents":[{"name":"step","ph":"X","ts":0,"dur":5}]}`)
	if err := os.WriteFile(filepath.Join(a.traces, "rank0.1700000000.pt.trace.json"), trace, 0o640); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(a.dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(a.traces, "link.json")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(a.traces, "big.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxTraceBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	big.Close()
	code, body := a.call(t, "GET", PathTraces, testToken, "")
	var list TraceList
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list.Traces) != 2 {
		t.Fatalf("list: %d %s", code, body)
	}
	if strings.Contains(body, "link.json") {
		t.Error("a symlink is listed")
	}
	code, body = a.call(t, "GET", PathTraces+"/rank0.1700000000.pt.trace.json", testToken, "")
	if code != http.StatusOK || body != string(trace) {
		t.Errorf("download: %d %q", code, body)
	}
	for name, want := range map[string]int{
		"link.json": http.StatusForbidden, "big.json": http.StatusRequestEntityTooLarge, "none.json": http.StatusNotFound,
		"..%2Fsecret.txt": http.StatusBadRequest, ".hidden": http.StatusBadRequest,
	} {
		code, body := a.call(t, "GET", PathTraces+"/"+name, testToken, "")
		if code != want || strings.Contains(body, "host secret") {
			t.Errorf("%s: %d %s, want %d", name, code, body, want)
		}
	}
}

// TestSymbolsReport checks the file against the running vLLM's version and /metrics.
func TestSymbolsReport(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	code, body := a.call(t, "GET", PathSymbols, testToken, "")
	if code != http.StatusOK || !strings.Contains(body, `"exists":false`) {
		t.Fatalf("no file: %d %s", code, body)
	}
	doc := "- symbol: vllm.entrypoints.openai.serving_chat:OpenAIServingChat.create_chat_completion\n  min_version: \"0.9.1\"\n" +
		"  metrics:\n    - name: server:create_chat_completion:duration\n      type: timer\n" +
		"- symbol: vllm.v1.engine.core:EngineCore.step\n  min_version: \"0.12.0\"\n  metrics:\n    - name: engine:step:duration\n      type: timer\n"
	if err := os.WriteFile(filepath.Join(a.dir, "service_metrics_symbols.yaml"), []byte(doc), 0o640); err != nil {
		t.Fatal(err)
	}
	code, body = a.call(t, "GET", PathSymbols, testToken, "")
	var rep Symbols
	if code != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil {
		t.Fatalf("%d %s", code, body)
	}
	if rep.VLLMVersion != "0.11.0" || len(rep.Entries) != 2 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Message, "older than min_version 0.12.0") {
		t.Errorf("report %+v", rep)
	}
	if !rep.Exposed["vllm_profiling_server:create_chat_completion:duration"] || rep.Exposed["vllm_profiling_engine:step:duration"] {
		t.Errorf("exposed %v", rep.Exposed)
	}
}

func TestRateLimit(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), func(c *Config) { c.Rate, c.Burst = 0.001, 3 })
	var codes []int
	for range 5 {
		code, _ := a.call(t, "GET", PathProfile, testToken, "")
		codes = append(codes, code)
	}
	if codes[2] != http.StatusOK || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Errorf("codes %v", codes)
	}
}

// FuzzRequestBodies feeds the agent's body decoders anything: they answer without panicking and accept exactly
// the documented shapes.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{`{"value":1}`, `{"value":0}`, `{"seconds":30}`, `{"value":1e400}`, `{"seconds":-1}`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if on, err := DecodeSetValue(bytes.NewReader(body)); err == nil {
			var v map[string]json.RawMessage
			if json.Unmarshal(body, &v) != nil || len(v) != 1 || (on && string(v["value"]) != "1") {
				t.Fatalf("accepted %q as %v", body, on)
			}
		}
		if d, err := DecodeProfileStart(bytes.NewReader(body), MaxProfileSeconds*time.Second); err == nil && (d < time.Second || d > MaxProfileSeconds*time.Second) {
			t.Fatalf("accepted %q as %s", body, d)
		}
	})
}

// TestClientNeverFollowsARedirect points the app's client at an agent that redirects elsewhere: the token must not
// reach the other server, and the caller gets the agent's answer as an error.
func TestClientNeverFollowsARedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirecting.Close()
	c, err := NewClient(redirecting.URL, testToken, TLS{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProfilerConfig(context.Background()); err == nil {
		t.Error("a redirect was taken as an answer")
	} else if strings.Contains(err.Error(), testToken) {
		t.Errorf("the error names the token: %v", err)
	}
	if leaked.Load() != 0 {
		t.Error("the token followed the redirect to another server")
	}
	for _, bad := range []string{"ftp://x", "https://user:pw@host:9443", "https://host:9443/?token=x", "host:9443"} {
		if _, err := NewClient(bad, testToken, TLS{}); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

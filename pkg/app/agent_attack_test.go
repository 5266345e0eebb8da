package app

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
)

const (
	attackToken  = "app-agent-token-0123456789abcdef"
	otherToken   = "other-agent-token-fedcba9876543210"
	storedSecret = "stored-secret-of-the-app-42"
)

// secretForms are the forms a secret may come back in: as is, base64 (standard and URL alphabets, padded or not)
// and URL-escaped.
func secretForms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(s)))
		}
	}
	return out
}

// TestEchoingServerAtTheAgentURL puts a server that echoes the request's headers (and a stored secret of the app)
// into its error bodies and into every string field of its 2xx answers at an agent's URL and /metrics URL: no
// answer a Viewer or an Admin gets, and no log line, holds a secret in any encoding.
func TestEchoingServerAtTheAgentURL(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		for k, vs := range r.Header {
			for _, v := range vs {
				lines = append(lines, k+": "+v)
			}
		}
		sort.Strings(lines)
		h := strings.Join(lines, "\n") + "\nstored: " + storedSecret
		b64 := base64.StdEncoding.EncodeToString([]byte(r.Header.Get("Authorization")))
		h64 := base64.RawURLEncoding.EncodeToString([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		everything := h + "\n" + b64 + "\n" + h64 + "\n" + url.QueryEscape(h)
		write := func(status int, v any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(v)
		}
		switch {
		case r.URL.Path == agent.PathProfilerConfig:
			write(200, map[string]any{"path": everything, "exists": true, "problem": everything, "modified": h64})
		case r.URL.Path == agent.PathProfile && r.Method == "GET":
			write(200, map[string]any{"available": true, "lastError": everything, "startedBy": b64, "running": true})
		case r.URL.Path == agent.PathSymbols:
			write(200, map[string]any{"path": everything, "exists": true, "error": everything, "vllmVersion": h64,
				"entries": []map[string]any{{"symbol": everything}}, "problems": []map[string]any{{"message": everything}},
				"exposed": map[string]bool{everything: true}})
		case r.URL.Path == agent.PathTraces:
			write(200, map[string]any{"dir": everything, "traces": []map[string]any{{"name": everything, "modified": b64}}})
		case r.URL.Path == "/metrics":
			http.Error(w, everything, http.StatusForbidden)
		case r.URL.Path == agent.PathProfileStop:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, everything) // not JSON
		default:
			write(http.StatusInternalServerError, map[string]string{"error": everything})
		}
	}))
	defer echo.Close()
	settings := map[string]any{"agents": []map[string]string{
		{"name": "echo", "url": echo.URL, "metricsUrl": echo.URL + "/metrics"},
		{"name": "other", "url": echo.URL},
	}}
	secure := map[string]string{AgentTokenField("echo"): attackToken, AgentTokenField("other"): otherToken, "someStoredSecret": storedSecret}
	a, logs := newAppWithSecrets(t, settings, secure)
	var answers []string
	for _, c := range []struct{ role, method, path, body string }{
		{"Viewer", "GET", "agents", ""},
		{"Viewer", "GET", "agents/echo/symbols", ""},
		{"Viewer", "GET", "agents/other/symbols", ""},
		{"Admin", "PUT", "agents/echo/metric-enable", `{"value":1}`},
		{"Admin", "POST", "agents/echo/profile", `{"seconds":5}`},
		{"Admin", "POST", "agents/echo/profile/stop", ``},
		{"Admin", "GET", "agents/echo/traces", ""},
		{"Admin", "GET", "agents/echo/traces/rank0.json", ""},
	} {
		res := call(t, a, user(c.role), c.method, c.path, c.body)
		answers = append(answers, fmt.Sprintf("%s %s %s: %d %s", c.role, c.method, c.path, res.status, res.raw))
	}
	all := strings.Join(answers, "\n") + "\n" + logs.String()
	if !strings.Contains(all, "Authorization") {
		t.Fatalf("the echo did not reach the answers, so the test proves nothing:\n%.2000s", all)
	}
	for _, f := range secretForms(attackToken, "Bearer "+attackToken, otherToken, "Bearer "+otherToken, storedSecret) {
		if strings.Contains(all, f) {
			t.Errorf("a secret (%.12s…) reached an answer or a log line:\n%.3000s", f, all)
			break
		}
	}
}

// startAgent runs a real agent in the test process on loopback, with a profiler config and a trace directory.
func startAgent(t *testing.T, vllmURL string) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o750); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "ms_service_profiler_config.json")
	writeFile(t, config, "{\n  \"enable\": 1,\n  \"metric_enable\": 0\n}\n")
	srv, err := agent.New(agent.Config{Token: attackToken, ProfilerConfig: config, VLLM: vllmURL, TraceDir: traces,
		Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts, config
}

// TestViewerCannotLockOutAdmins has Viewers poll GET agents as fast as they can (a bounded loop) while an Admin
// switches metric_enable through the same app and agent: every switch succeeds.
func TestViewerCannotLockOutAdmins(t *testing.T) {
	vllm := httptest.NewServer(http.NotFoundHandler())
	defer vllm.Close()
	ag, config := startAgent(t, vllm.URL)
	a, _ := newAppWithSecrets(t, map[string]any{"agents": []map[string]string{{"name": "dp", "url": ag.URL}}},
		map[string]string{AgentTokenField("dp"): attackToken})
	var wg sync.WaitGroup
	var polls atomic.Int32
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 { // bounded
				select {
				case <-stop:
					return
				default:
				}
				call(t, a, user("Viewer"), "GET", "agents", "")
				polls.Add(1)
			}
		}()
	}
	var failed []string
	for i := range 6 {
		for polls.Load() < int32(100*(i+1)) && polls.Load() < 2400 {
			time.Sleep(5 * time.Millisecond)
		}
		if res := call(t, a, user("Admin"), "PUT", "agents/dp/metric-enable", fmt.Sprintf(`{"value":%d}`, (i+1)%2)); res.status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("switch %d: %d %s", i, res.status, res.raw))
		}
	}
	close(stop)
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d of 6 Admin switches failed while Viewers polled %d times:\n%s", len(failed), polls.Load(), strings.Join(failed, "\n"))
	}
	if doc := readFile(t, config); !strings.Contains(doc, `"metric_enable": 0`) {
		t.Errorf("the last switch (to 0) did not land: %s", doc)
	}
}

// TestSlowStopThroughTheApp gives the agent a vLLM whose /stop_profile takes 15 s (writing traces): the stop
// through the app succeeds instead of saying the agent is unreachable.
func TestSlowStopThroughTheApp(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 15 s for a slow vLLM stop")
	}
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stop_profile" {
			time.Sleep(15 * time.Second)
		}
	}))
	defer vllm.Close()
	ag, _ := startAgent(t, vllm.URL)
	a, _ := newAppWithSecrets(t, map[string]any{"agents": []map[string]string{{"name": "dp", "url": ag.URL}}},
		map[string]string{AgentTokenField("dp"): attackToken})
	if res := call(t, a, user("Admin"), "POST", "agents/dp/profile", `{"seconds":60}`); res.status != http.StatusOK {
		t.Fatalf("start: %d %s", res.status, res.raw)
	}
	if res := call(t, a, user("Admin"), "POST", "agents/dp/profile/stop", ``); res.status != http.StatusOK || !strings.Contains(res.raw, `"running":false`) {
		t.Errorf("a 15 s stop through the app: %d %s", res.status, res.raw)
	}
}

// TestCutTraceDownloads answers the app's trace downloads with a Content-Length lie (10 of 1 000 000 bytes), a
// chunked body cut off as by a killed agent, and a chunked body over the download limit: each is an error to the
// Admin, logged as failed, never a 200 with fewer bytes.
func TestCutTraceDownloads(t *testing.T) {
	hijack := func(w http.ResponseWriter, head, body string) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString(head + body)
		_ = buf.Flush()
	}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case agent.PathTraces + "/lie.json":
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n", "0123456789")
		case agent.PathTraces + "/killed.json":
			var b strings.Builder
			for range 16 {
				fmt.Fprintf(&b, "%x\r\n%s\r\n", 4096, strings.Repeat("x", 4096))
			}
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n", b.String())
		case agent.PathTraces + "/huge.json":
			w.WriteHeader(http.StatusOK)
			bw := bufio.NewWriterSize(w, 1<<20)
			chunk := []byte(strings.Repeat("y", 1<<20))
			for range agent.MaxTraceBytes>>20 + 1 {
				if _, err := bw.Write(chunk); err != nil {
					return
				}
			}
			_ = bw.Flush()
		default:
			http.NotFound(w, r)
		}
	}))
	defer fake.Close()
	a, logs := newAppWithSecrets(t, map[string]any{"agents": []map[string]string{{"name": "dp", "url": fake.URL}}},
		map[string]string{AgentTokenField("dp"): attackToken})
	for _, name := range []string{"lie.json", "killed.json", "huge.json"} {
		if r := callRaw(t, a, user("Admin"), "GET", "agents/dp/traces/"+name); r.status == http.StatusOK {
			t.Errorf("%s: 200 with %d bytes; a cut download must be an error", name, len(r.body))
		}
	}
	if l := logs.String(); strings.Contains(l, "Downloaded a trace") || strings.Count(l, "Failed to download a trace") != 3 {
		t.Errorf("the log does not say the downloads failed:\n%s", l)
	}
}

// rawResponse is one resource answer, body undecoded (a trace is not JSON).
type rawResponse struct {
	status int
	body   []byte
}

// callRaw sends a resource request as Grafana would and joins the streamed chunks of the answer.
func callRaw(t *testing.T, a *App, u *backend.User, method, path string) rawResponse {
	t.Helper()
	var out rawResponse
	err := a.CallResource(context.Background(), &backend.CallResourceRequest{
		PluginContext: backend.PluginContext{User: u, PluginID: PluginID}, Path: path, Method: method, URL: path,
	}, backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error {
		if r.Status != 0 {
			out.status = r.Status
		}
		out.body = append(out.body, r.Body...)
		return nil
	}))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return out
}

// TestConcurrentExposureChecksAreBounded has 32 Viewers load the profiler page at once, with eight deployments'
// large /metrics bodies: each body is fetched once (concurrent checks share one), and at most MaxConcurrentReads
// are fetched at a time.
func TestConcurrentExposureChecksAreBounded(t *testing.T) {
	big := "# TYPE vllm_profiling_x counter\nvllm_profiling_x 1\n" + strings.Repeat("# TYPE other_metric_with_a_long_name gauge\n", 1) +
		strings.Repeat("other_metric_with_a_long_name{label=\"value-value-value-value\"} 1\n", 60_000) // about 4 MB
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(200 * time.Millisecond) // a slow deployment keeps checks overlapping
		_, _ = io.WriteString(w, big)
	}))
	defer metrics.Close()
	dir := t.TempDir()
	var files []map[string]string
	for i := range 8 {
		files = append(files, map[string]string{"name": fmt.Sprintf("dp%d", i), "path": filepath.Join(dir, fmt.Sprintf("c%d.json", i)),
			"metricsUrl": fmt.Sprintf("%s/metrics?deployment=%d", metrics.URL, i)})
	}
	a, _ := newTestApp(t, map[string]any{"profilerConfigs": files})
	// Counted where the app sends them, from the request to the body's close: what the server sees also holds
	// the transport's own retries of a GET on a reused connection, and a handler still returning after its client
	// has read the body.
	fetches := &fetchCounter{next: a.client.Transport, each: map[string]int{}}
	a.client.Transport = fetches
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := call(t, a, user("Viewer"), "GET", "profiler-configs", "")
			if res.status != http.StatusOK || !strings.Contains(res.raw, `"exposed":true`) {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of 32 page loads failed", bad.Load())
	}
	fetches.mu.Lock()
	defer fetches.mu.Unlock()
	if fetches.most > MaxConcurrentReads || len(fetches.each) != 8 || fetches.total != 8 {
		t.Errorf("32 page loads over 8 deployments fetched /metrics %d times (%v), %d at once; want each once, at most %d at once",
			fetches.total, fetches.each, fetches.most, MaxConcurrentReads)
	}
}

// fetchCounter counts the requests an http.Client sends by URL, and the most under way at once, each from its
// RoundTrip until its response body is closed.
type fetchCounter struct {
	next             http.RoundTripper
	mu               sync.Mutex
	each             map[string]int
	total, now, most int
}

func (c *fetchCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.each[r.URL.String()]++
	c.total++
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		c.done()
		return nil, err
	}
	resp.Body = &closeHook{ReadCloser: resp.Body, close: sync.OnceFunc(c.done)}
	return resp, nil
}

func (c *fetchCounter) done() {
	c.mu.Lock()
	c.now--
	c.mu.Unlock()
}

// closeHook calls close once the body is closed.
type closeHook struct {
	io.ReadCloser
	close func()
}

func (h *closeHook) Close() error {
	err := h.ReadCloser.Close()
	h.close()
	return err
}

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/inferscope/inferscope-vllm/pkg/app"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestAgentAttackEchoingProxy puts a server that echoes the request's headers into its error bodies and into every
// string field of its 2xx answers at an agent's URL and /metrics URL, and calls every agent resource of the built
// app: no answer and no log line holds the agent token in any encoding.
func TestAgentAttackEchoingProxy(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		for k, vs := range r.Header {
			lines = append(lines, k+": "+strings.Join(vs, ","))
		}
		sort.Strings(lines)
		auth := r.Header.Get("Authorization")
		h := strings.Join(lines, "\n") + "\n" + base64.StdEncoding.EncodeToString([]byte(auth)) + "\n" +
			base64.RawURLEncoding.EncodeToString([]byte(strings.TrimPrefix(auth, "Bearer ")))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/profiler-config":
			_ = json.NewEncoder(w).Encode(map[string]any{"path": h, "exists": true, "problem": h})
		case r.URL.Path == "/v1/profile" && r.Method == "GET":
			_ = json.NewEncoder(w).Encode(map[string]any{"available": true, "lastError": h, "startedBy": h})
		case r.URL.Path == "/v1/symbols":
			_ = json.NewEncoder(w).Encode(map[string]any{"path": h, "exists": true, "error": h, "problems": []map[string]any{{"message": h}},
				"exposed": map[string]bool{h: true}})
		case r.URL.Path == "/v1/traces":
			_ = json.NewEncoder(w).Encode(map[string]any{"dir": h, "traces": []map[string]any{{"name": h}}})
		case r.URL.Path == "/metrics":
			http.Error(w, h, http.StatusForbidden)
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": h})
		}
	}))
	defer echo.Close()
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	settings := map[string]any{"agents": []map[string]string{{"name": "echo", "url": echo.URL, "metricsUrl": echo.URL + "/metrics"}}}
	secure := map[string]string{app.AgentTokenField("echo"): agentToken}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var all []string
	for _, c := range []struct{ role, method, path, body string }{
		{"Viewer", "GET", "agents", ""}, {"Viewer", "GET", "agents/echo/symbols", ""},
		{"Admin", "PUT", "agents/echo/metric-enable", `{"value":1}`}, {"Admin", "POST", "agents/echo/profile", `{"seconds":5}`},
		{"Admin", "POST", "agents/echo/profile/stop", `{}`}, {"Admin", "GET", "agents/echo/traces", ""},
		{"Admin", "GET", "agents/echo/traces/rank0.json", ""},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		res, err := p.CallResource(ctx, harness.AppContext(t, settings, secure, harness.User(c.role)), c.method, c.path, body)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fmt.Sprintf("%s %s: %d %s", c.method, c.path, res.Status, res.Body))
	}
	text := strings.Join(all, "\n") + "\n" + p.Logs()
	if !strings.Contains(text, "Authorization") {
		t.Fatalf("the echo did not reach the answers:\n%.2000s", text)
	}
	forms := []string{agentToken, base64.StdEncoding.EncodeToString([]byte("Bearer " + agentToken)), base64.RawURLEncoding.EncodeToString([]byte(agentToken))}
	for _, f := range forms {
		if strings.Contains(text, f) {
			t.Fatalf("the agent token (as %.16s…) reached an answer or a log line:\n%.3000s", f, text)
		}
	}
	t.Logf("FIGURES echo: %d answers and %d bytes of app log checked, 0 token occurrences in %d encodings", len(all), len(p.Logs()), len(forms))
}

// TestAgentAttackHostileVersionAndCutDownloads gives the built agent a vLLM whose /version is 3 000 characters with
// control characters (a Viewer's symbols report shows no version, only why), drops a download from the agent
// midway (its audit line says cut), and has the built app download from a fake agent that lies about
// Content-Length and from one killed mid-body: both are errors to the Admin, logged as failed.
func TestAgentAttackHostileVersionAndCutDownloads(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o750); err != nil {
		t.Fatal(err)
	}
	symbolsFile := filepath.Join(dir, "service_metrics_symbols.yaml")
	if err := os.WriteFile(symbolsFile, []byte("- symbol: a.b:C.d\n  metrics:\n    - name: x\n      type: timer\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	big, _ := os.Create(filepath.Join(traces, "big.pt.trace.json"))
	_ = big.Truncate(32 << 20) // sparse
	big.Close()
	vllm := newAttackVLLM(t, func(v *attackVLLM) {
		v.version = `{"version":"0.11.0\u001b[2J\r\nforged line\u0007` + strings.Repeat("A", 2970) + `"}`
	})
	ag := startAgent(t, ca, "-symbols="+symbolsFile, "-trace-dir="+traces, "-vllm-url="+vllm.URL)
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	settings := map[string]any{"agents": []map[string]string{{"name": "dp", "url": ag.url}}, "agentCaCert": ca.caPEM}
	secure := map[string]string{app.AgentTokenField("dp"): agentToken}
	res, err := p.CallResource(ctx, harness.AppContext(t, settings, secure, harness.User("Viewer")), "GET", "agents/dp/symbols", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		VLLMVersion  string `json:"vllmVersion"`
		VersionError string `json:"versionError"`
	}
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &rep) != nil || rep.VLLMVersion != "" || rep.VersionError == "" || strings.Contains(string(res.Body), "forged") {
		t.Errorf("a hostile /version: %d %.300s", res.Status, res.Body)
	}
	for _, c := range string(res.Body) {
		if !unicode.IsPrint(c) && c != '\n' {
			t.Fatalf("a control character reached the Viewer: %q", c)
		}
	}

	// A caller drops a download from the agent after 1 KiB: the agent's audit line says it was cut.
	req, _ := http.NewRequestWithContext(ctx, "GET", ag.url+"/v1/traces/big.pt.trace.json", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	dl, err := attackClient(t, ca, "127.0.0.1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadFull(dl.Body, make([]byte, 1024))
	_ = dl.Body.Close()
	if !waitUntil(30*time.Second, func() bool { return strings.Contains(ag.Logs(), `"msg":"trace download cut"`) }) {
		t.Errorf("a cut download is not audited as cut:\n%s", ag.Logs())
	}

	// Through the app, from a fake agent: a Content-Length lie and a body cut as by a killed agent.
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		if strings.HasSuffix(r.URL.Path, "/lie.json") {
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n0123456789")
		} else {
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
			for range 64 {
				_, _ = fmt.Fprintf(buf, "%x\r\n%s\r\n", 8192, strings.Repeat("x", 8192))
			}
		}
		_ = buf.Flush()
	}))
	defer fake.Close()
	fakeSettings := map[string]any{"agents": []map[string]string{{"name": "fake", "url": fake.URL}}}
	fakeSecure := map[string]string{app.AgentTokenField("fake"): agentToken}
	for _, name := range []string{"lie.json", "killed.json"} {
		pc := harness.AppContext(t, fakeSettings, fakeSecure, harness.User("Admin"))
		pc.AppInstanceSettings.LastUpdatedMS++ // other settings, another instance
		res, err := p.CallResource(ctx, pc, "GET", "agents/fake/traces/"+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURES download %s: status %d, %d bytes: %.160s", name, res.Status, len(res.Body), res.Body)
		if res.Status == http.StatusOK {
			t.Errorf("%s: 200 with %d bytes; a cut download must be an error", name, len(res.Body))
		}
	}
	if !waitUntil(10*time.Second, func() bool { return strings.Count(p.Logs(), "Failed to download a trace") == 2 }) || strings.Contains(p.Logs(), "Downloaded a trace") {
		t.Errorf("the app's log does not say both downloads failed:\n%s", p.Logs())
	}
}

package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
	"github.com/inferscope/inferscope-vllm/pkg/app"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

const agentToken = "e2e-agent-token-9f8e7d6c5b4a"

// testCA is a CA, a server certificate it signed for 127.0.0.1 (PEM files) and a client certificate (PEM text).
type testCA struct {
	caPEM, caFile, certFile, keyFile string
	clientCert, clientKey            string
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "inferscope test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "inferscope-agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	clientKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	clientTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "grafana"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	clientDER, err := x509.CreateCertificate(rand.Reader, clientTmpl, ca, &clientKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	clientKeyDER, _ := x509.MarshalECPrivateKey(clientKey)
	c := testCA{
		caPEM:    string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		caFile:   filepath.Join(dir, "ca.crt"),
		certFile: filepath.Join(dir, "agent.crt"), keyFile: filepath.Join(dir, "agent.key"),
		clientCert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clientDER})),
		clientKey:  string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: clientKeyDER})),
	}
	if err := os.WriteFile(c.caFile, []byte(c.caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// agentBinary builds inferscope-agent once per test run (the Go build cache makes later builds cheap).
var agentBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "inferscope-agent-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "inferscope-agent")
	cmd := exec.Command("go", "build", "-o", out, "./pkg/cmd/inferscope-agent")
	cmd.Dir = repoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the agent: %v\n%s", err, b)
	}
	return out, nil
})

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}

// runningAgent is an inferscope-agent process on loopback.
type runningAgent struct {
	url  string
	cmd  *exec.Cmd
	logs *strings.Builder
	mu   *sync.Mutex
}

func (a runningAgent) Logs() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.logs.String()
}

// startAgent runs the agent with TLS and the given flags, and waits for its listening line.
func startAgent(t *testing.T, ca testCA, args ...string) runningAgent {
	t.Helper()
	bin, err := agentBinary()
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(agentToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-listen=127.0.0.1:0", "-token-file=" + tokenFile,
		"-tls-cert=" + ca.certFile, "-tls-key=" + ca.keyFile}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := runningAgent{cmd: cmd, logs: &strings.Builder{}, mu: &sync.Mutex{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.logs.WriteString(line + "\n")
			a.mu.Unlock()
			var l struct {
				Msg, Addr string
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "inferscope-agent listening" {
				addr <- l.Addr
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case a.url = <-addr:
		a.url = "https://" + a.url
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent did not start:\n%s", a.Logs())
	}
	return a
}

// TestProfilerAgent drives a vLLM-Ascend simulator's profiler controls through the built app executable and a
// running inferscope-agent over TLS, as a deployment whose disk Grafana does not share.
func TestProfilerAgent(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	config := profilerConfig(t, 0)
	orig, _ := os.ReadFile(config)
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o750); err != nil {
		t.Fatal(err)
	}
	symbolsFile := filepath.Join(dir, "service_metrics_symbols.yaml")
	symbolsDoc := "- symbol: vllm.entrypoints.openai.serving_chat:OpenAIServingChat.create_chat_completion\n  min_version: \"0.9.1\"\n" +
		"  metrics:\n    - name: server:create_chat_completion:duration\n      type: timer\n" +
		"- symbol: vllm.v1.engine.core.EngineCore.step\n  metrics:\n    - name: engine step\n      type: timer\n"
	if err := os.WriteFile(symbolsFile, []byte(symbolsDoc), 0o640); err != nil {
		t.Fatal(err)
	}
	metricsURL := startSim(t, "-flavor=vllm-ascend", "-engines=2", "-qps=6", "-speed=30", "-profiler-config="+config, "-profiler-poll=100ms",
		"-torch-profiler-dir="+traces, "-symbols-file="+symbolsFile)
	ag := startAgent(t, ca, "-profiler-config="+config, "-symbols="+symbolsFile, "-trace-dir="+traces,
		"-vllm-url="+strings.TrimSuffix(metricsURL, "/metrics"), "-max-profile-seconds=30", "-rate=1000", "-burst=1000")

	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	settings := func(url string) map[string]any {
		return map[string]any{"agents": []map[string]string{{"name": "ascend-dp2", "url": url, "metricsUrl": metricsURL}}, "agentCaCert": ca.caPEM}
	}
	good := map[string]string{app.AgentTokenField("ascend-dp2"): agentToken}
	// Grafana keeps one app instance per settings version: each settings variant below is its own version.
	version := func(pc *pluginv2.PluginContext, v int64) *pluginv2.PluginContext {
		pc.AppInstanceSettings.LastUpdatedMS += v
		return pc
	}
	as := func(role string) *pluginv2.PluginContext {
		return version(harness.AppContext(t, settings(ag.url), good, harness.User(role)), 3)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var bodies []string // every answer, to check that the token never appears
	callApp := func(pc *pluginv2.PluginContext, method, path, body string) (int, []byte) {
		t.Helper()
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		res, err := p.CallResource(ctx, pc, method, path, b)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		bodies = append(bodies, string(res.Body))
		return res.Status, res.Body
	}
	type agentRow struct {
		Config       *agent.ProfilerConfig `json:"config"`
		ConfigError  string                `json:"configError"`
		Exposed      *bool                 `json:"exposed"`
		Profile      *agent.ProfileStatus  `json:"profile"`
		ProfileError string                `json:"profileError"`
	}
	list := func(pc *pluginv2.PluginContext) (agentRow, map[string]any) {
		t.Helper()
		code, body := callApp(pc, "GET", "agents", "")
		var l struct {
			Agents []agentRow `json:"agents"`
		}
		var raw map[string]any
		if code != http.StatusOK || json.Unmarshal(body, &l) != nil || len(l.Agents) != 1 || json.Unmarshal(body, &raw) != nil {
			t.Fatalf("agents: %d %s", code, body)
		}
		return l.Agents[0], raw
	}

	// A wrong token: the agent answers 401, the app says which setting to fix, and nothing changes.
	wrong := version(harness.AppContext(t, settings(ag.url), map[string]string{app.AgentTokenField("ascend-dp2"): "not-the-agent-token"}, harness.User("Admin")), 1)
	if code, body := callApp(wrong, "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusBadGateway || !strings.Contains(string(body), "refused the app's token") {
		t.Errorf("wrong token: %d %s", code, body)
	}
	missing := version(harness.AppContext(t, settings(ag.url), nil, harness.User("Admin")), 2)
	if code, body := callApp(missing, "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusBadGateway || !strings.Contains(string(body), "no token") {
		t.Errorf("no token: %d %s", code, body)
	}
	if row, _ := list(wrong); row.Config != nil || !strings.Contains(row.ConfigError, "refused the app's token") {
		t.Errorf("the list with a wrong token: %+v", row)
	}
	if got, _ := os.ReadFile(config); string(got) != string(orig) {
		t.Fatalf("a refused call changed the file: %s", got)
	}

	// Viewers read, Admins switch; the simulator follows the file the agent wrote.
	if row, raw := list(as("Viewer")); row.Config == nil || row.Config.MetricEnable != 0 || raw["canWrite"] != false || raw["canProfile"] != false {
		t.Fatalf("a Viewer's list: %+v %v", row, raw)
	}
	if code, _ := callApp(as("Viewer"), "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusForbidden {
		t.Errorf("a Viewer's switch: %d", code)
	}
	if code, body := callApp(as("Admin"), "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusOK || !strings.Contains(string(body), `"metricEnable":1`) {
		t.Fatalf("an Admin's switch: %d %s", code, body)
	}
	waitFor(ctx, t, "the app reporting vllm_profiling_* exposed", func() bool {
		row, _ := list(as("Viewer"))
		return row.Exposed != nil && *row.Exposed
	})
	if !strings.Contains(ag.Logs(), `"msg":"metric_enable changed"`) || !strings.Contains(ag.Logs(), `"user":"admin"`) {
		t.Errorf("the agent's audit line lacks the change or the Grafana user:\n%s", ag.Logs())
	}

	// 200 concurrent toggles through the app and the agent: every one answers, the file stays valid, and no byte
	// but the value moves.
	var failed atomic.Int32
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.CallResource(ctx, as("Admin"), "PUT", "agents/ascend-dp2/metric-enable", fmt.Appendf(nil, `{"value": %d}`, i%2))
			if err != nil || res.Status != http.StatusOK {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of 200 concurrent toggles failed", failed.Load())
	}
	doc, _ := os.ReadFile(config)
	var parsed map[string]any
	if json.Unmarshal(doc, &parsed) != nil {
		t.Fatalf("the file is not JSON after concurrent toggles: %s", doc)
	}
	if s := strings.Replace(string(doc), `"metric_enable": 1`, `"metric_enable": 0`, 1); s != string(orig) {
		t.Errorf("bytes other than the value changed:\n%s\nwas\n%s", doc, orig)
	}

	if code, body := callApp(as("Admin"), "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusOK {
		t.Fatalf("switching back on: %d %s", code, body)
	}

	// The symbols file, checked against the running vLLM and its /metrics.
	code, body := callApp(as("Viewer"), "GET", "agents/ascend-dp2/symbols", "")
	var rep agent.Symbols
	if code != http.StatusOK || json.Unmarshal(body, &rep) != nil {
		t.Fatalf("symbols: %d %s", code, body)
	}
	var msgs []string
	for _, pr := range rep.Problems {
		msgs = append(msgs, pr.Message)
	}
	all := strings.Join(msgs, "\n")
	if rep.VLLMVersion != "0.11.0" || !strings.Contains(all, "is not module:Class.method") || !strings.Contains(all, "not a valid Prometheus metric name") {
		t.Errorf("symbols report: version %q, problems:\n%s", rep.VLLMVersion, all)
	}
	waitFor(ctx, t, "the symbols report seeing the timer on /metrics", func() bool {
		_, body := callApp(as("Viewer"), "GET", "agents/ascend-dp2/symbols", "")
		var r agent.Symbols
		return json.Unmarshal(body, &r) == nil && r.Exposed["vllm_profiling_server:create_chat_completion:duration"]
	})

	// A torch profile: Admins only; the agent stops it after its seconds though nobody asks.
	if code, _ := callApp(as("Editor"), "POST", "agents/ascend-dp2/profile", `{"seconds": 2}`); code != http.StatusForbidden {
		t.Errorf("an Editor's profile: %d", code)
	}
	if code, body := callApp(as("Admin"), "POST", "agents/ascend-dp2/profile", `{"seconds": 2}`); code != http.StatusOK || !strings.Contains(string(body), `"running":true`) {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, _ := callApp(as("Admin"), "POST", "agents/ascend-dp2/profile", `{"seconds": 2}`); code != http.StatusConflict {
		t.Errorf("a second profile: %d", code)
	}
	if code, _ := callApp(as("Admin"), "POST", "agents/ascend-dp2/profile", `{"seconds": 31}`); code != http.StatusBadRequest {
		t.Errorf("over the agent's -max-profile-seconds: %d", code)
	}
	waitFor(ctx, t, "the agent stopping the profile by itself", func() bool {
		row, _ := list(as("Viewer"))
		return row.Profile != nil && !row.Profile.Running && row.Profile.LastStopped != ""
	})
	if code, _ := callApp(as("Editor"), "GET", "agents/ascend-dp2/traces", ""); code != http.StatusForbidden {
		t.Errorf("an Editor's trace list: %d", code)
	}
	code, body = callApp(as("Admin"), "GET", "agents/ascend-dp2/traces", "")
	var tl agent.TraceList
	if code != http.StatusOK || json.Unmarshal(body, &tl) != nil || len(tl.Traces) != 1 {
		t.Fatalf("traces: %d %s", code, body)
	}
	name := tl.Traces[0].Name
	want, _ := os.ReadFile(filepath.Join(traces, name))
	if code, _ := callApp(as("Viewer"), "GET", "agents/ascend-dp2/traces/"+name, ""); code != http.StatusForbidden {
		t.Errorf("a Viewer's download: %d", code)
	}
	if code, got := callApp(as("Admin"), "GET", "agents/ascend-dp2/traces/"+name, ""); code != http.StatusOK || string(got) != string(want) || len(want) == 0 {
		t.Errorf("download: %d, %d bytes, want %d", code, len(got), len(want))
	}
	big, _ := os.Create(filepath.Join(traces, "big.pt.trace.json"))
	_ = big.Truncate(agent.MaxTraceBytes + 1) // sparse
	big.Close()
	if code, body := callApp(as("Admin"), "GET", "agents/ascend-dp2/traces/big.pt.trace.json", ""); code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "copy it from") {
		t.Errorf("an oversized trace: %d %s", code, body)
	}

	// The agent goes down: the page's data says so (once the app's read cache, app.ReadCacheTTL, has expired), and
	// a switch fails with the reason.
	_ = ag.cmd.Process.Kill()
	_ = ag.cmd.Wait()
	waitFor(ctx, t, "the list showing the agent down", func() bool {
		row, _ := list(as("Viewer"))
		return row.Config == nil && strings.Contains(row.ConfigError, "unreachable")
	})
	if code, body := callApp(as("Admin"), "PUT", "agents/ascend-dp2/metric-enable", `{"value": 1}`); code != http.StatusBadGateway || !strings.Contains(string(body), "unreachable") {
		t.Errorf("a switch with the agent down: %d %s", code, body)
	}

	for _, b := range append(bodies, p.Logs(), ag.Logs()) {
		if strings.Contains(b, agentToken) {
			t.Fatalf("the agent token leaked: %.300s", b)
		}
	}
}

// TestProfilerAgentMTLS runs an agent that requires client certificates: the app without its certificate is
// refused during the TLS handshake and says so; with it, the agent answers.
func TestProfilerAgentMTLS(t *testing.T) {
	ca := newTestCA(t)
	config := profilerConfig(t, 1)
	metricsURL := startSim(t, "-flavor=vllm-v1", "-qps=1", "-speed=30")
	ag := startAgent(t, ca, "-client-ca="+ca.caFile, "-profiler-config="+config, "-vllm-url="+strings.TrimSuffix(metricsURL, "/metrics"))
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	settings := map[string]any{"agents": []map[string]string{{"name": "mtls", "url": ag.url}}, "agentCaCert": ca.caPEM}
	secure := map[string]string{app.AgentTokenField("mtls"): agentToken}
	list := func(pc *pluginv2.PluginContext) string {
		res, err := p.CallResource(ctx, pc, "GET", "agents", nil)
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("agents: %v %+v", err, res)
		}
		return string(res.Body)
	}
	without := harness.AppContext(t, settings, secure, harness.User("Viewer"))
	if body := list(without); !strings.Contains(body, "unreachable") || !strings.Contains(body, "certificate") || strings.Contains(body, `"metricEnable"`) {
		t.Errorf("without a client certificate: %s", body)
	}
	withCert := map[string]any{"agents": settings["agents"], "agentCaCert": ca.caPEM, "agentClientCert": ca.clientCert}
	secureWith := map[string]string{app.AgentTokenField("mtls"): agentToken, app.AgentClientKeyField: ca.clientKey}
	with := harness.AppContext(t, withCert, secureWith, harness.User("Viewer"))
	with.AppInstanceSettings.LastUpdatedMS++ // another settings version, another instance
	if body := list(with); !strings.Contains(body, `"metricEnable":1`) {
		t.Errorf("with the client certificate: %s", body)
	}
	for _, b := range []string{p.Logs(), ag.Logs()} {
		if strings.Contains(b, agentToken) || strings.Contains(b, "PRIVATE KEY") {
			t.Fatal("a secret reached a log")
		}
	}
}

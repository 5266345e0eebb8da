package agent

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// hostileVLLM is a local vLLM that misbehaves on demand: stops that fail, starts that hang until released, and a
// /version of its choosing.
type hostileVLLM struct {
	*httptest.Server
	starts, stops atomic.Int32
	failStops     atomic.Int32 // how many /stop_profile calls still fail
	startGate     chan struct{}
	startSeen     chan struct{}
	version       string
}

func newHostileVLLM(t *testing.T) *hostileVLLM {
	f := &hostileVLLM{version: `{"version":"0.11.0"}`}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, f.version) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("POST /start_profile", func(http.ResponseWriter, *http.Request) {
		if f.startSeen != nil {
			close(f.startSeen)
			<-f.startGate
		}
		f.starts.Add(1)
	})
	mux.HandleFunc("POST /stop_profile", func(w http.ResponseWriter, _ *http.Request) {
		if f.failStops.Add(-1) >= 0 {
			http.Error(w, "stop failed", http.StatusInternalServerError)
			return
		}
		f.stops.Add(1)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// asFake wraps the hostile vLLM for newTestAgent, which takes a *fakeVLLM for its URL only.
func (f *hostileVLLM) asFake() *fakeVLLM { return &fakeVLLM{Server: f.Server} }

// clientFrom is an HTTP client whose connections come from the loopback address src, so the agent sees a caller
// of its own.
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

func do(t *testing.T, c *http.Client, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestFloodWithoutTokenLeavesTheTokenHolderAlone floods the agent without a token (the /v1 routes and /healthz,
// from 127.0.0.2) while the token holder switches metric_enable and a liveness probe reads /healthz from
// 127.0.0.1: every switch and every probe succeeds, and the refusals are summed up, not logged one line each.
func TestFloodWithoutTokenLeavesTheTokenHolderAlone(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	flooder, holder := clientFrom("127.0.0.2"), clientFrom("127.0.0.1")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flood atomic.Int32
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ { // bounded: at most 4 000 requests
				select {
				case <-stop:
					return
				default:
				}
				path := []string{PathHealth, PathMetricEnable, PathProfile}[(g+i)%3]
				method := map[string]string{PathHealth: "GET", PathMetricEnable: "PUT", PathProfile: "POST"}[path]
				_, _ = do(t, flooder, method, a.URL+path, "", `{"value":1}`)
				flood.Add(1)
			}
		}()
	}
	var codes []int
	for i := range 30 {
		code, _ := do(t, holder, "PUT", a.URL+PathMetricEnable, testToken, `{"value":`+string(rune('0'+i%2))+`}`)
		codes = append(codes, code)
		if i%5 == 0 {
			if code, _ := do(t, holder, "GET", a.URL+PathHealth, "", ""); code != http.StatusOK {
				t.Errorf("the liveness probe got %d during the flood", code)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("switch %d of the token holder: %d (all: %v, %d flood requests)", i, c, codes, flood.Load())
			break
		}
	}
	if lines := strings.Count(a.audit.String(), "\n"); lines > 32 {
		t.Errorf("%d audit lines for %d refused requests: refusals must be counted, not logged each", lines, flood.Load())
	}
}

// TestFailedStopIsRetried gives the agent a vLLM whose first two /stop_profile calls fail: the state shows the
// pending stop, and the agent retries until the profile ends.
func TestFailedStopIsRetried(t *testing.T) {
	vllm := newHostileVLLM(t)
	vllm.failStops.Store(2)
	a := newTestAgent(t, vllm.asFake(), nil)
	if code, body := a.call(t, "POST", PathProfile, testToken, `{"seconds":1}`); code != http.StatusOK {
		t.Fatalf("start: %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	pending := false
	for vllm.stops.Load() == 0 && time.Now().Before(deadline) {
		if _, body := a.call(t, "GET", PathProfile, testToken, ""); strings.Contains(body, `"stopPending":true`) {
			pending = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if vllm.stops.Load() != 1 {
		t.Fatal("the profile never ended after a failed stop")
	}
	if !pending {
		t.Error("the state never showed the pending stop")
	}
	if code, body := a.call(t, "GET", PathProfile, testToken, ""); !strings.Contains(body, `"running":false`) || strings.Contains(body, "stopPending") {
		t.Errorf("after the retried stop: %d %s", code, body)
	}
}

// TestCloseDuringStartStopsTheProfile shuts the agent down while vLLM is still answering /start_profile: the
// shutdown waits for the start and stops the profile it began.
func TestCloseDuringStartStopsTheProfile(t *testing.T) {
	vllm := newHostileVLLM(t)
	vllm.startSeen, vllm.startGate = make(chan struct{}), make(chan struct{})
	a := newTestAgent(t, vllm.asFake(), nil)
	started := make(chan int, 1)
	go func() {
		code, _ := do(t, http.DefaultClient, "POST", a.URL+PathProfile, testToken, `{"seconds":300}`)
		started <- code
	}()
	select {
	case <-vllm.startSeen:
	case <-time.After(30 * time.Second):
		t.Fatal("the start never reached vLLM")
	}
	closed := make(chan struct{})
	go func() { a.srv.Close(); close(closed) }()
	time.Sleep(100 * time.Millisecond) // let Close begin while the start is under way
	close(vllm.startGate)
	<-closed
	if code := <-started; code != http.StatusOK {
		t.Errorf("the start under way: %d", code)
	}
	if vllm.starts.Load() != 1 || vllm.stops.Load() != 1 {
		t.Errorf("shutdown during a start: %d starts, %d stops; vLLM was left profiling", vllm.starts.Load(), vllm.stops.Load())
	}
}

// TestHostileVersionIsCleaned gives the symbols report a /version of 3 000 characters with control characters:
// none of it reaches the caller (vllm.CleanVersion, the scraper's rule, refuses it).
func TestHostileVersionIsCleaned(t *testing.T) {
	vllm := newHostileVLLM(t)
	vllm.version = `{"version":"0.11.0\u001b[2J\r\nforged audit line\u0007` + strings.Repeat("A", 2960) + `"}` // 3 000 characters
	a := newTestAgent(t, vllm.asFake(), nil)
	if err := os.WriteFile(filepath.Join(a.dir, "service_metrics_symbols.yaml"), []byte("- symbol: a.b:C.d\n  metrics:\n    - name: x\n      type: timer\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	code, body := a.call(t, "GET", PathSymbols, testToken, "")
	var rep struct {
		VLLMVersion  string `json:"vllmVersion"`
		VersionError string `json:"versionError"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil {
		t.Fatalf("%d %.300s", code, body)
	}
	if rep.VLLMVersion != "" || rep.VersionError == "" || strings.Contains(body, "forged") {
		t.Errorf("a hostile /version reached the caller: version %.80q, error %q", rep.VLLMVersion, rep.VersionError)
	}
	for _, c := range rep.VLLMVersion + rep.VersionError {
		if !unicode.IsPrint(c) {
			t.Fatalf("a control character reached the caller: %q", rep.VLLMVersion)
		}
	}
}

// TestTraceDirSwappedForSymlink swaps -trace-dir for a symlink to the directory holding the agent's token file
// after the agent started: listing and downloading are refused, and the token file is never served.
func TestTraceDirSwappedForSymlink(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	if err := os.WriteFile(filepath.Join(a.traces, "rank0.pt.trace.json"), []byte(`{"traceEvents":[]}`), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _ := a.call(t, "GET", PathTraces, testToken, ""); code != http.StatusOK {
		t.Fatalf("listing before the swap: %d", code)
	}
	secrets := filepath.Join(a.dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "token.json"), []byte(testToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(a.traces, a.traces+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secrets, a.traces); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{PathTraces, PathTraces + "/token.json", PathTraces + "/rank0.pt.trace.json"} {
		code, body := a.call(t, "GET", path, testToken, "")
		if code == http.StatusOK || strings.Contains(body, testToken) || strings.Contains(body, "token.json") {
			t.Errorf("%s after the swap: %d %.200s", path, code, body)
		}
	}
}

// TestCutDownloadIsAudited has a caller drop a download after its first bytes: the audit line says the download
// was cut and how far it got, not that it succeeded.
func TestCutDownloadIsAudited(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), nil)
	f, err := os.Create(filepath.Join(a.traces, "big.pt.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxTraceBytes); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", a.URL+PathTraces+"/big.pt.trace.json", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	cancel()
	res.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(a.audit.String(), "trace download") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if log := a.audit.String(); !strings.Contains(log, `"msg":"trace download cut"`) || strings.Contains(log, `"msg":"trace downloaded"`) {
		t.Errorf("a cut download is not audited as cut:\n%s", log)
	}
}

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// attackClient is an HTTPS client of the test CA whose connections come from the loopback address src, so the
// agent sees a caller of its own.
func attackClient(t *testing.T, ca testCA, src string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca.caPEM)) {
		t.Fatal("the test CA is not PEM")
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// agentCall sends one request to an agent and returns its status and body; status 0 is a transport error.
func agentCall(c *http.Client, method, url, token, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// attackVLLM is a local vLLM for the agent that misbehaves on demand.
type attackVLLM struct {
	*httptest.Server
	starts, stops atomic.Int32
	failStops     atomic.Int32 // /stop_profile calls that still fail
	startDelay    time.Duration
	stopDelay     time.Duration
	startSeen     chan struct{} // closed when the first /start_profile arrives
	version       string
}

func newAttackVLLM(t *testing.T, mod func(*attackVLLM)) *attackVLLM {
	t.Helper()
	v := &attackVLLM{version: `{"version":"0.11.0"}`, startSeen: make(chan struct{})}
	if mod != nil {
		mod(v)
	}
	var seen atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, v.version) })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "# TYPE vllm_profiling_x counter\nvllm_profiling_x 1\n")
	})
	mux.HandleFunc("POST /start_profile", func(http.ResponseWriter, *http.Request) {
		if seen.CompareAndSwap(false, true) {
			close(v.startSeen)
		}
		time.Sleep(v.startDelay)
		v.starts.Add(1)
	})
	mux.HandleFunc("POST /stop_profile", func(w http.ResponseWriter, _ *http.Request) {
		if v.failStops.Add(-1) >= 0 {
			http.Error(w, "stop failed", http.StatusInternalServerError)
			return
		}
		time.Sleep(v.stopDelay)
		v.stops.Add(1)
	})
	v.Server = httptest.NewServer(mux)
	t.Cleanup(v.Close)
	return v
}

// procStatus reads one field of /proc/PID/status as a number (kB for memory fields); 0 when unknown.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var n int64
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%d", &n)
			return n
		}
	}
	return 0
}

// waitUntil polls cond every 50 ms for up to limit.
func waitUntil(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// sampleMax samples f every 5 ms until the returned stop is called, which returns the highest value seen.
func sampleMax(f func() int64) (stop func() int64) {
	done, out := make(chan struct{}), make(chan int64, 1)
	go func() {
		peak := f()
		for {
			select {
			case <-done:
				out <- max(peak, f())
				return
			case <-time.After(5 * time.Millisecond):
				peak = max(peak, f())
			}
		}
	}()
	return func() int64 { close(done); return <-out }
}

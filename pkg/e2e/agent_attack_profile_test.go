package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/app"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// traceDir makes an empty trace directory for an agent.
func traceDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "traces")
	if err := os.Mkdir(d, 0o750); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAgentAttackFailedStop gives the built agent a vLLM whose first two /stop_profile calls fail: the profile's
// state shows the pending stop, and the agent keeps trying until the profile ends.
func TestAgentAttackFailedStop(t *testing.T) {
	ca := newTestCA(t)
	vllm := newAttackVLLM(t, func(v *attackVLLM) { v.failStops.Store(2) })
	ag := startAgent(t, ca, "-trace-dir="+traceDir(t), "-vllm-url="+vllm.URL)
	c := attackClient(t, ca, "127.0.0.1")
	if code, body := agentCall(c, "POST", ag.url+"/v1/profile", agentToken, `{"seconds":1}`); code != http.StatusOK {
		t.Fatalf("start: %d %s", code, body)
	}
	pending := false
	ended := waitUntil(60*time.Second, func() bool {
		_, body := agentCall(c, "GET", ag.url+"/v1/profile", agentToken, "")
		pending = pending || strings.Contains(body, `"stopPending":true`)
		return vllm.stops.Load() == 1 && strings.Contains(body, `"running":false`)
	})
	t.Logf("FIGURES failed stop: ended %v after %d failed stops, pending shown %v", ended, 2, pending)
	if !ended || !pending {
		t.Errorf("a failed stop: ended %v, pending shown %v; agent log:\n%s", ended, pending, ag.Logs())
	}
}

// TestAgentAttackSIGTERMDuringStart sends SIGTERM to the built agent while vLLM is still answering /start_profile
// (2 s): the start is answered, the profile is stopped, and the agent exits cleanly.
func TestAgentAttackSIGTERMDuringStart(t *testing.T) {
	ca := newTestCA(t)
	vllm := newAttackVLLM(t, func(v *attackVLLM) { v.startDelay = 2 * time.Second })
	ag := startAgent(t, ca, "-trace-dir="+traceDir(t), "-vllm-url="+vllm.URL)
	c := attackClient(t, ca, "127.0.0.1")
	answered := make(chan int, 1)
	go func() {
		code, _ := agentCall(c, "POST", ag.url+"/v1/profile", agentToken, `{"seconds":300}`)
		answered <- code
	}()
	select {
	case <-vllm.startSeen:
	case <-time.After(30 * time.Second):
		t.Fatal("the start never reached vLLM")
	}
	if err := ag.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ag.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the agent did not exit within 60 s of SIGTERM")
	}
	var code int
	select {
	case code = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the start request was not answered within 30 s of the agent's exit")
	}
	t.Logf("FIGURES SIGTERM during start: start answered %d, vLLM starts %d, stops %d, exit %v", code, vllm.starts.Load(), vllm.stops.Load(), err)
	if err != nil || code != http.StatusOK || vllm.starts.Load() != 1 || vllm.stops.Load() != 1 {
		t.Errorf("SIGTERM during a start left vLLM profiling or the request unanswered; agent log:\n%s", ag.Logs())
	}
}

// TestAgentAttackSlowStopThroughTheApp gives the built agent a vLLM whose /stop_profile takes 15 s: the stop
// through the built app succeeds.
func TestAgentAttackSlowStopThroughTheApp(t *testing.T) {
	ca := newTestCA(t)
	vllm := newAttackVLLM(t, func(v *attackVLLM) { v.stopDelay = 15 * time.Second })
	ag := startAgent(t, ca, "-trace-dir="+traceDir(t), "-vllm-url="+vllm.URL)
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	settings := map[string]any{"agents": []map[string]string{{"name": "dp", "url": ag.url}}, "agentCaCert": ca.caPEM}
	secure := map[string]string{app.AgentTokenField("dp"): agentToken}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := harness.AppContext(t, settings, secure, harness.User("Admin"))
	if res, err := p.CallResource(ctx, admin, "POST", "agents/dp/profile", []byte(`{"seconds":60}`)); err != nil || res.Status != http.StatusOK {
		t.Fatalf("start: %v %+v", err, res)
	}
	start := time.Now()
	res, err := p.CallResource(ctx, admin, "POST", "agents/dp/profile/stop", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURES 15 s stop through the app: %d after %.1f s: %.200s", res.Status, time.Since(start).Seconds(), res.Body)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"running":false`) {
		t.Errorf("a 15 s stop through the app: %d %s", res.Status, res.Body)
	}
}

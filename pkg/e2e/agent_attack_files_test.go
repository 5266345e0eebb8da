//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestAgentAttackFIFO puts a FIFO at the built agent's symbols path and asks for the report 200 times at once:
// every request answers that it is not a regular file, and the agent's OS threads stay bounded.
func TestAgentAttackFIFO(t *testing.T) {
	ca := newTestCA(t)
	fifo := filepath.Join(t.TempDir(), "service_metrics_symbols.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // release readers a blocking open left waiting
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			_ = w.Close()
		}
	})
	vllm := newAttackVLLM(t, nil)
	ag := startAgent(t, ca, "-symbols="+fifo, "-vllm-url="+vllm.URL, "-rate=100000", "-burst=100000")
	before := procStatus(ag.cmd.Process.Pid, "Threads")
	c := attackClient(t, ca, "127.0.0.1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	stop := sampleMax(func() int64 { return procStatus(ag.cmd.Process.Pid, "Threads") })
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := agentCall(c, "GET", ag.url+"/v1/symbols", agentToken, "")
			if code != http.StatusOK || !strings.Contains(body, "not a regular file") {
				mu.Lock()
				bad++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	peak := stop()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("FIGURES FIFO: 200 concurrent requests, %d failed; agent threads %d before, peak %d", bad, before, peak)
	if bad > 0 || peak > before+64 {
		t.Errorf("a FIFO at the symbols path: %d of 200 requests failed, threads %d → peak %d", bad, before, peak)
	}
}

// TestAgentAttackTraceDir swaps the built agent's -trace-dir for a symlink to the directory of its token file
// (refused), then lists a directory of 50 000 trace files 20 times at once (each answers the newest 200; the
// agent's resident memory is reported).
func TestAgentAttackTraceDir(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o750); err != nil {
		t.Fatal(err)
	}
	vllm := newAttackVLLM(t, nil)
	ag := startAgent(t, ca, "-trace-dir="+traces, "-vllm-url="+vllm.URL, "-rate=100000", "-burst=100000")
	c := attackClient(t, ca, "127.0.0.1")

	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "token.json"), []byte(agentToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(traces, traces+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secrets, traces); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/traces", "/v1/traces/token.json"} {
		code, body := agentCall(c, "GET", ag.url+path, agentToken, "")
		t.Logf("FIGURES swapped trace dir: %s → %d %.120s", path, code, body)
		if code == http.StatusOK || strings.Contains(body, agentToken) || strings.Contains(body, "token.json") {
			t.Errorf("%s after the swap: %d %.200s", path, code, body)
		}
	}
	if err := os.Remove(traces); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(traces+".real", traces); err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		return
	}
	base := time.Now().Add(-50_000 * time.Second)
	for i := range 50_000 {
		p := filepath.Join(traces, fmt.Sprintf("rank%d.%06d.pt.trace.json", i%8, i))
		if err := os.WriteFile(p, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		mod := base.Add(time.Duration(i) * time.Second)
		_ = os.Chtimes(p, mod, mod)
	}
	rssBefore := procStatus(ag.cmd.Process.Pid, "VmRSS")
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := agentCall(c, "GET", ag.url+"/v1/traces", agentToken, "")
			var l struct {
				Traces []struct{ Name string } `json:"traces"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(body), &l) != nil || len(l.Traces) != 200 || l.Traces[0].Name != "rank7.049999.pt.trace.json" {
				mu.Lock()
				bad++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	hwm := procStatus(ag.cmd.Process.Pid, "VmHWM")
	t.Logf("FIGURES 50 000 files × 20 listings: %d failed; agent RSS %d MB before, high-water mark %d MB", bad, rssBefore>>10, hwm>>10)
	if bad > 0 {
		t.Errorf("%d of 20 listings failed", bad)
	}
}

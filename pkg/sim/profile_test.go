package sim

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestTorchProfilerRoutes checks vLLM's profiler API: absent without a profiler directory, and with one a start and
// a stop leave one Chrome trace file covering the profiled span; /version names the flavor's release.
func TestTorchProfilerRoutes(t *testing.T) {
	clock := &manualClock{}
	off, err := NewServerWithClock(testConfig(nil), testStart, clock, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(off.Handler())
	defer ts.Close()
	if code := post(t, ts.URL+"/start_profile"); code != http.StatusNotFound {
		t.Errorf("without VLLM_TORCH_PROFILER_DIR /start_profile answered %d", code)
	}
	_, body := get(t, ts.URL+"/version", false)
	if !strings.Contains(body, `"version":"0.13.0"`) {
		t.Errorf("/version: %s", body)
	}

	dir := t.TempDir()
	on, err := NewServerWithClock(testConfig(func(c *Config) { c.TorchProfilerDir = dir }), testStart, clock, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(on.Handler())
	defer ts2.Close()
	if code := post(t, ts2.URL+"/stop_profile"); code != http.StatusOK {
		t.Errorf("stopping nothing: %d", code)
	}
	if code := post(t, ts2.URL+"/start_profile"); code != http.StatusOK {
		t.Fatalf("start: %d", code)
	}
	clock.add(2 * time.Second)
	if code := post(t, ts2.URL+"/stop_profile"); code != http.StatusOK {
		t.Fatalf("stop: %d", code)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pt.trace.json"))
	if len(files) != 1 {
		t.Fatalf("trace files %v", files)
	}
	doc, _ := os.ReadFile(files[0])
	var trace struct {
		TraceEvents []struct {
			Ph string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(doc, &trace); err != nil || len(trace.TraceEvents) != 200 {
		t.Errorf("trace: %v, %d events", err, len(trace.TraceEvents))
	}
}

// TestSymbolsFileTimers checks that the Ascend flavor records the timers of its symbols file that are active on its
// vLLM version, instead of the shipped file's one.
func TestSymbolsFileTimers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service_metrics_symbols.yaml")
	doc := "- symbol: vllm.entrypoints.openai.serving_completion:OpenAIServingCompletion.create_completion\n" +
		"  min_version: \"0.9.1\"\n  metrics:\n    - name: server:create_completion:duration\n      type: timer\n" +
		"- symbol: vllm.v1.engine.core:EngineCore.step\n  min_version: \"0.99.0\"\n  metrics:\n    - name: engine:step:duration\n      type: timer\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newTestFleet(t, testConfig(func(c *Config) { c.Flavor, c.SymbolsFile = FlavorAscend, path }))
	f.SetProfilingEnabled(true)
	f.Advance(2 * time.Minute)
	fams := parse(t, render(t, f))
	if fams["vllm_profiling_server:create_completion:duration"] == nil {
		t.Error("the file's timer is missing")
	}
	if fams["vllm_profiling_engine:step:duration"] != nil || fams[defaultTimer] != nil {
		t.Error("a timer inactive on this vLLM, or the default one, is recorded")
	}
	if _, err := NewFleet(testConfig(func(c *Config) { c.Flavor, c.SymbolsFile = FlavorAscend, path+".missing" }), testStart); err == nil {
		t.Error("a missing symbols file was accepted")
	}
}

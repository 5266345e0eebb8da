package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock is a Clock tests move by hand.
type manualClock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *manualClock) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d
}

func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	c.d += d
	c.mu.Unlock()
}

// syncBuffer collects log output from several goroutines.
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

func get(t *testing.T, url string, gz bool) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	// A bare transport, so gzip is not negotiated and decoded behind our back.
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestServerHTTP: /health answers, /metrics is text format 0.0.4, gzip on request, and the model
// follows the clock between scrapes.
func TestServerHTTP(t *testing.T) {
	clock := &manualClock{}
	srv, err := NewServerWithClock(testConfig(nil), testStart, clock, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	if resp, _ := get(t, ts.URL+"/health", false); resp.StatusCode != http.StatusOK {
		t.Fatalf("/health: %d", resp.StatusCode)
	}
	resp, plain := get(t, ts.URL+"/metrics", false)
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if resp.Header.Get("Content-Encoding") != "" {
		t.Error("compressed without Accept-Encoding")
	}
	before := sumOver(parse(t, plain)["vllm:generation_tokens_total"], nil)

	clock.add(2 * time.Minute)
	resp, zipped := get(t, ts.URL+"/metrics", true)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatal("Accept-Encoding: gzip was not honoured")
	}
	if after := sumOver(parse(t, zipped)["vllm:generation_tokens_total"], nil); after <= before {
		t.Fatalf("generation tokens %v -> %v after two simulated minutes", before, after)
	}
	if resp, _ := get(t, ts.URL+"/nope", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/nope: %d", resp.StatusCode)
	}
}

// steppingWall is a real-time clock that moves by step at each reading, so that catching up runs out of budget after
// a known number of steps whatever the machine's speed.
type steppingWall struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (w *steppingWall) read() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(w.step)
	return w.now
}

// TestScrapeAnswersWhileBehind: a simulator far behind its clock (a loaded machine) answers a scrape after a bounded
// amount of catching up, with the state it reached; ticks then close the gap, and the model they reach step by step
// is the one a single catch-up reaches.
func TestScrapeAnswersWhileBehind(t *testing.T) {
	const behind = 2 * time.Minute
	clock := &manualClock{}
	srv, err := NewServerWithClock(testConfig(nil), testStart, clock, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	srv.wall = (&steppingWall{now: testStart, step: 100 * time.Millisecond}).read
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	clock.add(behind)
	resp, body := get(t, ts.URL+"/metrics", false)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "vllm:generation_tokens_total") {
		t.Fatalf("scrape while behind: %d\n%.300s", resp.StatusCode, body)
	}
	srv.mu.Lock() // orders the reads below after the handler's writes, for the race detector
	reached := srv.fleet.Elapsed()
	srv.mu.Unlock()
	// The budget is five readings of the stepping wall: five or six steps, never the whole two minutes.
	if reached < catchUpStep || reached > 6*catchUpStep {
		t.Fatalf("one scrape advanced the model to %v of %v; want a bounded catch-up of a few %v steps", reached, behind, catchUpStep)
	}

	for i := 0; i < 1000 && srv.fleet.Elapsed() < behind; i++ {
		srv.Tick()
	}
	if srv.fleet.Elapsed() != behind {
		t.Fatalf("ticks left the model at %v of %v", srv.fleet.Elapsed(), behind)
	}
	_, stepped := get(t, ts.URL+"/metrics", false)

	// The same model caught up in one go: a wall that never moves never runs out of budget.
	twin, err := NewServerWithClock(testConfig(nil), testStart, clock, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	twin.wall = func() time.Time { return testStart }
	tts := httptest.NewServer(twin.Handler())
	defer tts.Close()
	if _, whole := get(t, tts.URL+"/metrics", false); whole != stepped {
		t.Errorf("the model caught up step by step differs from the one caught up at once")
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{"gzip": true, "deflate, gzip;q=1.0": true, "GZIP": true,
		"identity": false, "": false, "gzip;q=0": false} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}

// TestMetricEnableToggle flips metric_enable in the file while the server runs and watches the
// vllm_profiling_* families come and go on /metrics, each change logged as the Ascend tool does.
func TestMetricEnableToggle(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProfilerConfigName)
	writeJSON := func(enable int) {
		b, _ := json.Marshal(map[string]any{"enable": 0, "metric_enable": enable, "prof_dir": "/tmp/prof/"})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(0)
	cfg := testConfig(func(c *Config) {
		c.Flavor, c.Engines, c.QPS, c.ProfilerConfig = FlavorAscend, 2, 8, path
		c.ProfilerPoll = Duration(20 * time.Millisecond)
	})
	logs := &syncBuffer{}
	clock := &manualClock{}
	srv, err := NewServerWithClock(cfg, testStart, clock, log.New(logs, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/metrics"

	// profiled polls /metrics, moving simulated time, until the families are present (or gone).
	profiled := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for {
			clock.add(10 * time.Second)
			_, body := get(t, url, false)
			fams := parse(t, body)
			has := fams["vllm_profiling_batch_size"] != nil && fams["vllm_profiling_free_kvcache_blocks"] != nil
			some := strings.Contains(body, "vllm_profiling_")
			if want && has || !want && !some {
				if fams["vllm:num_requests_running"] == nil {
					t.Fatal("vllm:* families must stay regardless of metric_enable")
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("vllm_profiling_* present=%v, want %v within 2s of the change", some, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	profiled(false)
	writeJSON(1)
	profiled(true)
	writeJSON(0)
	profiled(false)
	writeJSON(1)
	profiled(true)

	out := logs.String()
	if n := strings.Count(out, "Metric collection enabled"); n != 2 {
		t.Errorf("logged %d enables, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "Metric collection disabled"); n != 1 {
		t.Errorf("logged %d disables, want 1:\n%s", n, out)
	}
}

// TestProfilerConfigFile covers a missing file (created with the tool's defaults), malformed
// content (reported once per change, treated as off) and the accepted spellings of the switch.
func TestProfilerConfigFile(t *testing.T) {
	t.Run("missing file is created with defaults", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ProfilerConfigName)
		logs := &syncBuffer{}
		p := NewProfilerSwitch(path, log.New(logs, "", 0))
		p.Check()
		p.Check()
		if p.Enabled() {
			t.Fatal("enabled without a file")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("default config not created: %v", err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("created file is not JSON: %v", err)
		}
		for k, v := range map[string]any{"enable": 0.0, "metric_enable": 0.0, "profiler_level": "INFO",
			"acl_task_time": 0.0, "timelimit": 0.0, "domain": ""} {
			if doc[k] != v {
				t.Errorf("default %s = %v, want %v", k, doc[k], v)
			}
		}
		if s, _ := doc["prof_dir"].(string); !strings.HasSuffix(s, "/.ms_server_profiler/") {
			t.Errorf("prof_dir %q", doc["prof_dir"])
		}
		if strings.Count(logs.String(), "Created default profiler config") != 1 {
			t.Errorf("log: %s", logs.String())
		}
		leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "temp_*"))
		if len(leftovers) != 0 {
			t.Errorf("temporary files left behind: %v", leftovers)
		}
	})

	t.Run("malformed content", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ProfilerConfigName)
		logs := &syncBuffer{}
		p := NewProfilerSwitch(path, log.New(logs, "", 0))
		steps := []struct {
			content string
			enabled bool
			invalid int // cumulative "Invalid profiler config" lines
		}{
			{`{"metric_enable": 1}`, true, 0},
			{`{"metric_enable": 1`, false, 1},
			{`{"metric_enable": 1`, false, 1}, // unchanged: not reported again
			{`{"metric_enable": "yes"}`, false, 2},
			{`[1, 2]`, false, 3},
			{`{"metric_enable": true}`, true, 3},
			{`{"metric_enable": 2}`, false, 4},
			{`{"enable": 1}`, false, 4}, // absent key: off, and not an error
			{``, false, 5},
		}
		for i, s := range steps {
			if err := os.WriteFile(path, []byte(s.content), 0o600); err != nil {
				t.Fatal(err)
			}
			p.Check()
			p.Check()
			if p.Enabled() != s.enabled {
				t.Fatalf("step %d (%q): enabled = %v", i, s.content, p.Enabled())
			}
			if n := strings.Count(logs.String(), "Invalid profiler config"); n != s.invalid {
				t.Fatalf("step %d (%q): %d problem reports, want %d:\n%s", i, s.content, n, s.invalid, logs.String())
			}
		}
	})

	t.Run("no path configured", func(t *testing.T) {
		logs := &syncBuffer{}
		p := NewProfilerSwitch("", log.New(logs, "", 0))
		p.Check()
		p.Check()
		if p.Enabled() || strings.Count(logs.String(), "SERVICE_PROF_CONFIG_PATH is not set") != 1 {
			t.Fatalf("enabled=%v log=%s", p.Enabled(), logs.String())
		}
	})

	t.Run("path not ending in .json is not created", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "profiler.conf")
		p := NewProfilerSwitch(path, log.New(io.Discard, "", 0))
		p.Check()
		if _, err := os.Stat(path); err == nil || p.Enabled() {
			t.Fatal("created a non-.json config or enabled")
		}
	})
}

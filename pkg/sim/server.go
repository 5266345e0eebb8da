package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Clock maps real time to simulated time since the fleet started.
type Clock interface {
	// Elapsed returns simulated time since start.
	Elapsed() time.Duration
}

// ScaledClock runs Speed simulated seconds per real second from a start instant.
type ScaledClock struct {
	Start time.Time
	Speed float64
	// Now returns the real time; time.Now when nil.
	Now func() time.Time
}

// Elapsed returns simulated time since Start.
func (c ScaledClock) Elapsed() time.Duration {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return time.Duration(float64(now().Sub(c.Start)) * c.Speed)
}

// catchUpStep is how much simulated time the model advances under one hold of the server's lock: a scrape that
// arrives while the model catches up waits for one step, not for the whole way to the clock.
const catchUpStep = time.Second

// Real time the model may spend catching up before a scrape is answered, and per periodic tick. A simulator that
// fell behind real time (a loaded machine, the race detector) then answers within a scraper's timeout with the state
// it has reached, and the ticks keep closing the gap, instead of every scrape having more to simulate than the one
// before and none finishing.
const (
	scrapeCatchUp = 500 * time.Millisecond
	tickCatchUp   = 150 * time.Millisecond
)

// Server is the thin HTTP layer over a Fleet: it advances the model toward the clock before each
// scrape and serves /metrics and /health.
type Server struct {
	cfg   Config
	clock Clock
	prof  *ProfilerSwitch
	log   *log.Logger
	// wall is the real time that bounds catching up; time.Now unless a test replaces it.
	wall func() time.Time

	mu    sync.Mutex
	fleet *Fleet
	// profileStart is when the torch profile running now started (simulated time); zero when none runs.
	profileStart time.Duration
	profiling    bool
}

// NewServer builds the fleet for cfg on a real-time clock scaled by cfg.Speed.
func NewServer(cfg Config, logger *log.Logger) (*Server, error) {
	start := time.Now()
	return NewServerWithClock(cfg, start, ScaledClock{Start: start, Speed: cfg.Speed}, logger)
}

// NewServerWithClock is NewServer with an explicit start instant and clock, for tests.
func NewServerWithClock(cfg Config, start time.Time, clock Clock, logger *log.Logger) (*Server, error) {
	if logger == nil {
		logger = log.Default()
	}
	f, err := NewFleet(cfg, start)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, clock: clock, log: logger, wall: time.Now, fleet: f}
	if cfg.Flavor == FlavorAscend {
		s.prof = NewProfilerSwitch(cfg.ProfilerConfig, logger)
	}
	return s, nil
}

// Handler serves /metrics and /health.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"version": s.cfg.servedVersion()})
	})
	// vLLM registers its profiler routes only when VLLM_TORCH_PROFILER_DIR is set.
	if s.cfg.TorchProfilerDir != "" {
		mux.HandleFunc("POST /start_profile", s.startProfile)
		mux.HandleFunc("POST /stop_profile", s.stopProfile)
	}
	return mux
}

// Tick advances the model toward the clock for at most tickCatchUp of real time; the server calls it periodically so
// that simulated work is spread out instead of landing on the next scrape.
func (s *Server) Tick() { s.advance(tickCatchUp) }

// advance moves the model toward the clock one catchUpStep at a time, releasing the lock between steps, until it
// reaches the clock or budget of real time is spent.
func (s *Server) advance(budget time.Duration) {
	deadline := s.wall().Add(budget)
	for {
		s.mu.Lock()
		reached := s.stepLocked()
		s.mu.Unlock()
		if reached || !s.wall().Before(deadline) {
			return
		}
	}
}

// stepLocked advances the model by at most catchUpStep toward the clock and reports whether it reached the clock.
func (s *Server) stepLocked() bool {
	if s.prof != nil {
		s.fleet.SetProfilingEnabled(s.prof.Enabled())
	}
	target := s.clock.Elapsed()
	if next := s.fleet.Elapsed() + catchUpStep; next < target {
		s.fleet.AdvanceTo(next)
		return false
	}
	s.fleet.AdvanceTo(target)
	return true
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	s.advance(scrapeCatchUp)
	s.mu.Lock()
	err := s.fleet.WriteExposition(&buf)
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	contentType := "text/plain; version=0.0.4; charset=utf-8"
	if s.cfg.Flavor == FlavorDynamoWorker || s.cfg.Flavor == FlavorDynamoFrontend {
		contentType = "text/plain; version=0.0.4"
	}
	w.Header().Set("Content-Type", contentType)
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write(buf.Bytes())
		_ = gz.Close()
		return
	}
	_, _ = w.Write(buf.Bytes())
}

func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// Run serves on ln until ctx ends, ticking the model and watching the profiler config.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.prof != nil {
		s.prof.Check()
		go s.prof.Run(ctx, time.Duration(s.cfg.ProfilerPoll))
	}
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.Tick()
			}
		}
	}()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { // #nosec G118 -- runs once ctx is done: the shutdown needs a deadline of its own, not the cancelled ctx
		<-ctx.Done()
		shut, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startProfile is vLLM's POST /start_profile: it starts the torch profiler.
func (s *Server) startProfile(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profiling, s.profileStart = true, s.clock.Elapsed()
	w.WriteHeader(http.StatusOK)
}

// stopProfile is vLLM's POST /stop_profile: it stops the profiler and writes its trace, a Chrome trace-event file
// as torch.profiler exports, into the profiler directory.
func (s *Server) stopProfile(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	running, from, to := s.profiling, s.profileStart, s.clock.Elapsed()
	s.profiling = false
	s.mu.Unlock()
	if !running {
		w.WriteHeader(http.StatusOK) // vLLM only logs that no profiler was running
		return
	}
	if err := writeTrace(s.cfg.TorchProfilerDir, from, to); err != nil {
		s.log.Printf("writing the torch trace: %v", err)
		http.Error(w, "writing the trace failed", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// writeTrace writes one trace file (temp file, then rename, so a reader never sees half of it): a step event every
// simulated 10 ms of the profiled span, at most 1000.
func writeTrace(dir string, from, to time.Duration) error {
	type event struct {
		Name string  `json:"name"`
		Ph   string  `json:"ph"`
		Ts   float64 `json:"ts"`
		Dur  float64 `json:"dur"`
		Pid  int     `json:"pid"`
		Tid  int     `json:"tid"`
	}
	var events []event
	for t := from; t < to && len(events) < 1000; t += 10 * time.Millisecond {
		events = append(events, event{Name: "execute_model", Ph: "X", Ts: float64(t.Microseconds()), Dur: 8000, Pid: os.Getpid(), Tid: 1})
	}
	doc, err := json.Marshal(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
	if err != nil {
		return err
	}
	name := fmt.Sprintf("sim_%d.%d.pt.trace.json", os.Getpid(), time.Now().UnixMilli())
	tmp, err := os.CreateTemp(dir, ".trace-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(doc); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// torch writes traces with the process umask (0644 usually); a sidecar agent under another uid reads them.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // #nosec G302 -- a trace is meant to be read by the agent
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

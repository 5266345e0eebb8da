package agent

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
	"github.com/inferscope/inferscope-vllm/pkg/profilerconfig"
)

// Config is what one agent manages and how it guards it.
type Config struct {
	// Token is the bearer token every /v1 call must carry, at least MinTokenLength bytes.
	Token string
	// ProfilerConfig is the path of ms_service_profiler_config.json; empty when this deployment has none.
	ProfilerConfig string
	// OverwriteReadOnly lets the switch replace the file when it has no write permission bit.
	OverwriteReadOnly bool
	// Symbols is the path of service_metrics_symbols.yaml; empty when this deployment has none.
	Symbols string
	// VLLM is the local vLLM server's base URL (http://127.0.0.1:8000): /version, /metrics, /start_profile,
	// /stop_profile.
	VLLM string
	// TraceDir is vLLM's VLLM_TORCH_PROFILER_DIR; empty switches torch profiling off.
	TraceDir string
	// MaxProfile bounds one profile; 0 means MaxProfileSeconds.
	MaxProfile time.Duration
	// Rate and Burst limit the token holder's requests per second and at once, reads and changes each; 0 means
	// DefaultRate and DefaultBurst.
	Rate  float64
	Burst int
	// Audit receives one line per change; nil writes nowhere.
	Audit *slog.Logger
	// Client calls the local vLLM; nil uses a client without redirects.
	Client *http.Client
}

// Server is one running agent.
type Server struct {
	cfg     Config
	token   [sha256.Size]byte
	files   *profilerconfig.AllowList
	traces  *traceDir
	reads   *bucket // the token holder's reads
	writes  *bucket // the token holder's changes: switches, profile starts and stops
	health  *perAddress
	unauth  *perAddress
	refused refusals
	done    chan struct{} // closed by Shutdown: ends the refusal summaries
	closed  sync.Once
	prof    *profiler
	handler http.Handler
}

// New checks cfg and builds the agent; it refuses a missing or short token.
func New(cfg Config) (*Server, error) {
	if len(cfg.Token) < MinTokenLength {
		return nil, fmt.Errorf("the agent needs a token of at least %d characters (it refuses to run without one)", MinTokenLength)
	}
	if cfg.VLLM == "" {
		return nil, errors.New("the agent needs the local vLLM's base URL")
	}
	if cfg.MaxProfile <= 0 || cfg.MaxProfile > MaxProfileSeconds*time.Second {
		cfg.MaxProfile = MaxProfileSeconds * time.Second
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Audit == nil {
		cfg.Audit = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s := &Server{cfg: cfg, token: sha256.Sum256([]byte(cfg.Token)), reads: newBucket(cfg.Rate, cfg.Burst), writes: newBucket(cfg.Rate, cfg.Burst),
		health: newPerAddress(HealthRate, HealthBurst, MaxTrackedAddresses), unauth: newPerAddress(RefusedRate, RefusedBurst, MaxTrackedAddresses)}
	if cfg.ProfilerConfig != "" {
		l, err := profilerconfig.NewAllowListOf(profilerconfig.Entry{Path: cfg.ProfilerConfig, OverwriteReadOnly: cfg.OverwriteReadOnly})
		if err != nil {
			return nil, err
		}
		s.files = l
	}
	if cfg.TraceDir != "" {
		t, err := pinTraceDir(cfg.TraceDir)
		if err != nil {
			return nil, err
		}
		s.traces = t
	}
	s.done = make(chan struct{})
	go s.summarize()
	s.prof = newProfiler(cfg.Client, strings.TrimRight(cfg.VLLM, "/"), cfg.TraceDir, cfg.MaxProfile, cfg.Audit)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET "+PathProfilerConfig, s.getProfilerConfig)
	mux.HandleFunc("PUT "+PathMetricEnable, s.setMetricEnable)
	mux.HandleFunc("GET "+PathSymbols, s.getSymbols)
	mux.HandleFunc("GET "+PathProfile, s.getProfile)
	mux.HandleFunc("POST "+PathProfile, s.startProfile)
	mux.HandleFunc("POST "+PathProfileStop, s.stopProfile)
	mux.HandleFunc("GET "+PathTraces, s.listTraces)
	mux.HandleFunc("GET "+PathTraces+"/{name}", s.getTrace)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Error(w, http.StatusNotFound, "no such route: "+r.Method+" "+r.URL.Path)
	})
	s.handler = s.guard(mux)
	return s, nil
}

// Handler is the agent's HTTP API.
func (s *Server) Handler() http.Handler { return s.handler }

// Close is Shutdown bounded by ShutdownTimeout.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	s.Shutdown(ctx)
}

// Shutdown refuses new profiles, waits (until ctx ends) for a start or stop under way, and stops a profile that is
// running or was starting, retrying a failed stop until ctx ends, so shutting the agent down never leaves vLLM
// profiling. It writes the last summary of refused requests.
func (s *Server) Shutdown(ctx context.Context) {
	s.closed.Do(func() { close(s.done) })
	s.prof.shutdown(ctx)
	s.refused.flush(s.cfg.Audit)
	if s.traces != nil {
		_ = s.traces.root.Close()
	}
}

// summarize writes the refusals not yet reported once per RefusedSummaryInterval, so the last ones of a flood are
// not left unreported until the next refusal.
func (s *Server) summarize() {
	t := time.NewTicker(RefusedSummaryInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.refused.flush(s.cfg.Audit)
		case <-s.done:
			return
		}
	}
}

// authorized compares the bearer token's hash with the agent's in constant time, so neither the token's length nor
// its prefix leaks through timing.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

// userOf is the Grafana login the app passed, cut to printable characters so it cannot forge audit lines.
func userOf(r *http.Request) string {
	u := strings.Map(func(c rune) rune {
		if unicode.IsPrint(c) {
			return c
		}
		return -1
	}, r.Header.Get(HeaderUser))
	if len(u) > 128 {
		u = u[:128]
	}
	if u == "" {
		return "(not given)"
	}
	return u
}

func (s *Server) getProfilerConfig(w http.ResponseWriter, _ *http.Request) {
	if s.files == nil {
		httpjson.Error(w, http.StatusNotFound, "this agent manages no profiler config (start it with -profiler-config)")
		return
	}
	st, err := s.files.Read(s.cfg.ProfilerConfig)
	if err != nil {
		httpjson.Error(w, profilerconfig.HTTPStatus(err), err.Error())
		return
	}
	httpjson.Write(w, http.StatusOK, s.view(st))
}

func (s *Server) setMetricEnable(w http.ResponseWriter, r *http.Request) {
	if s.files == nil {
		httpjson.Error(w, http.StatusNotFound, "this agent manages no profiler config (start it with -profiler-config)")
		return
	}
	on, err := DecodeSetValue(r.Body)
	if err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	change, err := s.files.SetMetricEnable(s.cfg.ProfilerConfig, on)
	if err != nil {
		s.cfg.Audit.Error("metric_enable change failed", "user", userOf(r), "remote", r.RemoteAddr, "path", s.cfg.ProfilerConfig, "error", err)
		httpjson.Error(w, profilerconfig.HTTPStatus(err), err.Error())
		return
	}
	s.cfg.Audit.Info("metric_enable changed", "user", userOf(r), "remote", r.RemoteAddr, "path", change.Path,
		"old", bit(change.Old), "new", bit(change.New), "created", change.Created, "written", change.Written)
	httpjson.Write(w, http.StatusOK, s.view(change.State))
}

func (s *Server) view(st profilerconfig.State) ProfilerConfig {
	v := ProfilerConfig{Path: s.cfg.ProfilerConfig, Exists: st.Exists, MetricEnable: bit(st.MetricEnable), Enable: bit(st.Enable), Problem: st.Problem}
	if !st.ModTime.IsZero() {
		v.Modified = st.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// DecodeSetValue reads {"value": 0|1}, nothing else.
// The value must be written 0 or 1 exactly (not -0, 1.0 or "1"); the agent and the app's shared-file mode both
// decode with it.
func DecodeSetValue(body io.Reader) (bool, error) {
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := decodeStrict(body, &v); err != nil {
		return false, fmt.Errorf(`body must be {"value": 0} or {"value": 1}: %v`, err)
	}
	switch string(v.Value) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, errors.New(`body must be {"value": 0} or {"value": 1}`)
}

// DecodeProfileStart reads {"seconds": N} with N within 1–max.
func DecodeProfileStart(body io.Reader, max time.Duration) (time.Duration, error) {
	var v ProfileStart
	if err := decodeStrict(body, &v); err != nil {
		return 0, fmt.Errorf(`body must be {"seconds": N}: %v`, err)
	}
	limit := int(max / time.Second)
	if v.Seconds < 1 || v.Seconds > limit {
		return 0, fmt.Errorf("seconds must be between 1 and %d, got %d", limit, v.Seconds)
	}
	return time.Duration(v.Seconds) * time.Second, nil
}

// decodeStrict decodes one JSON object with no unknown fields and nothing after it.
func decodeStrict(body io.Reader, v any) error {
	if body == nil {
		return errors.New("empty body")
	}
	dec := json.NewDecoder(io.LimitReader(body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

func (s *Server) getProfile(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, s.prof.status())
}

func (s *Server) startProfile(w http.ResponseWriter, r *http.Request) {
	d, err := DecodeProfileStart(r.Body, s.cfg.MaxProfile)
	if err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	// The profile belongs to the agent, not to this request: a caller that goes away does not stop it early, and
	// the agent's timer stops it on time.
	st, err := s.prof.start(context.WithoutCancel(r.Context()), d, userOf(r), r.RemoteAddr)
	if err != nil {
		httpjson.Error(w, profileStatus(err), err.Error())
		return
	}
	httpjson.Write(w, http.StatusOK, st)
}

func (s *Server) stopProfile(w http.ResponseWriter, r *http.Request) {
	st, err := s.prof.stop(context.WithoutCancel(r.Context()), userOf(r), r.RemoteAddr)
	if err != nil {
		httpjson.Error(w, profileStatus(err), err.Error())
		return
	}
	httpjson.Write(w, http.StatusOK, st)
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

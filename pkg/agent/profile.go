package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
)

// Errors of the profiler's state machine.
var (
	ErrProfileBusy    = errors.New("a torch profile is already running or stopping; one at a time")
	ErrNoProfile      = errors.New("no torch profile is running")
	ErrProfilingOff   = errors.New("torch profiling is off on this agent: start it with -trace-dir set to vLLM's VLLM_TORCH_PROFILER_DIR")
	errVLLMProfileAPI = errors.New("vLLM refused the profiler call")
)

// vllmCallTimeout bounds one call to vLLM's profiler API: stop_profile returns once the traces are written, which
// takes tens of seconds for a long profile.
const vllmCallTimeout = 2 * time.Minute

// profiler drives vLLM's torch profiler: one profile at a time, stopped by the agent's own timer.
type profiler struct {
	client *http.Client
	vllm   string
	dir    string
	max    time.Duration
	audit  *slog.Logger

	mu       sync.Mutex
	busy     bool // a start or stop call to vLLM is under way
	running  bool
	started  time.Time
	ends     time.Time
	by       string
	lastErr  string
	lastStop time.Time
	timer    *time.Timer
	gen      int // counts profiles, so a late timer does not stop the next one
}

func newProfiler(c *http.Client, vllm, dir string, max time.Duration, audit *slog.Logger) *profiler {
	return &profiler{client: c, vllm: vllm, dir: dir, max: max, audit: audit}
}

func (p *profiler) status() ProfileStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := ProfileStatus{Available: p.dir != "", Running: p.running, LastError: p.lastErr, MaxSeconds: int(p.max / time.Second)}
	if p.running {
		st.StartedAt, st.EndsAt, st.StartedBy = stamp(p.started), stamp(p.ends), p.by
	}
	if !p.lastStop.IsZero() {
		st.LastStopped = stamp(p.lastStop)
	}
	return st
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// start asks vLLM to start profiling and arms the timer that stops it after d.
func (p *profiler) start(ctx context.Context, d time.Duration, user, remote string) (ProfileStatus, error) {
	if p.dir == "" {
		return ProfileStatus{}, ErrProfilingOff
	}
	p.mu.Lock()
	if p.busy || p.running {
		p.mu.Unlock()
		return ProfileStatus{}, ErrProfileBusy
	}
	p.busy = true
	p.mu.Unlock()

	err := p.call(ctx, "/start_profile")

	p.mu.Lock()
	p.busy = false
	if err != nil {
		p.lastErr = err.Error()
		p.mu.Unlock()
		p.audit.Error("torch profile start failed", "user", user, "remote", remote, "error", err)
		return p.status(), err
	}
	p.gen++
	gen := p.gen
	p.running, p.started, p.by, p.lastErr = true, time.Now(), user, ""
	p.ends = p.started.Add(d)
	p.timer = time.AfterFunc(d, func() { p.expire(gen) })
	p.mu.Unlock()
	p.audit.Info("torch profile started", "user", user, "remote", remote, "seconds", int(d/time.Second))
	return p.status(), nil
}

// expire is the timer's stop: it stops profile gen if that one is still running.
func (p *profiler) expire(gen int) {
	p.mu.Lock()
	current := p.running && p.gen == gen
	p.mu.Unlock()
	if current {
		_, _ = p.stop(context.Background(), "(agent timer)", "")
	}
}

// stop asks vLLM to stop profiling, which writes the traces.
func (p *profiler) stop(ctx context.Context, user, remote string) (ProfileStatus, error) {
	p.mu.Lock()
	if p.busy {
		p.mu.Unlock()
		return ProfileStatus{}, ErrProfileBusy
	}
	if !p.running {
		p.mu.Unlock()
		return ProfileStatus{}, ErrNoProfile
	}
	p.busy = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()

	err := p.call(ctx, "/stop_profile")

	p.mu.Lock()
	p.busy = false
	if err != nil {
		// vLLM may still be profiling: stay running so a retry (or the shutdown) stops it.
		p.lastErr = err.Error()
		p.mu.Unlock()
		p.audit.Error("torch profile stop failed", "user", user, "remote", remote, "error", err)
		return p.status(), err
	}
	p.running, p.lastErr, p.lastStop = false, "", time.Now()
	p.mu.Unlock()
	p.audit.Info("torch profile stopped", "user", user, "remote", remote)
	return p.status(), nil
}

// shutdown stops a running profile before the agent exits.
func (p *profiler) shutdown() {
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running {
		_, _ = p.stop(context.Background(), "(agent shutdown)", "")
	}
}

// call POSTs to one of vLLM's profiler routes.
func (p *profiler) call(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, vllmCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.vllm+path, nil)
	if err != nil {
		return err
	}
	res, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("vLLM at %s did not answer %s: %w", p.vllm, path, unwrapURL(err))
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %s answered %s (is VLLM_TORCH_PROFILER_DIR set on vLLM?)", errVLLMProfileAPI, path, res.Status)
	}
	return nil
}

// unwrapURL drops url.Error's method and URL, which the message already names.
func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

func profileStatus(err error) int {
	switch {
	case errors.Is(err, ErrProfilingOff):
		return http.StatusNotFound
	case errors.Is(err, ErrProfileBusy), errors.Is(err, ErrNoProfile):
		return http.StatusConflict
	}
	return http.StatusBadGateway
}

// traceName is what a trace file may be called: one path segment, no hidden files.
var traceName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,254}$`)

// ValidTraceName reports whether name can be a trace's name: the app checks before asking, the agent again.
func ValidTraceName(name string) bool { return traceName.MatchString(name) }

func (s *Server) listTraces(w http.ResponseWriter, _ *http.Request) {
	if s.cfg.TraceDir == "" {
		httpjson.Error(w, http.StatusNotFound, ErrProfilingOff.Error())
		return
	}
	entries, err := os.ReadDir(s.cfg.TraceDir)
	if err != nil {
		httpjson.Error(w, http.StatusInternalServerError, fmt.Sprintf("cannot read the trace directory: %v", err))
		return
	}
	list := TraceList{Dir: s.cfg.TraceDir, Traces: []Trace{}, MaxBytes: MaxTraceBytes}
	for _, e := range entries {
		// Regular files only: a symlink in the directory could point anywhere on the host.
		if !e.Type().IsRegular() || !traceName.MatchString(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		list.Traces = append(list.Traces, Trace{Name: e.Name(), Size: fi.Size(), Modified: stamp(fi.ModTime())})
	}
	sort.Slice(list.Traces, func(i, j int) bool { return list.Traces[i].Modified > list.Traces[j].Modified })
	if len(list.Traces) > MaxTraces {
		list.Traces, list.Truncated = list.Traces[:MaxTraces], true
	}
	httpjson.Write(w, http.StatusOK, list)
}

// getTrace streams one trace file: a regular file directly in the trace directory, at most MaxTraceBytes.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) {
	if s.cfg.TraceDir == "" {
		httpjson.Error(w, http.StatusNotFound, ErrProfilingOff.Error())
		return
	}
	name := r.PathValue("name")
	if !traceName.MatchString(name) {
		httpjson.Error(w, http.StatusBadRequest, "a trace name is one file name of letters, digits, '.', '_', '+' and '-'")
		return
	}
	root, err := os.OpenRoot(s.cfg.TraceDir)
	if err != nil {
		httpjson.Error(w, http.StatusInternalServerError, fmt.Sprintf("cannot open the trace directory: %v", err))
		return
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		httpjson.Error(w, http.StatusNotFound, "no trace named "+strconv.Quote(name))
		return
	case err != nil:
		httpjson.Error(w, http.StatusInternalServerError, err.Error())
		return
	case !fi.Mode().IsRegular():
		httpjson.Error(w, http.StatusForbidden, strconv.Quote(name)+" is not a regular file")
		return
	}
	f, err := root.Open(name) // os.Root never leaves the directory, whatever is swapped in after the Lstat
	if err != nil {
		httpjson.Error(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		httpjson.Error(w, http.StatusForbidden, strconv.Quote(name)+" is not a regular file")
		return
	}
	if fi.Size() > MaxTraceBytes {
		httpjson.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is %d bytes, over the %d-byte download limit: copy it from %s on the host",
			name, fi.Size(), MaxTraceBytes, s.cfg.TraceDir))
		return
	}
	size := fi.Size()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(http.StatusOK)
	// The file may grow while it is sent (vLLM still writing): send the size announced, never more.
	_, _ = io.CopyN(w, f, size)
	s.cfg.Audit.Info("trace downloaded", "user", userOf(r), "remote", r.RemoteAddr, "trace", name, "bytes", size)
}

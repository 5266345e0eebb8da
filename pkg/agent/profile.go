package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Errors of the profiler's state machine.
var (
	ErrProfileBusy    = errors.New("a torch profile is already running or stopping; one at a time")
	ErrNoProfile      = errors.New("no torch profile is running")
	ErrProfilingOff   = errors.New("torch profiling is off on this agent: start it with -trace-dir set to vLLM's VLLM_TORCH_PROFILER_DIR")
	ErrShuttingDown   = errors.New("the agent is shutting down")
	errVLLMProfileAPI = errors.New("vLLM refused the profiler call")
)

// Time limits of the profiler.
const (
	// VLLMCallTimeout bounds one call to vLLM's profiler API: stop_profile returns once the traces are written,
	// which takes tens of seconds for a long profile. The app waits longer than this for a start or stop.
	VLLMCallTimeout = 2 * time.Minute
	// StopRetryFirst and StopRetryMax are the backoff between attempts to stop a profile after a failed stop:
	// doubling from the first, at most the max, until vLLM stops or the agent exits.
	StopRetryFirst = time.Second
	StopRetryMax   = 30 * time.Second
	// DrainTimeout bounds how long a shutting-down agent waits for requests under way to end.
	DrainTimeout = 10 * time.Second
	// ShutdownTimeout bounds how long a shutting-down agent then waits for a start under way and stops a profile.
	ShutdownTimeout = 20 * time.Second
)

// profiler drives vLLM's torch profiler: one profile at a time, stopped by the agent's own timer, a failed stop
// retried until it succeeds.
type profiler struct {
	client *http.Client
	vllm   string
	dir    string
	max    time.Duration
	audit  *slog.Logger

	mu       sync.Mutex
	busy     bool // a start or stop call to vLLM is under way
	closing  bool // the agent is shutting down: no new profile, no scheduled retry
	running  bool
	started  time.Time
	ends     time.Time
	by       string
	lastErr  string
	lastStop time.Time
	timer    *time.Timer // ends the profile on time
	retry    *time.Timer // retries a failed stop
	tries    int         // failed stops of the running profile
	nextTry  time.Time
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
		st.StopPending, st.StopAttempts = p.tries > 0, p.tries
		if p.tries > 0 && !p.nextTry.IsZero() {
			st.NextStopAttempt = stamp(p.nextTry)
		}
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
	switch {
	case p.closing:
		p.mu.Unlock()
		return ProfileStatus{}, ErrShuttingDown
	case p.busy || p.running:
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
	p.running, p.started, p.by, p.lastErr, p.tries = true, time.Now(), user, "", 0
	p.ends = p.started.Add(d)
	// A shutdown that began during the start stops this profile itself once the start is done.
	if !p.closing {
		p.timer = time.AfterFunc(d, func() { p.expire(gen) })
	}
	p.mu.Unlock()
	p.audit.Info("torch profile started", "user", user, "remote", remote, "seconds", int(d/time.Second))
	return p.status(), nil
}

// expire is the timer's stop: it stops profile gen if that one is still running.
func (p *profiler) expire(gen int) {
	p.mu.Lock()
	current := p.running && p.gen == gen && !p.closing
	p.mu.Unlock()
	if current {
		_, _ = p.stop(context.Background(), "(agent timer)", "")
	}
}

// retryStop is a failed stop's next attempt, for profile gen.
func (p *profiler) retryStop(gen int) {
	p.mu.Lock()
	current := p.running && p.gen == gen && !p.closing && !p.busy
	p.mu.Unlock()
	if current {
		_, _ = p.stop(context.Background(), "(agent retry)", "")
	}
}

// backoff is the wait before attempt tries+1 of a stop.
func backoff(tries int) time.Duration {
	d := StopRetryFirst
	for i := 1; i < tries && d < StopRetryMax; i++ {
		d *= 2
	}
	return min(d, StopRetryMax)
}

// stop asks vLLM to stop profiling, which writes the traces. When vLLM fails, the profile stays running (vLLM may
// still be profiling) and the stop is retried with backoff until it succeeds or the agent shuts down.
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
	stopTimer(p.timer)
	stopTimer(p.retry)
	gen := p.gen
	p.mu.Unlock()

	err := p.call(ctx, "/stop_profile")

	p.mu.Lock()
	p.busy = false
	if err != nil {
		p.lastErr = err.Error()
		p.tries++
		tries, wait := p.tries, backoff(p.tries)
		p.nextTry = time.Time{}
		if !p.closing {
			p.nextTry = time.Now().Add(wait)
			p.retry = time.AfterFunc(wait, func() { p.retryStop(gen) })
		}
		p.mu.Unlock()
		p.audit.Error("torch profile stop failed; the agent retries it", "user", user, "remote", remote, "attempt", tries,
			"retry_in", wait.String(), "error", err)
		return p.status(), err
	}
	p.running, p.lastErr, p.lastStop, p.tries, p.nextTry = false, "", time.Now(), 0, time.Time{}
	p.mu.Unlock()
	p.audit.Info("torch profile stopped", "user", user, "remote", remote)
	return p.status(), nil
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// shutdown refuses new profiles, waits for a start or stop under way, then stops a profile that is running (or
// was starting), retrying until ctx ends.
func (p *profiler) shutdown(ctx context.Context) {
	p.mu.Lock()
	p.closing = true
	stopTimer(p.retry)
	p.mu.Unlock()
	for tries := 0; ; {
		p.mu.Lock()
		busy, running := p.busy, p.running
		p.mu.Unlock()
		wait := 20 * time.Millisecond // a start or stop under way: poll until it is done
		if !busy {
			if !running {
				return
			}
			_, err := p.stop(ctx, "(agent shutdown)", "")
			if err == nil || errors.Is(err, ErrNoProfile) {
				return
			}
			if !errors.Is(err, ErrProfileBusy) {
				tries++
				wait = backoff(tries)
			}
		}
		select {
		case <-ctx.Done():
			p.audit.Error("the agent exits with a torch profile it could not stop", "busy", busy, "running", running, "error", ctx.Err())
			return
		case <-time.After(wait):
		}
	}
}

// call POSTs to one of vLLM's profiler routes.
func (p *profiler) call(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, VLLMCallTimeout)
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
	case errors.Is(err, ErrShuttingDown):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

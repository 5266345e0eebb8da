package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// agentClient is one allow-listed agent's client, or why it cannot be called (no token, bad TLS material).
type agentClient struct {
	cfg    AgentConfig
	client *agent.Client
	err    string
}

// agentClients builds a client per allow-listed agent; a problem with one agent is shown on its row, not as broken
// settings.
func agentClients(s Settings, secure map[string]string) map[string]agentClient {
	out := make(map[string]agentClient, len(s.Agents))
	t := agent.TLS{CACert: s.AgentCACert, ClientCert: s.AgentClientCert, ClientKey: secure[AgentClientKeyField]}
	secrets := secretValues(secure)
	for _, c := range s.Agents {
		cl, err := agent.NewClient(c.URL, secure[AgentTokenField(c.Name)], t, secrets...)
		ac := agentClient{cfg: c, client: cl}
		if err != nil {
			ac.err = err.Error()
		}
		out[c.Name] = ac
	}
	return out
}

// agentView is one agent as the config page shows it.
type agentView struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	MetricsURL string `json:"metricsUrl,omitempty"`
	// Error is why the agent cannot be called at all (no token, TLS material).
	Error string `json:"error,omitempty"`
	// Config is the profiler config's state through the agent; ConfigError why it could not be read.
	Config      *agent.ProfilerConfig `json:"config,omitempty"`
	ConfigError string                `json:"configError,omitempty"`
	// Exposed is whether the deployment's /metrics has vllm_profiling_* series; null when unknown.
	Exposed           *bool                `json:"exposed"`
	ProfilingFamilies int                  `json:"profilingFamilies,omitempty"`
	ExposedError      string               `json:"exposedError,omitempty"`
	Profile           *agent.ProfileStatus `json:"profile,omitempty"`
	ProfileError      string               `json:"profileError,omitempty"`
}

type agentListResponse struct {
	Agents   []agentView `json:"agents"`
	CanWrite bool        `json:"canWrite"`
	// CanProfile is true for Admins: torch profiles and trace downloads are theirs only.
	CanProfile bool `json:"canProfile"`
	// MaxProfileSeconds and MaxTraceBytes are the agent's limits, for the page's inputs and messages.
	MaxProfileSeconds int `json:"maxProfileSeconds"`
	MaxTraceBytes     int `json:"maxTraceBytes"`
}

func (a *App) handleAgents(w http.ResponseWriter, r *http.Request) {
	if !a.settingsOK(w) {
		return
	}
	// Each row is a call to another agent: one slow agent should not add to the others.
	views := parallel.Map(a.settings.Agents, func(c AgentConfig) agentView { return a.agentView(r.Context(), a.agents[c.Name]) })
	u := backend.UserFromContext(r.Context())
	can, _ := a.mayWrite(u)
	httpjson.Write(w, http.StatusOK, agentListResponse{Agents: views, CanWrite: can, CanProfile: mayProfile(u) == "",
		MaxProfileSeconds: agent.MaxProfileSeconds, MaxTraceBytes: agent.MaxTraceBytes})
}

// answer is one read-only agent call's result, as the cache keeps it.
type answer[V any] struct {
	v   V
	err error
}

// agentRead makes one read-only call to an agent through the instance's cache: concurrent and repeated calls
// within ReadCacheTTL share one.
func agentRead[V any](a *App, ctx context.Context, ac agentClient, route string, call func(context.Context) (V, error)) (V, error) {
	r := cached(a.reads, ctx, route+" "+ac.cfg.Name, func(ctx context.Context) answer[V] {
		v, err := call(ctx)
		return answer[V]{v, err}
	})
	return r.v, r.err
}

// Routes of the read cache, forgotten after a change through the app.
const (
	readConfig  = "config"
	readProfile = "profile"
	readSymbols = "symbols"
	readTraces  = "traces"
)

func (a *App) agentView(ctx context.Context, ac agentClient) agentView {
	v := agentView{Name: ac.cfg.Name, URL: redact.URL(ac.cfg.URL), MetricsURL: redact.URL(ac.cfg.MetricsURL), Error: ac.err}
	if ac.client == nil {
		return v
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if c, err := agentRead(a, ctx, ac, readConfig, ac.client.ProfilerConfig); err != nil {
			v.ConfigError = a.agentMessage(ac.cfg.Name, err)
		} else {
			v.Config = &c
		}
	}()
	go func() {
		defer wg.Done()
		if p, err := agentRead(a, ctx, ac, readProfile, ac.client.Profile); err != nil {
			v.ProfileError = a.agentMessage(ac.cfg.Name, err)
		} else {
			v.Profile = &p
		}
	}()
	if ac.cfg.MetricsURL != "" {
		var fv fileView
		a.checkExposure(ctx, ac.cfg.MetricsURL, &fv)
		v.Exposed, v.ProfilingFamilies, v.ExposedError = fv.Exposed, fv.ProfilingFamilies, fv.ExposedError
	}
	wg.Wait()
	return v
}

// agentFor finds the named agent, answering 404 or the agent's own problem when it cannot be called.
func (a *App) agentFor(w http.ResponseWriter, r *http.Request) (agentClient, bool) {
	if !a.settingsOK(w) {
		return agentClient{}, false
	}
	ac, ok := a.agents[r.PathValue("name")]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, "no agent named %q on the allow-list", r.PathValue("name"))
		return ac, false
	case ac.client == nil:
		writeError(w, http.StatusBadGateway, "agent %s: %s", ac.cfg.Name, a.scrub.Text(ac.err))
		return ac, false
	}
	return ac, true
}

func (a *App) handleAgentMetricEnable(w http.ResponseWriter, r *http.Request) {
	u := backend.UserFromContext(r.Context())
	if ok, why := a.mayWrite(u); !ok {
		a.logger.Warn("Refused to change profiler config through an agent", "agent", r.PathValue("name"), "user", login(u), "reason", why)
		writeError(w, http.StatusForbidden, "%s", why)
		return
	}
	ac, ok := a.agentFor(w, r)
	if !ok {
		return
	}
	on, err := agent.DecodeSetValue(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	c, err := ac.client.SetMetricEnable(r.Context(), login(u), on)
	a.reads.forget(readConfig + " " + ac.cfg.Name)
	if err != nil {
		a.logger.Error("Failed to change profiler config through an agent", "agent", ac.cfg.Name, "user", login(u), "error", a.agentMessage(ac.cfg.Name, err))
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	a.logger.Info("Changed profiler config metric_enable through an agent", "agent", ac.cfg.Name, "user", login(u), "role", u.Role, "new", c.MetricEnable)
	httpjson.Write(w, http.StatusOK, c)
}

func (a *App) handleAgentSymbols(w http.ResponseWriter, r *http.Request) {
	ac, ok := a.agentFor(w, r)
	if !ok {
		return
	}
	s, err := agentRead(a, r.Context(), ac, readSymbols, ac.client.Symbols)
	if err != nil {
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s)
}

// mayProfile is "" for Admins, else why not: a torch profile slows the engine and traces show prompts' shapes.
func mayProfile(u *backend.User) string {
	switch {
	case u == nil:
		return "only a signed-in Admin may take torch profiles"
	case u.Role != "Admin":
		return fmt.Sprintf("only Admins may take torch profiles and download traces; your role is %q", u.Role)
	}
	return ""
}

// adminAgent is agentFor behind the Admin check.
func (a *App) adminAgent(w http.ResponseWriter, r *http.Request) (agentClient, *backend.User, bool) {
	u := backend.UserFromContext(r.Context())
	if why := mayProfile(u); why != "" {
		a.logger.Warn("Refused a profiling call", "agent", r.PathValue("name"), "path", r.URL.Path, "user", login(u), "reason", why)
		writeError(w, http.StatusForbidden, "%s", why)
		return agentClient{}, nil, false
	}
	ac, ok := a.agentFor(w, r)
	return ac, u, ok
}

func (a *App) handleAgentProfileStart(w http.ResponseWriter, r *http.Request) {
	ac, u, ok := a.adminAgent(w, r)
	if !ok {
		return
	}
	d, err := agent.DecodeProfileStart(r.Body, agent.MaxProfileSeconds*time.Second)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	st, err := ac.client.StartProfile(r.Context(), login(u), int(d/time.Second))
	a.reads.forget(readProfile + " " + ac.cfg.Name)
	if err != nil {
		a.logger.Error("Failed to start a torch profile through an agent", "agent", ac.cfg.Name, "user", login(u), "error", a.agentMessage(ac.cfg.Name, err))
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	a.logger.Info("Started a torch profile through an agent", "agent", ac.cfg.Name, "user", login(u), "seconds", int(d/time.Second))
	httpjson.Write(w, http.StatusOK, st)
}

func (a *App) handleAgentProfileStop(w http.ResponseWriter, r *http.Request) {
	ac, u, ok := a.adminAgent(w, r)
	if !ok {
		return
	}
	st, err := ac.client.StopProfile(r.Context(), login(u))
	a.reads.forget(readProfile + " " + ac.cfg.Name)
	a.reads.forget(readTraces + " " + ac.cfg.Name)
	if err != nil {
		a.logger.Error("Failed to stop a torch profile through an agent", "agent", ac.cfg.Name, "user", login(u), "error", a.agentMessage(ac.cfg.Name, err))
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, st)
}

func (a *App) handleAgentTraces(w http.ResponseWriter, r *http.Request) {
	ac, _, ok := a.adminAgent(w, r)
	if !ok {
		return
	}
	l, err := agentRead(a, r.Context(), ac, readTraces, ac.client.Traces)
	if err != nil {
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, l)
}

// traceChunk is how much of a trace one resource response message carries: well under gRPC's 4 MB default.
const traceChunk = 1 << 20

// handleAgentTrace sends one trace to an Admin, in chunks, once the whole of it has arrived from the agent: a cut
// download is an error, not a 200 with a shorter trace. At most MaxConcurrentDownloads are held at once.
func (a *App) handleAgentTrace(w http.ResponseWriter, r *http.Request) {
	ac, u, ok := a.adminAgent(w, r)
	if !ok {
		return
	}
	file := r.PathValue("file")
	if !agent.ValidTraceName(file) {
		writeError(w, http.StatusBadRequest, "a trace name is one file name of letters, digits, '.', '_', '+' and '-'")
		return
	}
	select {
	case a.downloads <- struct{}{}:
		defer func() { <-a.downloads }()
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, "the download was cancelled while waiting for another to finish")
		return
	}
	body, err := ac.client.Trace(r.Context(), login(u), file)
	if err != nil {
		a.logger.Error("Failed to download a trace through an agent", "agent", ac.cfg.Name, "user", login(u), "trace", file, "error", a.agentMessage(ac.cfg.Name, err))
		a.writeAgentError(w, ac.cfg.Name, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for len(body) > 0 {
		n := min(len(body), traceChunk)
		_, _ = w.Write(body[:n])
		body = body[n:]
		if flusher != nil {
			flusher.Flush()
		}
	}
	a.logger.Info("Downloaded a trace through an agent", "agent", ac.cfg.Name, "user", login(u), "trace", file)
}

// agentMessage says what went wrong calling an agent, naming it, scrubbed of every secret of the app's settings
// (the agent client scrubs too; this is the rule for everything the app shows or logs).
func (a *App) agentMessage(name string, err error) string {
	var ae *agent.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
		return fmt.Sprintf("agent %s refused the app's token: set the token the agent runs with in the app's settings", name)
	}
	return a.scrub.Text(fmt.Sprintf("agent %s: %v", name, err))
}

// writeAgentError passes the agent's client errors (4xx) on with their status; an unreachable agent, a refused
// token and the agent's own failures are the gateway's (502).
func (a *App) writeAgentError(w http.ResponseWriter, name string, err error) {
	status := http.StatusBadGateway
	var ae *agent.Error
	if errors.As(err, &ae) && ae.Status/100 == 4 && ae.Status != http.StatusUnauthorized {
		status = ae.Status
	}
	writeError(w, status, "%s", a.agentMessage(name, err))
}

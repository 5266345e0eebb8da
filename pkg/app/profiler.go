package app

import (
	"github.com/inferscope/inferscope-vllm/pkg/redact"

	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/profilerconfig"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
)

// exposureTimeout bounds the /metrics check so a down deployment does not stall the config page.
const exposureTimeout = 3 * time.Second

// profilingPrefix is the family-name prefix of the Ascend profiler's metrics.
const profilingPrefix = "vllm_profiling_"

// fileView is one allow-listed profiler config file as the config page shows it.
type fileView struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	MetricsURL string `json:"metricsUrl,omitempty"`
	// Exists is false for a missing file, which the profiler treats as metric_enable 0.
	Exists       bool   `json:"exists"`
	MetricEnable int    `json:"metricEnable"`
	Enable       int    `json:"enable"`
	Modified     string `json:"modified,omitempty"`
	Problem      string `json:"problem,omitempty"`
	// Error says why the file could not be read (malformed, directory missing, permissions).
	Error string `json:"error,omitempty"`
	// Exposed is whether the deployment's /metrics has vllm_profiling_* series; null when unknown.
	Exposed           *bool  `json:"exposed"`
	ProfilingFamilies int    `json:"profilingFamilies,omitempty"`
	ExposedError      string `json:"exposedError,omitempty"`
}

type listResponse struct {
	ProfilerConfigs     []fileView `json:"profilerConfigs"`
	CanWrite            bool       `json:"canWrite"`
	AllowEditorsToWrite bool       `json:"allowEditorsToWrite"`
}

func (a *App) handleList(w http.ResponseWriter, r *http.Request) {
	if !a.settingsOK(w) {
		return
	}
	// Each row is a call to another server: one slow server should not add to the others.
	views := parallel.Map(a.settings.ProfilerConfigs, func(c ProfilerConfig) fileView { return a.view(r.Context(), c) })
	can, _ := a.mayWrite(backend.UserFromContext(r.Context()))
	httpjson.Write(w, http.StatusOK, listResponse{ProfilerConfigs: views, CanWrite: can, AllowEditorsToWrite: a.settings.AllowEditorsToWrite})
}

func (a *App) handleOne(w http.ResponseWriter, r *http.Request) {
	if !a.settingsOK(w) {
		return
	}
	c, ok := a.settings.lookup(r.PathValue("name"))
	if !ok {
		writeError(w, http.StatusNotFound, "no profiler config named %q on the allow-list", r.PathValue("name"))
		return
	}
	httpjson.Write(w, http.StatusOK, a.view(r.Context(), c))
}

func (a *App) handleSetMetricEnable(w http.ResponseWriter, r *http.Request) {
	if !a.settingsOK(w) {
		return
	}
	user := backend.UserFromContext(r.Context())
	name := r.PathValue("name")
	if ok, why := a.mayWrite(user); !ok {
		a.logger.Warn("Refused to change profiler config", "name", name, "user", login(user), "reason", why)
		writeError(w, http.StatusForbidden, "%s", why)
		return
	}
	c, ok := a.settings.lookup(name)
	if !ok {
		writeError(w, http.StatusNotFound, "no profiler config named %q on the allow-list", name)
		return
	}
	on, err := agent.DecodeSetValue(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	change, err := a.files.SetMetricEnable(c.Path, on)
	if err != nil {
		a.logger.Error("Failed to change profiler config", "name", name, "path", c.Path, "user", login(user), "error", err)
		writeError(w, profilerconfig.HTTPStatus(err), "%v", err)
		return
	}
	a.logger.Info("Changed profiler config metric_enable", "name", name, "path", change.Path, "user", login(user),
		"role", user.Role, "old", bit(change.Old), "new", bit(change.New), "created", change.Created, "written", change.Written)
	// The deployment picks the change up on its next poll, so /metrics is not checked here; exposed is null.
	v := a.baseView(c)
	fillState(&v, change.State)
	httpjson.Write(w, http.StatusOK, v)
}

// mayWrite applies the role rule: Admins, and Editors when the app allows it; never Grafana-initiated calls.
func (a *App) mayWrite(u *backend.User) (bool, string) {
	switch {
	case u == nil:
		return false, "only a signed-in user may change profiler configs"
	case u.Role == "Admin":
		return true, ""
	case u.Role == "Editor" && a.settings.AllowEditorsToWrite:
		return true, ""
	case u.Role == "Editor":
		return false, "only Admins may change profiler configs (Editors too if the app setting allows it)"
	default:
		return false, fmt.Sprintf("only Admins may change profiler configs; your role is %q", u.Role)
	}
}

func (a *App) baseView(c ProfilerConfig) fileView {
	return fileView{Name: c.Name, Path: c.Path, MetricsURL: redact.URL(c.MetricsURL)}
}

// view reads the file and, if a metrics URL is set, checks the deployment's /metrics.
func (a *App) view(ctx context.Context, c ProfilerConfig) fileView {
	v := a.baseView(c)
	if s, err := a.files.Read(c.Path); err != nil {
		v.Error = err.Error()
	} else {
		fillState(&v, s)
	}
	if c.MetricsURL != "" {
		a.checkExposure(ctx, c.MetricsURL, &v)
	}
	return v
}

func fillState(v *fileView, s profilerconfig.State) {
	v.Exists, v.MetricEnable, v.Enable, v.Problem = s.Exists, bit(s.MetricEnable), bit(s.Enable), s.Problem
	if !s.ModTime.IsZero() {
		v.Modified = s.ModTime.UTC().Format(time.RFC3339Nano)
	}
}

// exposure is what one /metrics check found.
type exposure struct {
	exposed  *bool
	families int
	err      string
}

// checkExposure fills v with whether the deployment exposes the profiler's families.
func (a *App) checkExposure(ctx context.Context, metricsURL string, v *fileView) {
	e := a.exposure(ctx, metricsURL)
	v.Exposed, v.ProfilingFamilies, v.ExposedError = e.exposed, e.families, e.err
}

// exposure scrapes the deployment once per ReadCacheTTL however many callers ask, keeping only the profiler's
// families; the error is scrubbed of the URL's credentials and of every secret of the app's settings.
func (a *App) exposure(ctx context.Context, metricsURL string) exposure {
	return cached(a.reads, ctx, "exposure "+metricsURL, func(ctx context.Context) exposure {
		res, err := exposition.Fetch(ctx, a.client, metricsURL, exposition.ScrapeOptions{
			Timeout: exposureTimeout,
			Parse:   exposition.ParseOptions{Keep: func(f string) bool { return strings.HasPrefix(f, profilingPrefix) }},
			Scrub:   a.scrub,
		})
		if err != nil {
			return exposure{err: a.scrub.Error(err)}
		}
		n := 0
		for _, f := range res.Scrape.Families {
			if strings.HasPrefix(f.Name, profilingPrefix) && len(f.Samples) > 0 {
				n++
			}
		}
		exposed := n > 0
		return exposure{exposed: &exposed, families: n}
	})
}

func login(u *backend.User) string {
	if u == nil {
		return "(none)"
	}
	return u.Login
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (a *App) settingsOK(w http.ResponseWriter) bool {
	if a.settingsErr != nil {
		writeError(w, http.StatusInternalServerError, "%v", a.settingsErr)
		return false
	}
	return true
}

package app

import (
	"fmt"
	"net/http"
	"path"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
)

func (a *App) registerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /status", a.handleStatus)
	mux.HandleFunc("/profiler-configs", only(http.MethodGet, a.handleList))
	mux.HandleFunc("/profiler-configs/{name}", only(http.MethodGet, a.handleOne))
	mux.HandleFunc("/profiler-configs/{name}/metric-enable", only(http.MethodPut, a.handleSetMetricEnable))
	mux.HandleFunc("/agents", only(http.MethodGet, a.handleAgents))
	mux.HandleFunc("/agents/{name}/metric-enable", only(http.MethodPut, a.handleAgentMetricEnable))
	mux.HandleFunc("/agents/{name}/symbols", only(http.MethodGet, a.handleAgentSymbols))
	mux.HandleFunc("/agents/{name}/profile", only(http.MethodPost, a.handleAgentProfileStart))
	mux.HandleFunc("/agents/{name}/profile/stop", only(http.MethodPost, a.handleAgentProfileStop))
	mux.HandleFunc("/agents/{name}/traces", only(http.MethodGet, a.handleAgentTraces))
	mux.HandleFunc("/agents/{name}/traces/{file}", only(http.MethodGet, a.handleAgentTrace))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Error(w, http.StatusNotFound, "no such resource: "+r.URL.Path)
	})
}

// cleanPaths answers paths with "..", "." or "//" with a JSON 404 instead of ServeMux's bodiless redirect: such
// a path never names a resource, and the frontend expects JSON always.
func cleanPaths(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || path.Clean(p) != p {
			writeError(w, http.StatusNotFound, "no such resource: %s", p)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// only answers other methods with a JSON 405, which ServeMux's catch-all "/" route would otherwise turn into 404.
func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, "%s %s is not supported; use %s", r.Method, r.URL.Path, method)
			return
		}
		h(w, r)
	}
}

// handleStatus tells the frontend which backend build answers, so a stale binary is visible in the UI.
func (a *App) handleStatus(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, map[string]string{"pluginId": PluginID, "version": version()})
}

// writeError answers {"error": "..."}; every error the frontend sees has this shape.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	httpjson.Error(w, status, fmt.Sprintf(format, args...))
}

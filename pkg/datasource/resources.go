package datasource

import (
	"encoding/json"
	"net/http"
)

func (d *Datasource) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /endpoints", d.handleEndpoints)
	mux.HandleFunc("GET /models", d.withDirect(func(dr *direct, _ *http.Request) any { return nonNil(dr.labelValues("model_name", "model")) }))
	mux.HandleFunc("GET /engines", d.withDirect(func(dr *direct, _ *http.Request) any { return nonNil(dr.labelValues("engine", "dp", "dp_rank")) }))
	mux.HandleFunc("GET /metrics", d.withDirect(func(dr *direct, _ *http.Request) any { return nonNil(dr.metricNames()) }))
	mux.HandleFunc("GET /label-values", d.withDirect(func(dr *direct, r *http.Request) any {
		return nonNil(dr.labelValues(r.URL.Query().Get("label")))
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such resource: " + r.URL.Path})
	})
	return mux
}

// endpointInfo is what editors and template variables see of an endpoint; credentials in the URL are redacted.
type endpointInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// handleEndpoints lists the configured endpoints, with their latest scrape status in direct mode.
func (d *Datasource) handleEndpoints(w http.ResponseWriter, _ *http.Request) {
	if d.settingsErr != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": d.settingsErr.Error()})
		return
	}
	if d.direct != nil {
		writeJSON(w, http.StatusOK, d.direct.scraper.Statuses())
		return
	}
	out := make([]endpointInfo, 0, len(d.settings.Endpoints))
	for _, e := range d.settings.Endpoints {
		out = append(out, endpointInfo{Name: e.DisplayName(), URL: redactURL(e.URL)})
	}
	writeJSON(w, http.StatusOK, out)
}

// withDirect serves a resource computed from direct mode's history.
func (d *Datasource) withDirect(f func(*direct, *http.Request) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case d.settingsErr != nil:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": d.settingsErr.Error()})
		case d.direct == nil:
			writeJSON(w, http.StatusNotImplemented, map[string]string{"error": errPrometheusMode.Error()})
		default:
			writeJSON(w, http.StatusOK, f(d.direct, r))
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

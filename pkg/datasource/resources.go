package datasource

import (
	"encoding/json"
	"net/http"
)

func (d *Datasource) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /endpoints", d.handleEndpoints)
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

func (d *Datasource) handleEndpoints(w http.ResponseWriter, _ *http.Request) {
	if d.settingsErr != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": d.settingsErr.Error()})
		return
	}
	out := make([]endpointInfo, 0, len(d.settings.Endpoints))
	for _, e := range d.settings.Endpoints {
		out = append(out, endpointInfo{Name: e.DisplayName(), URL: redactURL(e.URL)})
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

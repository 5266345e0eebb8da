package datasource

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

func (d *Datasource) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /endpoints", d.handleEndpoints)
	mux.HandleFunc("POST /probe", d.handleProbe)
	mux.HandleFunc("GET /models", d.withSource(
		func(dr *direct, _ *http.Request) []string { return dr.labelValues("model_name", "model") },
		func(p *prometheus, r *http.Request) ([]string, error) {
			return p.labelValues(r.Context(), "model_name", "model")
		}))
	mux.HandleFunc("GET /engines", d.withSource(
		func(dr *direct, _ *http.Request) []string { return dr.labelValues("engine", "dp", "dp_rank") },
		func(p *prometheus, r *http.Request) ([]string, error) {
			return p.labelValues(r.Context(), "engine", "dp", "dp_rank")
		}))
	mux.HandleFunc("GET /metrics", d.withSource(
		func(dr *direct, _ *http.Request) []string { return dr.metricNames() },
		func(p *prometheus, r *http.Request) ([]string, error) { return p.metricNames(r.Context()) }))
	mux.HandleFunc("GET /label-values", d.withLabelName(d.withSource(
		func(dr *direct, r *http.Request) []string { return dr.labelValues(r.URL.Query().Get("label")) },
		func(p *prometheus, r *http.Request) ([]string, error) {
			// Endpoints are Prometheus's instance label in this mode.
			l := r.URL.Query().Get("label")
			if l == "endpoint" {
				l = "instance"
			}
			return p.labelValues(r.Context(), l)
		})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such resource: " + query.Truncate(r.URL.Path, 256)})
	})
	return mux
}

// labelName is a Prometheus label name; label-values refuses anything else before it reaches history or a server URL.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,255}$`)

// withLabelName checks the label query parameter of a label-values call.
func (d *Datasource) withLabelName(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !labelName.MatchString(r.URL.Query().Get("label")) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "label must be a label name such as model_name"})
			return
		}
		next(w, r)
	}
}

// endpointInfo is what editors and template variables see of an endpoint; credentials in the URL are redacted.
type endpointInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// handleEndpoints lists the configured endpoints, with their latest scrape status in direct mode.
func (d *Datasource) handleEndpoints(w http.ResponseWriter, r *http.Request) {
	if d.settingsErr != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": d.settingsErr.Error()})
		return
	}
	if d.direct != nil {
		writeJSON(w, http.StatusOK, d.direct.scraper.Statuses())
		return
	}
	if d.prom != nil {
		// In Prometheus mode the endpoints are the instances the server scrapes vLLM from.
		insts, err := d.prom.labelValues(r.Context(), "instance")
		if err != nil {
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": d.scrub.Error(err)})
			return
		}
		out := make([]endpointInfo, 0, len(insts))
		for _, i := range insts {
			out = append(out, endpointInfo{Name: i})
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	out := make([]endpointInfo, 0, len(d.settings.Endpoints))
	for _, e := range d.settings.Endpoints {
		out = append(out, endpointInfo{Name: e.DisplayName(), URL: redact.URL(e.URL)})
	}
	writeJSON(w, http.StatusOK, out)
}

// probeResult is one endpoint's answer to a test scrape from the config editor.
type probeResult struct {
	Up        bool            `json:"up"`
	Error     string          `json:"error,omitempty"`
	Samples   int             `json:"samples,omitempty"`
	Detection *vllm.Detection `json:"detection,omitempty"`
}

// probeRequest is the config editor's test of one URL.
type probeRequest struct {
	URL string `json:"url"`
	// UseStoredCredentials sends the data source's credentials to a URL that is not one of its saved endpoints;
	// without it such a probe carries none, so a typo or a hostile URL cannot collect the stored token.
	UseStoredCredentials bool `json:"useStoredCredentials,omitempty"`
}

// handleProbe scrapes one URL and reports what it found. Because it fetches a URL from the Grafana server, only org
// admins — who may configure data sources anyway — may call it, and it obeys the egress policy of scrapes.
func (d *Datasource) handleProbe(w http.ResponseWriter, r *http.Request) {
	if u := backend.UserFromContext(r.Context()); u == nil || u.Role != "Admin" {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "only organization admins may test endpoints"})
		return
	}
	if d.direct == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "endpoint tests need a saved direct-mode configuration"})
		return
	}
	var body probeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil || body.URL == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"url\": \"http://host:port/metrics\"}"})
		return
	}
	if err := checkHTTPURL(body.URL); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if err := d.settings.egress(false).CheckURL(body.URL); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	client := d.direct.anonymous
	if body.UseStoredCredentials || d.settings.hasEndpoint(body.URL) {
		client = d.direct.client
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(d.settings.ScrapeTimeout)+time.Second)
	defer cancel()
	res, err := exposition.Fetch(ctx, client, body.URL, exposition.ScrapeOptions{
		Timeout: time.Duration(d.settings.ScrapeTimeout), Parse: exposition.ParseOptions{Keep: scraper.KeepFamily},
		MaxBodyBytes: d.settings.MaxBodyBytes(), Scrub: d.scrub,
	})
	if err != nil {
		writeJSON(w, http.StatusOK, probeResult{Error: err.Error()})
		return
	}
	det := vllm.Detect(vllm.ScrapeExposed{Scrape: res.Scrape})
	writeJSON(w, http.StatusOK, probeResult{Up: true, Samples: res.Scrape.NumSamples(), Detection: &det})
}

// withSource serves a resource from direct mode's history or from the Prometheus server; lists are JSON
// arrays of strings, never null.
func (d *Datasource) withSource(fd func(*direct, *http.Request) []string, fp func(*prometheus, *http.Request) ([]string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case d.settingsErr != nil:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": d.settingsErr.Error()})
		case d.prom != nil:
			v, err := fp(d.prom, r)
			if err != nil {
				writeJSON(w, http.StatusBadGateway, map[string]string{"error": d.scrub.Error(err)})
				return
			}
			writeJSON(w, http.StatusOK, nonNil(v))
		case d.direct != nil:
			writeJSON(w, http.StatusOK, nonNil(fd(d.direct, r)))
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the data source is not configured"})
		}
	}
}

// MaxListValues bounds a list resource (models, engines, metrics, label values): pickers and variables cannot use
// more, and a server with a million label values must not make every editor load megabytes.
const MaxListValues = 10_000

// nonNil returns the list as a JSON array, never null, cut to MaxListValues.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s[:min(len(s), MaxListValues)]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

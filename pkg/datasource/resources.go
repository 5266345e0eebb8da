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
	"github.com/inferscope/inferscope-vllm/pkg/role"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
)

func (d *Datasource) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /endpoints", d.handleEndpoints)
	mux.HandleFunc("POST /probe", d.handleProbe)
	mux.HandleFunc("GET /models", d.list(func(r *http.Request) ([]string, error) {
		return d.mode.labelValues(r.Context(), "model_name", "model")
	}))
	mux.HandleFunc("GET /engines", d.list(func(r *http.Request) ([]string, error) {
		return d.mode.labelValues(r.Context(), "engine", "dp", "dp_rank")
	}))
	mux.HandleFunc("GET /roles", d.list(d.roles))
	mux.HandleFunc("GET /metrics", d.list(func(r *http.Request) ([]string, error) { return d.mode.metricNames(r.Context()) }))
	mux.HandleFunc("GET /label-values", d.withLabelName(d.list(func(r *http.Request) ([]string, error) {
		return d.mode.labelValues(r.Context(), r.URL.Query().Get("label"))
	})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Error(w, http.StatusNotFound, "no such resource: "+query.Truncate(r.URL.Path, 256))
	})
	return mux
}

// roles lists the prefill/decode roles the endpoints show now (pkg/role), for a template variable.
func (d *Datasource) roles(r *http.Request) ([]string, error) {
	now := time.Now()
	return role.Roles(r.Context(), d.evalResult, "", query.Request{From: now.Add(-role.Span), To: now}, d.roleCache)
}

// labelName is a Prometheus label name; label-values refuses anything else before it reaches history or a server URL.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,255}$`)

// withLabelName checks the label query parameter of a label-values call.
func (d *Datasource) withLabelName(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !labelName.MatchString(r.URL.Query().Get("label")) {
			httpjson.Error(w, http.StatusBadRequest, "label must be a label name such as model_name")
			return
		}
		next(w, r)
	}
}

// handleEndpoints lists the endpoints: configured ones with their latest scrape status in direct mode, the
// instances the server scrapes vLLM from in Prometheus mode.
func (d *Datasource) handleEndpoints(w http.ResponseWriter, r *http.Request) {
	v, err := d.mode.endpoints(r.Context())
	if err != nil {
		httpjson.Error(w, statusOfResourceError(err), d.scrub.Error(err))
		return
	}
	httpjson.Write(w, http.StatusOK, v)
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
		httpjson.Error(w, http.StatusForbidden, "only organization admins may test endpoints")
		return
	}
	client, anonymous, err := d.mode.probeClients()
	if err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	var body probeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil || body.URL == "" {
		httpjson.Error(w, http.StatusBadRequest, "body must be {\"url\": \"http://host:port/metrics\"}")
		return
	}
	if err := checkHTTPURL(body.URL); err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := d.settings.egress(false).CheckURL(body.URL); err != nil {
		httpjson.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	if !body.UseStoredCredentials && !d.settings.hasEndpoint(body.URL) {
		client = anonymous
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(d.settings.ScrapeTimeout)+time.Second)
	defer cancel()
	res, err := exposition.Fetch(ctx, client, body.URL, exposition.ScrapeOptions{
		Timeout: time.Duration(d.settings.ScrapeTimeout), Parse: exposition.ParseOptions{Keep: vllm.ReadsFamily},
		MaxBodyBytes: d.settings.MaxBodyBytes(), Scrub: d.scrub,
	})
	if err != nil {
		httpjson.Write(w, http.StatusOK, probeResult{Error: err.Error()})
		return
	}
	det := vllm.Detect(vllm.ScrapeExposed{Scrape: res.Scrape})
	httpjson.Write(w, http.StatusOK, probeResult{Up: true, Samples: res.Scrape.NumSamples(), Detection: &det})
}

// list serves a list resource from the mode: a JSON array of strings, never null, at most MaxListValues long.
func (d *Datasource) list(f func(*http.Request) ([]string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		if err != nil {
			httpjson.Error(w, statusOfResourceError(err), d.scrub.Error(err))
			return
		}
		httpjson.Write(w, http.StatusOK, nonNil(v))
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

package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// prometheus is Prometheus mode's per-instance runtime: the API client and the names cache.
type prometheus struct {
	client *promapi.Client
	eval   *promapi.Evaluator
}

// newPrometheus builds the client from the data source's HTTP settings: basic auth, TLS, custom headers
// (e.g. X-Scope-OrgID), timeout, a bearer token, and the user's OAuth identity when oauthPassThru is on.
func newPrometheus(ctx context.Context, s backend.DataSourceInstanceSettings, st Settings, scrub *redact.Scrubber) (*prometheus, error) {
	if err := checkHTTPURL(s.URL); err != nil {
		return nil, fmt.Errorf("Prometheus mode needs the server's http(s) URL as the data source URL: %w", err)
	}
	policy := st.egress(true)
	if err := policy.CheckURL(s.URL); err != nil {
		return nil, fmt.Errorf("Prometheus server URL: %w", err)
	}
	opts, err := httpClientOptions(ctx, s, st, policy)
	if err != nil {
		return nil, err
	}
	// Grafana passes the signed-in user's Authorization / X-Id-Token with each request; the SDK's header
	// middleware adds them to requests of clients that opt in.
	opts.ForwardHTTPHeaders = st.OAuthPassThru
	hc, err := httpclient.New(opts)
	if err != nil {
		return nil, fmt.Errorf("HTTP client: %w", err)
	}
	c := &promapi.Client{BaseURL: s.URL, HTTP: hc, Method: st.HTTPMethod, Scrub: scrub}
	return &prometheus{client: c, eval: &promapi.Evaluator{
		Client: c, Discovery: &promapi.Discovery{Client: c}, ScrapeInterval: time.Duration(st.ScrapeInterval),
	}}, nil
}

func (p *prometheus) close() { p.client.HTTP.CloseIdleConnections() }

// query answers one query; the generated PromQL goes into the frames' executed query string.
func (p *prometheus) query(ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse {
	ans, err := p.eval.Eval(ctx, q, query.Request{From: dq.TimeRange.From, To: dq.TimeRange.To, Interval: dq.Interval, MaxDataPoints: dq.MaxDataPoints})
	if err != nil {
		status := backend.StatusBadRequest
		if ctx.Err() != nil {
			status = backend.StatusTimeout
		} else if pe, ok := err.(*promapi.Error); ok {
			status = statusOf(pe)
		}
		resp := backend.ErrDataResponse(status, err.Error())
		if ans != nil && len(ans.Exprs) > 0 {
			f := data.NewFrame(string(q.QueryType))
			f.SetMeta(&data.FrameMeta{ExecutedQueryString: query.Truncate(ans.PromQL(), query.MaxExecutedQueryBytes)})
			resp.Frames = data.Frames{f}
		}
		return resp
	}
	frames := query.Frames(q, ans.Result)
	// The query inspector reads the first frame's executed query; one copy keeps the answer's size independent of it.
	frames[0].Meta.ExecutedQueryString = query.Describe("Prometheus mode", ans.Result.Step, ans.Result.Window, ans.PromQL())
	return backend.DataResponse{Frames: frames}
}

func statusOf(e *promapi.Error) backend.Status {
	switch {
	case e.Status == 0:
		return backend.StatusBadGateway
	case e.Status == http.StatusUnauthorized:
		return backend.StatusUnauthorized
	case e.Status == http.StatusForbidden:
		return backend.StatusForbidden
	case e.Status == http.StatusServiceUnavailable || e.Status == http.StatusGatewayTimeout || e.ErrorType == "timeout":
		return backend.StatusTimeout
	case e.Status >= 500:
		return backend.StatusBadGateway
	}
	return backend.StatusBadRequest
}

// health checks the server answers and reports which vLLM flavors, endpoints and engines it has seen.
func (p *prometheus) health(ctx context.Context) *backend.CheckHealthResult {
	version, hasBuildInfo, err := p.client.BuildInfo(ctx)
	if err != nil {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: "Prometheus: " + err.Error()}
	}
	p.eval.Discovery.Forget()
	v, warns, err := p.client.Query(ctx, `group by (instance, __name__, engine, dp, dp_rank) (`+promapi.FamilySelector+`)`, time.Now())
	if err != nil {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: "Prometheus answered but the metric query failed: " + err.Error()}
	}
	server := "Prometheus-compatible server"
	if hasBuildInfo && version != "" {
		server = "Prometheus " + version
	}
	per := map[string]*exposed{}
	for _, s := range v {
		inst := string(s.Metric[model.InstanceLabel])
		e := per[inst]
		if e == nil {
			e = &exposed{names: map[string]bool{}, labels: map[string]map[string]bool{}}
			per[inst] = e
		}
		name := string(s.Metric[model.MetricNameLabel])
		e.names[name] = true
		for _, l := range []string{"engine", "dp", "dp_rank"} {
			if val, ok := s.Metric[model.LabelName(l)]; ok {
				k := name + "\x00" + l
				if e.labels[k] == nil {
					e.labels[k] = map[string]bool{}
				}
				e.labels[k][string(val)] = true
			}
		}
	}
	if len(per) == 0 {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError,
			Message: server + " answered, but it holds no current vLLM, vLLM-Ascend or Dynamo series: check its scrape configuration"}
	}
	flavors := map[vllm.Flavor]int{}
	engines := 0
	var lines []string
	insts := make([]string, 0, len(per))
	for i := range per {
		insts = append(insts, i)
	}
	sort.Strings(insts)
	for _, inst := range insts {
		det := vllm.Detect(per[inst])
		flavors[det.Flavor]++
		n := max(len(det.Ranks), 1)
		engines += n
		line := fmt.Sprintf("%s: %s", inst, det.Flavor)
		if len(det.Ranks) > 0 {
			line += fmt.Sprintf(", %d %s rank(s)", len(det.Ranks), det.RankLabel)
		}
		lines = append(lines, line)
	}
	var fl []string
	for f, n := range flavors {
		fl = append(fl, fmt.Sprintf("%s ×%d", f, n))
	}
	sort.Strings(fl)
	msg := fmt.Sprintf("%s: %d endpoint(s), %d engine(s) / DP rank(s) seen; flavors %s. %s", server, len(per), engines,
		strings.Join(fl, ", "), healthList(lines))
	for i, w := range warns {
		if w == promapi.TruncatedWarning {
			warns[i] = fmt.Sprintf("counted from the first %d series only", query.MaxSeriesPerQuery)
		}
	}
	if len(warns) > 0 {
		msg += ". Warnings: " + strings.Join(warns, "; ")
	}
	details, _ := json.Marshal(map[string]any{"server": server, "endpoints": len(per), "engines": engines, "flavors": flavors})
	return &backend.CheckHealthResult{Status: backend.HealthStatusOk, Message: msg, JSONDetails: details}
}

// exposed adapts one instance's series names and rank labels to vllm.Detect.
type exposed struct {
	names  map[string]bool
	labels map[string]map[string]bool // name \x00 label -> values
}

func (e *exposed) Names() []string { return sortedKeys(e.names) }

func (e *exposed) LabelValues(prefix, label string) []string {
	set := map[string]bool{}
	for k, vals := range e.labels {
		name, l, _ := strings.Cut(k, "\x00")
		if l == label && strings.HasPrefix(name, prefix) {
			for v := range vals {
				set[v] = true
			}
		}
	}
	return sortedKeys(set)
}

// labelValues lists a label's values over vLLM / Ascend / Dynamo series of the last hours.
func (p *prometheus) labelValues(ctx context.Context, labels ...string) ([]string, error) {
	set := map[string]bool{}
	now := time.Now()
	for _, l := range labels {
		vals, _, err := p.client.LabelValues(ctx, l, []string{promapi.FamilySelector}, now.Add(-6*time.Hour), now)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			set[v] = true
		}
	}
	return sortedKeys(set), nil
}

// metricNames lists family names, histograms once.
func (p *prometheus) metricNames(ctx context.Context) ([]string, error) {
	names, err := p.eval.Discovery.Names(ctx)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	addFamilyNames(set, names)
	return sortedKeys(set), nil
}

// maxHealthLines bounds the per-endpoint lines of a health message, which Grafana shows in one banner.
const maxHealthLines = 20

// healthList joins per-endpoint lines for a health message, naming at most maxHealthLines of them.
func healthList(lines []string) string {
	if len(lines) <= maxHealthLines {
		return strings.Join(lines, "; ")
	}
	return strings.Join(lines[:maxHealthLines], "; ") + fmt.Sprintf("; … and %d more", len(lines)-maxHealthLines)
}

package datasource

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/role"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// prometheus is Prometheus mode's per-instance runtime: the API client and the names cache.
type prometheus struct {
	client    *promapi.Client
	evaluator *promapi.Evaluator
	// roleLabel is the label the user's Prometheus relabelled endpoints' roles into (Settings.RoleLabel).
	roleLabel string
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
	c := &promapi.Client{BaseURL: s.URL, HTTP: hc, Method: st.HTTPMethod, Scrub: scrub, DenyPartial: st.DenyPartialResponse}
	disc := &promapi.Discovery{Client: c}
	if b := st.PrometheusCacheBytes(); b > 0 {
		c.Results = promapi.NewResults(b, time.Duration(st.IncrementalQueryOverlapWindow),
			&promapi.Horizon{Client: c, Jobs: disc.Jobs, Recorded: disc.Recorded})
	}
	return &prometheus{client: c, roleLabel: st.RoleLabel, evaluator: &promapi.Evaluator{
		Client: c, Discovery: disc, ScrapeInterval: time.Duration(st.ScrapeInterval),
	}}, nil
}

func (p *prometheus) declaredRoles() role.Declared {
	if p.roleLabel == "" {
		return nil
	}
	return (&promRoles{client: p.client, label: p.roleLabel}).declared
}

func (p *prometheus) close() { p.client.HTTP.CloseIdleConnections() }

// eval answers one measure query with the PromQL generated for it.
func (p *prometheus) eval(ctx context.Context, q query.Query, r query.Request) (*query.Result, string, error) {
	return p.answer(ctx, p.evaluator.Eval, q, r)
}

// answer runs one of the evaluator's entry points; the PromQL it ran is the executed query, also when the server
// refused it.
func (p *prometheus) answer(ctx context.Context, eval func(context.Context, query.Query, query.Request) (*promapi.Answer, error), q query.Query, r query.Request) (*query.Result, string, error) {
	ans, err := eval(ctx, q, r)
	if err != nil {
		detail := ""
		if ans != nil && len(ans.Exprs) > 0 {
			detail = query.Truncate(ans.PromQL(), query.MaxExecutedQueryBytes)
		}
		return nil, detail, err
	}
	return ans.Result, query.Describe("Prometheus mode", ans.Result.Step, ans.Result.Window, ans.PromQL()), nil
}

// promql sends the user's expression to the server; the expression is the executed query.
func (p *prometheus) promql(ctx context.Context, q query.Query, r query.Request) (*query.Result, string, error) {
	return p.answer(ctx, p.evaluator.EvalPromQL, q, r)
}

func (p *prometheus) usable() error { return nil }

// rounds is nil: the server scrapes on its own schedule, which the data source does not see.
func (p *prometheus) rounds() rounds { return nil }

func (p *prometheus) probeClients() (_, _ *http.Client, _ error) {
	return nil, nil, errProbeNeedsDirect
}

// health checks the server answers and reports which vLLM flavors, endpoints and engines it has seen.
func (p *prometheus) health(ctx context.Context) Health {
	version, hasBuildInfo, err := p.client.BuildInfo(ctx)
	if err != nil {
		return Health{Status: HealthError, Problem: "Prometheus: " + err.Error()}
	}
	p.evaluator.Discovery.Forget()
	v, warns, err := p.client.Query(ctx, `group by (instance, __name__, engine, dp, dp_rank) (`+promapi.FamilySelector+`)`, time.Now())
	if err != nil {
		return Health{Status: HealthError, Problem: "Prometheus answered but the metric query failed: " + err.Error()}
	}
	server := "Prometheus-compatible server"
	switch {
	case p.client.VictoriaMetrics():
		server = "VictoriaMetrics"
	case hasBuildInfo && version != "":
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
		return Health{Status: HealthError, Server: server,
			Problem: server + " answered, but it holds no current vLLM, vLLM-Ascend or Dynamo series: check its scrape configuration"}
	}
	h := Health{Status: HealthOK, Server: server}
	for _, inst := range slices.Sorted(maps.Keys(per)) {
		det := vllm.Detect(per[inst])
		h.Endpoints = append(h.Endpoints, EndpointHealth{Name: inst, Up: true, Detection: &det})
	}
	if p.client.VictoriaMetrics() {
		h.Warnings = append(h.Warnings, "VictoriaMetrics leaves out the newest 30 s by default (-search.latencyOffset): new endpoints and values show up that much later")
	}
	if labels, err := p.client.ReplicaLabels(ctx, time.Now()); err == nil {
		for _, l := range labels {
			h.Warnings = append(h.Warnings, promapi.ReplicaNotice(l))
		}
	}
	down, _ := p.client.DownStores(ctx) // a failed look says nothing: the query above answered
	if len(down) > 0 && p.client.DenyPartial {
		return Health{Status: HealthError, Server: server, Problem: promapi.DownStoresError(down).Error()}
	}
	notices, truncated := promapi.WarningNotices(warns, down)
	h.Warnings = append(h.Warnings, notices...)
	if truncated {
		h.Warnings = append(h.Warnings, fmt.Sprintf("counted from the first %d series only", query.MaxSeriesPerQuery))
	}
	return h
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

// labelValues lists a label's values over vLLM / Ascend / Dynamo series of the last hours; endpoints are the
// instance label in this mode.
func (p *prometheus) labelValues(ctx context.Context, labels ...string) ([]string, error) {
	set := map[string]bool{}
	now := time.Now()
	for _, l := range labels {
		if l == "endpoint" {
			l = "instance"
		}
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
	names, err := p.evaluator.Discovery.Names(ctx)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	addFamilyNames(set, names)
	return sortedKeys(set), nil
}

// endpoints are the instances the server scrapes vLLM from.
func (p *prometheus) endpoints(ctx context.Context) (any, error) {
	insts, err := p.labelValues(ctx, "instance")
	if err != nil {
		return nil, err
	}
	out := make([]endpointName, 0, len(insts))
	for _, i := range insts {
		out = append(out, endpointName{Name: i})
	}
	return out, nil
}

// endpointName is an endpoint whose scrapes the server, not this plugin, knows about.
type endpointName struct {
	Name string `json:"name"`
}

package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/egress"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/httpmetrics"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/role"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

// firstScrapeGrace is how much longer than the scrape timeout a query waits for a first scrape to be recorded.
const firstScrapeGrace = 500 * time.Millisecond

// direct is direct mode's per-instance runtime: the HTTP clients, history, scraper and query engine.
type direct struct {
	settings Settings
	// client carries the data source's credentials; anonymous carries none, for probes of unsaved URLs.
	client, anonymous *http.Client
	store             *history.Store
	scraper           *scraper.Scraper
	engine            *query.Engine
	scrub             *redact.Scrubber
	releaseMemory     func()

	// fleet follows the discovery sources; nil without any.
	fleet *fleet
}

// newDirect builds the runtime and starts scraping.
func newDirect(ctx context.Context, s backend.DataSourceInstanceSettings, st Settings, scrub *redact.Scrubber) (*direct, error) {
	opts, err := httpClientOptions(ctx, s, st, st.egress(false))
	if err != nil {
		return nil, err
	}
	client, err := httpclient.New(opts)
	if err != nil {
		return nil, fmt.Errorf("HTTP client: %w", scrubbed(scrub, err))
	}
	anonymous, err := httpclient.New(withoutCredentials(opts))
	if err != nil {
		return nil, fmt.Errorf("HTTP client: %w", scrubbed(scrub, err))
	}
	store := history.New(history.Options{Retention: st.HistoryRetention(), MaxBytes: st.HistoryBytes()})
	targets := make([]scraper.Target, len(st.Endpoints))
	for i, e := range st.Endpoints {
		targets[i] = scraper.Target{Name: e.DisplayName(), URL: e.URL}
	}
	sc := scraper.New(targets, store, scraper.Options{
		Interval: time.Duration(st.ScrapeInterval), Timeout: time.Duration(st.ScrapeTimeout),
		MaxBodyBytes: st.MaxBodyBytes(), MaxSamples: st.MaxSamples, Client: client, Scrub: scrub,
		GoneFor: st.HistoryRetention(),
	})
	d := &direct{settings: st, client: client, anonymous: anonymous, store: store, scraper: sc, scrub: scrub,
		releaseMemory: reserveMemory(st.MaxMemoryBytes()),
		engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: time.Duration(st.ScrapeInterval),
			Cache: query.NewCache(st.CacheBytes())}}
	sc.Start()
	d.fleet = newFleet(st, targets, sc, client, scrub)
	return d, nil
}

// close stops scraping and releases connections.
func (d *direct) close() {
	d.fleet.close()
	d.scraper.Stop()
	d.client.CloseIdleConnections()
	d.anonymous.CloseIdleConnections()
	d.releaseMemory()
}

// eval answers one query from history; the executed query is the query itself with the step and window.
func (d *direct) eval(ctx context.Context, q query.Query, r query.Request) (*query.Result, string, error) {
	res, err := d.answer(ctx, q, r)
	if err != nil {
		return nil, "", err
	}
	b, _ := json.Marshal(q)
	return res, query.Describe("direct mode", res.Step, res.Window, string(b)), nil
}

// promql refuses: direct mode has no server to send PromQL to.
func (d *direct) promql(context.Context, query.Query, query.Request) (*query.Result, string, error) {
	return nil, "", errPromQLNeedsPrometheus
}

func (d *direct) usable() error { return nil }

// rounds is the scraper: streams send after each of its rounds.
func (d *direct) rounds() rounds { return d.scraper }

func (d *direct) declaredRoles() role.Declared {
	if d.fleet == nil {
		return nil
	}
	return d.fleet.declaredRoles
}

// probeClients are the scrapes' clients, which obey the egress policy.
func (d *direct) probeClients() (_, _ *http.Client, _ error) { return d.client, d.anonymous, nil }

// answer evaluates one query over history, adding a notice for every selected endpoint whose last scrape failed.
func (d *direct) answer(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
	if err := q.EnsureValid(); err != nil {
		return nil, err
	}
	re := q.Matchers().Endpoint
	selected := func(name string) bool { return re == nil || re.MatchString(name) }
	// Grafana creates the instance on the first request (and after every settings save): wait for the selected
	// endpoints' first scrape, at most one scrape timeout, so the first dashboard load is not empty.
	wait, cancel := context.WithTimeout(ctx, time.Duration(d.settings.ScrapeTimeout)+firstScrapeGrace)
	d.fleet.waitFirst(wait)
	d.scraper.WaitFirstScrape(wait, selected)
	cancel()
	d.scraper.Settle() // so the steps up to now are final between rounds (the results cache keeps them)
	res, err := d.engine.Eval(ctx, q, r)
	if err != nil {
		return nil, err
	}
	var down []string
	for _, st := range d.scraper.Down() { // a departed endpoint is gone, not down: its history answers
		if selected(st.Name) {
			down = append(down, fmt.Sprintf("endpoint %s (%s): %s", st.Name, st.URL, st.Error))
		}
	}
	found := d.fleet.result()
	res.Notices = slices.Concat(down, found.Notices, found.Problems(), res.Notices)
	return res, nil
}

// health scrapes every endpoint now and reports each one. Its round waits for one in flight (up to a scrape
// timeout), so the deadline leaves room for both.
func (d *direct) health(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Duration(d.settings.ScrapeTimeout)+2*time.Second)
	defer cancel()
	var found discovery.Result
	if d.fleet != nil {
		// Save & test lists what each source finds now.
		found = d.fleet.refresh(ctx)
	}
	d.scraper.ScrapeAll(ctx)
	d.scraper.WaitVersions(ctx)
	h := Health{Status: HealthOK, Endpoints: d.statuses(), Discovery: found.Reports, Warnings: found.Notices}
	for _, r := range found.Reports {
		if r.Error != "" {
			h.Status = HealthError
		}
	}
	for _, e := range h.Endpoints {
		if !e.Up && !e.Gone {
			h.Status = HealthError
		}
	}
	return h
}

// endpoints are the configured endpoints with their latest scrape status, as the health check reports them.
func (d *direct) endpoints(context.Context) (any, error) { return d.statuses(), nil }

// statuses are the endpoints' latest scrape results.
func (d *direct) statuses() []EndpointHealth {
	sts := d.scraper.Statuses()
	out := make([]EndpointHealth, len(sts))
	for i, st := range sts {
		out[i] = EndpointHealth{Name: st.Name, URL: st.URL, Up: st.Up, Error: st.Error, Detection: st.Detection, Samples: st.Samples,
			Version: st.Version, Gone: st.Gone, GoneSince: st.GoneSince, Source: st.Source, Role: st.Role, Model: st.Model}
		if !st.LastTry.IsZero() {
			out[i].LastScrape = &sts[i].LastTry
		}
	}
	return out
}

// labelValues collects a label's values over every endpoint's history.
func (d *direct) labelValues(_ context.Context, labels ...string) ([]string, error) {
	set := map[string]bool{}
	for _, ep := range d.store.Endpoints() {
		for _, l := range labels {
			for _, v := range d.store.LabelValues(ep, l) {
				set[v] = true
			}
		}
	}
	return sortedKeys(set), nil
}

// metricNames lists family names (histograms once, without their _bucket/_sum/_count series).
func (d *direct) metricNames(context.Context) ([]string, error) {
	set := map[string]bool{}
	for _, ep := range d.store.Endpoints() {
		has := map[string]bool{}
		for _, n := range d.store.Names(ep) {
			has[n] = true
		}
		addFamilyNames(set, has)
	}
	return sortedKeys(set), nil
}

// addFamilyNames adds each sample name to set, except that a histogram's _bucket, _sum and _count series are
// added once under their family name, which is what metric pickers and latency timers refer to.
func addFamilyNames(set, names map[string]bool) {
	for n := range names {
		for _, sfx := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(n, sfx); ok && names[base+"_bucket"] {
				n = base
				break
			}
		}
		set[n] = true
	}
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// httpClientOptions reads Grafana's standard HTTP settings (basic auth, TLS, custom headers) from the instance,
// adds the bearer token from secureJsonData and the egress policy (redirects, denied addresses); both modes build
// their client from it.
func httpClientOptions(ctx context.Context, s backend.DataSourceInstanceSettings, st Settings, policy egress.Policy) (httpclient.Options, error) {
	opts, err := s.HTTPClientOptions(ctx)
	if err != nil {
		return opts, fmt.Errorf("HTTP client settings: %w", err)
	}
	if st.BearerToken != "" {
		if opts.Header == nil {
			opts.Header = http.Header{}
		}
		opts.Header.Set("Authorization", "Bearer "+st.BearerToken)
	}
	// The SDK's middlewares, with its request metrics bound once per client: a scrape round is a request per
	// endpoint every interval, and the SDK's own binds them again at each (httpmetrics).
	opts.Middlewares = httpmetrics.WithBoundMetrics(opts.Middlewares)
	opts.ConfigureClient = func(_ httpclient.Options, c *http.Client) { policy.ConfigureClient(c) }
	opts.ConfigureTransport = func(_ httpclient.Options, t *http.Transport) {
		policy.ConfigureTransport(t)
		// A scrape round visits every endpoint in turn: with fewer idle connections than endpoints (the SDK keeps
		// 100), each endpoint's connection is gone by its next scrape, which then dials and handshakes TLS again.
		n := len(st.Endpoints)
		if len(st.Discovery) > 0 {
			n = MaxEndpoints // as many as discovery may find
		}
		if t.MaxIdleConns > 0 && t.MaxIdleConns < n {
			t.MaxIdleConns = n
		}
	}
	return opts, nil
}

// withoutCredentials is opts without anything that authenticates: no basic auth, headers (bearer token, custom
// headers such as a tenant id), SigV4, TLS client certificate or forwarded user identity.
func withoutCredentials(opts httpclient.Options) httpclient.Options {
	opts.BasicAuth, opts.SigV4, opts.Header, opts.ForwardHTTPHeaders = nil, nil, nil, false
	if opts.TLS != nil {
		tls := *opts.TLS
		tls.ClientCertificate, tls.ClientKey = "", ""
		opts.TLS = &tls
	}
	return opts
}

// secretsOf is a Scrubber for every secret the instance holds: all secureJsonData values, the basic-auth header
// made from them, and the secrets inside the configured URLs.
func secretsOf(s backend.DataSourceInstanceSettings, st Settings) *redact.Scrubber {
	scrub := redact.NewScrubber()
	for _, v := range s.DecryptedSecureJSONData {
		scrub.Add(v)
	}
	scrub.AddBasicAuth(s.BasicAuthUser, s.DecryptedSecureJSONData["basicAuthPassword"])
	scrub.AddBasicAuth(s.User, s.DecryptedSecureJSONData["password"])
	scrub.AddURL(s.URL)
	for _, e := range st.Endpoints {
		scrub.AddURL(e.URL)
	}
	for _, src := range st.Discovery {
		scrub.AddURL(src.URL)
	}
	return scrub
}

// scrubbed is err with the instance's secrets removed from its message.
func scrubbed(scrub *redact.Scrubber, err error) error {
	if err == nil {
		return nil
	}
	return errors.New(scrub.Text(err.Error()))
}

package datasource

import (
	"context"
	"errors"
	"net/http"

	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/role"
)

// mode is how a data source answers: from its own scrapes (direct), from a Prometheus-compatible server, or not at
// all when its settings are unusable (misconfigured). The SDK glue calls only this, so a capability differs by mode
// in one place.
type mode interface {
	// eval answers one query; detail is what the query inspector shows as executed (also on failure, when known).
	eval(ctx context.Context, q query.Query, r query.Request) (res *query.Result, detail string, err error)
	// health checks the sources now.
	health(ctx context.Context) Health
	// endpoints lists the endpoints for editors and variables: configured ones with their scrape status in
	// direct mode, the instances the server scrapes in Prometheus mode.
	endpoints(ctx context.Context) (any, error)
	// metricNames lists metric family names, a histogram once.
	metricNames(ctx context.Context) ([]string, error)
	// labelValues lists the values any of the labels takes; endpoint means the mode's endpoint label.
	labelValues(ctx context.Context, labels ...string) ([]string, error)
	// promql answers a promql query: the user's expression sent as it is, where the mode has a server to send it to.
	promql(ctx context.Context, q query.Query, r query.Request) (res *query.Result, detail string, err error)
	// usable is the settings error of a mode that cannot answer anything, nil otherwise.
	usable() error
	// rounds is what streams follow: a source of scrape rounds, nil in a mode that does not scrape.
	rounds() rounds
	// probeClients are the HTTP clients that test an endpoint URL from the config editor, with the data source's
	// credentials and without any; an error where the mode does not scrape endpoints itself.
	probeClients() (withCredentials, anonymous *http.Client, err error)
	// declaredRoles are the roles endpoints' labels state (discovery's role label, or the label the user's
	// Prometheus relabelled it into), nil where nothing declares any.
	declaredRoles() role.Declared
	// close stops the mode's work and releases its connections.
	close()
}

// rounds announces the end of every scrape round with its time in Unix milliseconds.
type rounds interface {
	Subscribe() (<-chan int64, func())
}

var (
	_ mode = (*direct)(nil)
	_ mode = (*prometheus)(nil)
	_ mode = misconfigured{}
)

// misconfigured is the mode of a data source whose settings are unusable: every call reports the settings error,
// which Grafana shows where the user looks (health check, query, editor) instead of a generic plugin error.
type misconfigured struct{ err error }

// configError is a settings error as users see it.
type configError struct{ err error }

func (e configError) Error() string { return "data source configuration: " + e.err.Error() }
func (e configError) Unwrap() error { return e.err }

func (m misconfigured) eval(context.Context, query.Query, query.Request) (*query.Result, string, error) {
	return nil, "", configError{m.err}
}

func (m misconfigured) health(context.Context) Health {
	return Health{Status: HealthError, Problem: "Configuration error: " + m.err.Error()}
}

func (m misconfigured) endpoints(context.Context) (any, error) { return nil, configError{m.err} }

func (m misconfigured) metricNames(context.Context) ([]string, error) { return nil, configError{m.err} }

func (m misconfigured) labelValues(context.Context, ...string) ([]string, error) {
	return nil, configError{m.err}
}

func (m misconfigured) promql(context.Context, query.Query, query.Request) (*query.Result, string, error) {
	return nil, "", configError{m.err}
}

func (m misconfigured) usable() error { return configError{m.err} }

func (misconfigured) rounds() rounds { return nil }

func (misconfigured) declaredRoles() role.Declared { return nil }

func (misconfigured) probeClients() (_, _ *http.Client, _ error) {
	return nil, nil, errProbeNeedsDirect
}

func (misconfigured) close() {}

// errPromQLNeedsPrometheus refuses promql queries outside Prometheus mode.
var errPromQLNeedsPrometheus = query.Invalid(errors.New("promql queries need a data source in Prometheus mode"))

// errProbeNeedsDirect refuses endpoint tests outside a working direct mode: they use its clients and egress policy.
var errProbeNeedsDirect = errors.New("endpoint tests need a saved direct-mode configuration")

// statusOfResourceError is the HTTP status a resource answers when its mode fails: a settings error is the
// caller's request against a broken configuration, anything else a failing upstream server.
func statusOfResourceError(err error) int {
	var ce configError
	if errors.As(err, &ce) {
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}

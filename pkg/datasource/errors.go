package datasource

import (
	"context"
	"errors"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// classify is a failed query's status and whose fault it is, for Grafana's plugin metrics and SLOs: a bad query,
// a broken configuration, a failing or refusing server and a cancelled request are downstream; anything else is
// the plugin's own.
func classify(ctx context.Context, err error) (backend.Status, backend.ErrorSource) {
	var (
		invalid *query.InvalidError
		config  configError
		server  *promapi.Error
	)
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return backend.StatusTimeout, backend.ErrorSourceDownstream
	case errors.As(err, &config), errors.As(err, &invalid):
		return backend.StatusBadRequest, backend.ErrorSourceDownstream
	case errors.As(err, &server):
		return statusOf(server), backend.ErrorSourceDownstream
	}
	return backend.StatusInternal, backend.ErrorSourcePlugin
}

// statusOf maps a Prometheus-compatible server's answer to the status Grafana shows.
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

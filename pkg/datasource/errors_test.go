package datasource

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

func TestErrorsCarryTheirSource(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		err    error
		status backend.Status
		source backend.ErrorSource
	}{
		{"invalid query", context.Background(), (&query.Query{QueryType: "nope"}).Validate(), backend.StatusBadRequest, backend.ErrorSourceDownstream},
		{"wrapped invalid query", context.Background(), fmt.Errorf("rule: %w", query.Invalid(errors.New("x"))), backend.StatusBadRequest, backend.ErrorSourceDownstream},
		{"settings", context.Background(), configError{errors.New("no endpoints")}, backend.StatusBadRequest, backend.ErrorSourceDownstream},
		{"server down", context.Background(), &promapi.Error{Message: "connection refused"}, backend.StatusBadGateway, backend.ErrorSourceDownstream},
		{"server 500", context.Background(), fmt.Errorf("names: %w", &promapi.Error{Status: 500}), backend.StatusBadGateway, backend.ErrorSourceDownstream},
		{"server 401", context.Background(), &promapi.Error{Status: 401}, backend.StatusUnauthorized, backend.ErrorSourceDownstream},
		{"cancelled", cancelled, errors.New("context canceled"), backend.StatusTimeout, backend.ErrorSourceDownstream},
		{"a bug", context.Background(), errors.New("index out of range"), backend.StatusInternal, backend.ErrorSourcePlugin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, source := classify(tc.ctx, tc.err)
			if status != tc.status || source != tc.source {
				t.Errorf("classify = %v, %v; want %v, %v", status, source, tc.status, tc.source)
			}
		})
	}
}

// TestQueryErrorsReachGrafanaWithSource checks the data response itself: a bad query and a broken configuration
// are the user's (downstream) errors, with their message.
func TestQueryErrorsReachGrafanaWithSource(t *testing.T) {
	d := &Datasource{mode: misconfigured{errors.New("endpoints: none configured")}, streams: newStreamRegistry()}
	resp, _ := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A", JSON: []byte(`{"queryType":"queue"}`)}}})
	if r := resp.Responses["A"]; r.ErrorSource != backend.ErrorSourceDownstream || r.Status != backend.StatusBadRequest ||
		r.Error == nil || r.Error.Error() != "data source configuration: endpoints: none configured" {
		t.Errorf("misconfigured: %v %v %v", r.Status, r.ErrorSource, r.Error)
	}
	d.mode = &direct{}
	resp, _ = d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A", JSON: []byte(`{"queryType":`)}}})
	if r := resp.Responses["A"]; r.ErrorSource != backend.ErrorSourceDownstream || r.Status != backend.StatusBadRequest {
		t.Errorf("broken JSON: %v %v %v", r.Status, r.ErrorSource, r.Error)
	}
	resp, _ = d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A", JSON: []byte(`{"queryType":"queue","measure":"nope"}`)}}})
	if r := resp.Responses["A"]; r.ErrorSource != backend.ErrorSourceDownstream || r.Status != backend.StatusBadRequest || r.Error == nil {
		t.Errorf("bad measure: %v %v %v", r.Status, r.ErrorSource, r.Error)
	}
}

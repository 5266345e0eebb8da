// Package datasource is the SDK glue of the vLLM data source backend: instance lifecycle, queries, health,
// resources and streams. The domain logic lives in the packages it calls.
package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"
)

// PluginID is the data source's id in src/datasource/plugin.json.
const PluginID = "inferscope-vllm-datasource"

var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ backend.CallResourceHandler   = (*Datasource)(nil)
	_ backend.StreamHandler         = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// Datasource is one configured vLLM data source, rebuilt by the SDK whenever its settings change.
type Datasource struct {
	backend.CallResourceHandler
	settings Settings
	// settingsErr keeps a configuration error so health checks and queries can report it instead of failing
	// instance creation, which Grafana would only show as a generic plugin error.
	settingsErr error
}

// NewInstance builds a Datasource from the instance settings Grafana sends.
func NewInstance(_ context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	st, err := LoadSettings(s)
	d := &Datasource{settings: st, settingsErr: err}
	d.CallResourceHandler = httpadapter.New(d.routes())
	return d, nil
}

// Dispose releases the instance when its settings change or Grafana shuts the plugin down.
func (d *Datasource) Dispose() {}

// Query is the part of every query's JSON that all query types share.
type Query struct {
	QueryType string `json:"queryType"`
}

// QueryData answers each query on its own, so one bad query never hides the others' data.
func (d *Datasource) QueryData(_ context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		resp.Responses[q.RefID] = d.query(q)
	}
	return resp, nil
}

func (d *Datasource) query(q backend.DataQuery) backend.DataResponse {
	if d.settingsErr != nil {
		return backend.ErrDataResponse(backend.StatusBadRequest, "data source configuration: "+d.settingsErr.Error())
	}
	var m Query
	if err := json.Unmarshal(q.JSON, &m); err != nil {
		return backend.ErrDataResponse(backend.StatusBadRequest, "query JSON is invalid: "+err.Error())
	}
	qt := m.QueryType
	if qt == "" {
		qt = q.QueryType
	}
	return backend.ErrDataResponse(backend.StatusNotImplemented,
		fmt.Sprintf("query type %q is not supported by this build of the data source", qt))
}

// CheckHealth reports whether the configuration is usable.
func (d *Datasource) CheckHealth(_ context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if d.settingsErr != nil {
		return &backend.CheckHealthResult{
			Status:  backend.HealthStatusError,
			Message: "Configuration error: " + strings.ReplaceAll(d.settingsErr.Error(), "\n", "; "),
		}, nil
	}
	return &backend.CheckHealthResult{
		Status: backend.HealthStatusOk,
		Message: fmt.Sprintf("Configuration is valid (%s mode, %d endpoint(s)); this build does not query endpoints yet",
			d.settings.Mode, len(d.settings.Endpoints)),
	}, nil
}

// SubscribeStream refuses every channel: this build publishes no live streams yet.
func (d *Datasource) SubscribeStream(_ context.Context, _ *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusNotFound}, nil
}

// PublishStream refuses writes: data flows from the backend to panels only.
func (d *Datasource) PublishStream(_ context.Context, _ *backend.PublishStreamRequest) (*backend.PublishStreamResponse, error) {
	return &backend.PublishStreamResponse{Status: backend.PublishStreamStatusPermissionDenied}, nil
}

// RunStream is never reached while SubscribeStream refuses every path.
func (d *Datasource) RunStream(_ context.Context, req *backend.RunStreamRequest, _ *backend.StreamSender) error {
	return fmt.Errorf("no stream at path %q", req.Path)
}

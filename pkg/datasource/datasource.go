// Package datasource is the SDK glue of the vLLM data source backend: instance lifecycle, queries, health,
// resources and streams. The domain logic lives in the packages it calls.
package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"

	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
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
	uid      string
	settings Settings
	// settingsErr keeps a configuration error so health checks and queries can report it instead of failing
	// instance creation, which Grafana would only show as a generic plugin error.
	settingsErr error
	direct      *direct
	prom        *prometheus
	streams     *streamRegistry
	// scrub removes this instance's secrets from every message that may quote a server.
	scrub *redact.Scrubber
}

// NewInstance builds a Datasource from the instance settings Grafana sends; in direct mode it starts scraping.
func NewInstance(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	st, err := LoadSettings(s)
	scrub := secretsOf(s, st)
	d := &Datasource{uid: s.UID, settings: st, settingsErr: scrubbed(scrub, err), streams: newStreamRegistry(), scrub: scrub}
	if err == nil && st.Mode == ModeDirect {
		if d.direct, err = newDirect(ctx, s, st, scrub); err != nil {
			d.settingsErr = scrubbed(scrub, err)
		}
	}
	if err == nil && st.Mode == ModePrometheus {
		if d.prom, err = newPrometheus(ctx, s, st, scrub); err != nil {
			d.settingsErr = scrubbed(scrub, err)
		}
	}
	d.CallResourceHandler = httpadapter.New(d.routes())
	return d, nil
}

// Dispose stops scraping when the settings change or Grafana shuts the plugin down.
func (d *Datasource) Dispose() {
	if d.direct != nil {
		d.direct.close()
	}
	if d.prom != nil {
		d.prom.close()
	}
}

// QueryData answers each query on its own, so one bad query never hides the others' data.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		r := d.query(ctx, q)
		if r.Error != nil {
			r.Error = scrubbed(d.scrub, r.Error)
		}
		resp.Responses[q.RefID] = r
	}
	return resp, nil
}

func (d *Datasource) query(ctx context.Context, dq backend.DataQuery) backend.DataResponse {
	if d.settingsErr != nil {
		return backend.ErrDataResponse(backend.StatusBadRequest, "data source configuration: "+d.settingsErr.Error())
	}
	q, err := parseQuery(dq)
	if err != nil {
		return backend.ErrDataResponse(backend.StatusBadRequest, err.Error())
	}
	if q.QueryType == query.TypeDiagnosis {
		return d.diagnose(ctx, q, dq)
	}
	if d.prom != nil {
		return d.prom.query(ctx, q, dq)
	}
	if q.QueryType == query.TypePromQL {
		return backend.ErrDataResponse(backend.StatusBadRequest, "promql queries need a data source in Prometheus mode")
	}
	res, err := d.direct.eval(ctx, q, query.Request{From: dq.TimeRange.From, To: dq.TimeRange.To, Interval: dq.Interval, MaxDataPoints: dq.MaxDataPoints})
	if err != nil {
		if ctx.Err() != nil {
			return backend.ErrDataResponse(backend.StatusTimeout, "query cancelled: "+ctx.Err().Error())
		}
		return backend.ErrDataResponse(backend.StatusBadRequest, err.Error())
	}
	frames := query.Frames(q, res)
	channel := d.streams.register(d.uid, q)
	for _, f := range frames {
		f.Meta.Channel = channel
	}
	// The query inspector reads the first frame's executed query; one copy keeps the answer's size independent of it.
	b, _ := json.Marshal(q)
	frames[0].Meta.ExecutedQueryString = query.Describe("direct mode", res.Step, res.Window, string(b))
	return backend.DataResponse{Frames: frames}
}

// parseQuery reads the query JSON; Grafana also sends the query type outside the JSON, which fills a gap.
func parseQuery(dq backend.DataQuery) (query.Query, error) {
	var q query.Query
	if err := json.Unmarshal(dq.JSON, &q); err != nil {
		return q, errors.New("query JSON is invalid: " + err.Error())
	}
	if q.QueryType == "" {
		q.QueryType = query.Type(dq.QueryType)
	}
	return q, q.Validate()
}

// CheckHealth reports whether the configuration is usable and, in direct mode, scrapes every endpoint.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if d.settingsErr != nil {
		return &backend.CheckHealthResult{
			Status:  backend.HealthStatusError,
			Message: "Configuration error: " + strings.ReplaceAll(d.settingsErr.Error(), "\n", "; "),
		}, nil
	}
	var res *backend.CheckHealthResult
	if d.prom != nil {
		res = d.prom.health(ctx)
	} else {
		res = d.direct.health(ctx)
	}
	res.Message = d.scrub.Text(res.Message)
	res.JSONDetails = []byte(d.scrub.Text(string(res.JSONDetails)))
	log.DefaultLogger.FromContext(ctx).Debug("health check", "status", res.Status.String())
	return res, nil
}

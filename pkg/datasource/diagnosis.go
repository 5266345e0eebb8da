package datasource

import (
	"context"
	"errors"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// diagnose runs the troubleshooting rules over the last few minutes before the query's end, through this data
// source's own query path, so the diagnosis reads the same in direct and Prometheus mode.
func (d *Datasource) diagnose(ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse {
	r := query.Request{From: dq.TimeRange.To.Add(-query.DiagnosisWindow), To: dq.TimeRange.To, Interval: dq.Interval}
	eval := func(ctx context.Context, sub query.Query) ([]query.Output, error) {
		res, err := d.evalOutputs(ctx, sub, r)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	findings, err := query.Diagnose(ctx, q, eval)
	if err != nil {
		return backend.ErrDataResponse(backend.StatusBadRequest, "diagnosis: "+err.Error())
	}
	return backend.DataResponse{Frames: data.Frames{query.DiagnosisFrame(findings)}}
}

// evalOutputs answers a query as series in whichever mode this data source is in.
func (d *Datasource) evalOutputs(ctx context.Context, q query.Query, r query.Request) ([]query.Output, error) {
	switch {
	case d.direct != nil:
		res, err := d.direct.eval(ctx, q, r)
		if err != nil {
			return nil, err
		}
		return res.Outputs, nil
	case d.prom != nil:
		ans, err := d.prom.eval.Eval(ctx, q, r)
		if err != nil {
			return nil, err
		}
		return ans.Result.Outputs, nil
	default:
		return nil, errors.New("the data source is not configured")
	}
}

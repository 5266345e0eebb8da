package datasource

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// diagnose runs the troubleshooting rules over the last few minutes before the query's end, through this data
// source's own query path, so the diagnosis reads the same in direct and Prometheus mode. The rule queries'
// notices (which endpoints failed and why) go onto the findings table.
func (d *Datasource) diagnose(ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse {
	r := query.Request{From: dq.TimeRange.To.Add(-query.DiagnosisWindow), To: dq.TimeRange.To, Interval: dq.Interval}
	var (
		mu      sync.Mutex // the rules' queries run concurrently
		notices []string
	)
	seen := map[string]bool{}
	eval := func(ctx context.Context, sub query.Query) ([]query.Output, error) {
		res, err := d.evalResult(ctx, sub, r)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, n := range res.Notices {
			if !seen[n] && isEndpointNotice(n) {
				seen[n] = true
				notices = append(notices, n)
			}
		}
		return res.Outputs, nil
	}
	findings, skipped, err := query.Diagnose(ctx, q, eval)
	if err != nil {
		return backend.ErrDataResponse(backend.StatusTimeout, "diagnosis: "+err.Error())
	}
	f := query.DiagnosisFrame(findings)
	sort.Strings(notices) // in the order of no rule: they answer concurrently
	for _, n := range append(notices, skipped...) {
		f.Meta.Notices = append(f.Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: n})
	}
	return backend.DataResponse{Frames: data.Frames{f}}
}

// isEndpointNotice keeps the notices about endpoints (down, failing) and drops those about a rule query's own
// range or data, which would only confuse a findings table.
func isEndpointNotice(n string) bool { return strings.HasPrefix(n, "endpoint ") }

// evalResult answers a query in whichever mode this data source is in.
func (d *Datasource) evalResult(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
	res, _, err := d.evaluate(ctx, q, r)
	return res, err
}

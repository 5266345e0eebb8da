// Package datasource is the SDK glue of the vLLM data source backend: instance lifecycle, queries, health,
// resources and streams. The domain logic lives in the packages it calls.
package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/lora"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/role"
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
	// mode answers queries, health checks and resources: direct, Prometheus, or misconfigured, which reports the
	// settings error where the user looks instead of failing instance creation (Grafana would only show a generic
	// plugin error).
	mode    mode
	streams *streamRegistry
	// scrub removes this instance's secrets from every message that may quote a server.
	scrub *redact.Scrubber
	// roles keeps prefill/decode resolutions for role.CacheTTL; nil resolves every time.
	roleCache *role.Cache
}

// NewInstance builds a Datasource from the instance settings Grafana sends; in direct mode it starts scraping.
func NewInstance(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	st, err := LoadSettings(s)
	scrub := secretsOf(s, st)
	d := &Datasource{uid: s.UID, settings: st, streams: newStreamRegistry(), scrub: scrub, roleCache: role.NewCache()}
	switch {
	case err != nil:
	case st.Mode == ModePrometheus:
		d.mode, err = newPrometheus(ctx, s, st, scrub)
	default:
		d.mode, err = newDirect(ctx, s, st, scrub)
	}
	if err != nil {
		d.mode = misconfigured{scrubbed(scrub, err)}
	}
	if declared := d.mode.declaredRoles(); declared != nil {
		d.roleCache.Declare(declared)
	}
	d.CallResourceHandler = httpadapter.New(d.routes())
	return d, nil
}

// Dispose stops scraping when the settings change or Grafana shuts the plugin down.
func (d *Datasource) Dispose() { d.mode.close() }

// maxParallelQueries bounds how many of one request's queries are answered at once: a panel's queries run side by
// side, and Grafana's own concurrent panel requests stay the larger share of the work.
const maxParallelQueries = 4

// QueryData answers each query on its own, so one bad query never hides the others' data; up to maxParallelQueries
// at once.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	answers := parallel.MapN(maxParallelQueries, req.Queries, func(q backend.DataQuery) (a backend.DataResponse) {
		// A panic here would end the plugin process (the SDK recovers only its own goroutine): it fails this query
		// alone.
		defer func() {
			if r := recover(); r != nil {
				log.DefaultLogger.FromContext(ctx).Error("query panicked", "refId", q.RefID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				a = backend.ErrDataResponse(backend.StatusInternal, "internal error while answering the query; the plugin log has the details")
			}
		}()
		return d.query(ctx, q)
	})
	resp := backend.NewQueryDataResponse()
	for i, q := range req.Queries {
		resp.Responses[q.RefID] = answers[i]
	}
	return resp, nil
}

func (d *Datasource) query(ctx context.Context, dq backend.DataQuery) backend.DataResponse {
	if err := d.mode.usable(); err != nil {
		return d.errorResponse(ctx, err, "")
	}
	q, err := d.parseQuery(dq)
	if err != nil {
		return d.errorResponse(ctx, err, "")
	}
	handle, special := queryMux[q.QueryType]
	if !special {
		handle = (*Datasource).measure
	}
	return handle(d, ctx, q, dq)
}

// queryHandler answers one parsed query.
type queryHandler func(d *Datasource, ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse

// queryMux routes the query types that are not measures over the mode's data, in the style of the SDK's
// QueryTypeMux; every other type is a measure (Datasource.measure).
var queryMux = map[query.Type]queryHandler{
	query.TypeDiagnosis: (*Datasource).diagnose,
	query.TypePromQL: func(d *Datasource, ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse {
		return d.frames(ctx, q, dq, d.mode.promql)
	},
}

// measure answers a measure query (raw metrics included) in the data source's mode.
func (d *Datasource) measure(ctx context.Context, q query.Query, dq backend.DataQuery) backend.DataResponse {
	return d.frames(ctx, q, dq, d.evaluate)
}

// frames answers a query with eval and shapes the result into frames; in a mode that scrapes, the frames carry the
// channel that streams the query's newest values.
func (d *Datasource) frames(ctx context.Context, q query.Query, dq backend.DataQuery, eval func(context.Context, query.Query, query.Request) (*query.Result, string, error)) backend.DataResponse {
	res, detail, err := eval(ctx, q, query.Request{From: dq.TimeRange.From, To: dq.TimeRange.To, Interval: dq.Interval, MaxDataPoints: dq.MaxDataPoints})
	if err != nil {
		return d.errorResponse(ctx, err, detail)
	}
	query.ApplyOutput(q, res)
	query.ApplyLimit(q, res)
	query.ApplyBucketRates(q, res)
	query.ApplyDistribution(q, res)
	frames := query.Frames(q, res)
	// A live channel streams the newest point of every series the query computes: a top list or a distribution is
	// taken over the panel's whole range, and bucket rates are taken apart across series, so such panels update on
	// refresh instead.
	if d.mode.rounds() != nil && q.Limit == 0 && len(q.Buckets) == 0 && !q.ReadsBuckets() {
		channel := d.streams.register(d.uid, q)
		for _, f := range frames {
			f.Meta.Channel = channel
		}
	}
	// The query inspector reads the first frame's executed query; one copy keeps the answer's size independent of it.
	frames[0].Meta.ExecutedQueryString = detail
	return backend.DataResponse{Frames: frames}
}

// evaluate answers a query in this data source's mode; what no single mode query answers goes through pkg/role
// (endpoints' prefill/decode roles, the P/D TTFT) and pkg/lora (LoRA adapters from their label lists). detail is
// what the query inspector shows as executed: every query that ran.
func (d *Datasource) evaluate(ctx context.Context, q query.Query, r query.Request) (*query.Result, string, error) {
	if !q.Composed() {
		return d.mode.eval(ctx, q, r)
	}
	var mu sync.Mutex
	var details []string
	modeEval := func(ctx context.Context, sub query.Query, r query.Request) (*query.Result, error) {
		res, detail, err := d.mode.eval(ctx, sub, r)
		if detail != "" {
			mu.Lock()
			details = append(details, detail)
			mu.Unlock()
		}
		return res, err
	}
	eval := func(ctx context.Context, sub query.Query, r query.Request) (*query.Result, error) {
		if sub.ReadsLoRA() {
			return lora.Answer(ctx, modeEval, sub, r)
		}
		return modeEval(ctx, sub, r)
	}
	res, err := role.Answer(ctx, eval, q, r, d.roleCache)
	sort.Strings(details) // the evidence queries run concurrently
	return res, query.Truncate(strings.Join(details, "\n\n"), query.MaxExecutedQueryBytes), err
}

// errorResponse is a failed query's answer: the status and whose fault it is (errors.go), the message without
// secrets, and the executed query when one ran.
func (d *Datasource) errorResponse(ctx context.Context, err error, detail string) backend.DataResponse {
	status, source := classify(ctx, err)
	resp := backend.ErrDataResponseWithSource(status, source, d.scrub.Text(err.Error()))
	if detail != "" {
		f := data.NewFrame("error")
		f.SetMeta(&data.FrameMeta{ExecutedQueryString: detail})
		resp.Frames = data.Frames{f}
	}
	return resp
}

// parseQuery reads the query JSON; Grafana also sends the query type outside the JSON, which fills a gap, and the
// data source's accelerator peaks fill the query's unless it names its own.
func (d *Datasource) parseQuery(dq backend.DataQuery) (query.Query, error) {
	var q query.Query
	if err := json.Unmarshal(dq.JSON, &q); err != nil {
		return q, query.Invalid(errors.New("query JSON is invalid: " + err.Error()))
	}
	if q.QueryType == "" {
		q.QueryType = query.Type(dq.QueryType)
	}
	if q.ReadsPeaks() {
		tflops, tbps := d.settings.Peaks()
		if q.PeakTFLOPS == nil {
			q.PeakTFLOPS = &tflops
		}
		if q.PeakMemoryTBps == nil {
			q.PeakMemoryTBps = &tbps
		}
	}
	return q, q.Validate()
}

// CheckHealth reports whether the configuration is usable and, in direct mode, scrapes every endpoint.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	res := d.mode.health(ctx).Result()
	res.Message = d.scrub.Text(strings.ReplaceAll(res.Message, "\n", "; "))
	res.JSONDetails = []byte(d.scrub.Text(string(res.JSONDetails)))
	log.DefaultLogger.FromContext(ctx).Debug("health check", "status", res.Status.String())
	return res, nil
}

package datasource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/live"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// streamPathPrefix starts every Live channel path this data source serves: query/<id>.
const streamPathPrefix = "query/"

// maxStreams bounds the registry; dashboards with many variable combinations register many queries.
const maxStreams = 1000

// streamRegistry remembers the queries whose frames point at a Live channel, so RunStream can evaluate them.
type streamRegistry struct {
	mu      sync.Mutex
	queries map[string]query.Query
}

func newStreamRegistry() *streamRegistry { return &streamRegistry{queries: map[string]query.Query{}} }

// register returns the channel for a query, the same for identical queries.
func (r *streamRegistry) register(uid string, q query.Query) string {
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	id := hex.EncodeToString(sum[:8])
	r.mu.Lock()
	if len(r.queries) >= maxStreams {
		r.queries = map[string]query.Query{} // the next QueryData of a live panel registers its query again
	}
	r.queries[id] = q
	r.mu.Unlock()
	return live.Channel{Scope: live.ScopeDatasource, Namespace: uid, Path: streamPathPrefix + id}.String()
}

func (r *streamRegistry) lookup(path string) (query.Query, bool) {
	id, ok := strings.CutPrefix(path, streamPathPrefix)
	if !ok {
		return query.Query{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.queries[id]
	return q, ok
}

// SubscribeStream accepts channels of queries this instance has answered in direct mode.
func (d *Datasource) SubscribeStream(_ context.Context, req *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	if _, ok := d.streams.lookup(req.Path); !ok || d.direct == nil {
		return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusNotFound}, nil
	}
	return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusOK}, nil
}

// PublishStream refuses writes: data flows from the backend to panels only.
func (d *Datasource) PublishStream(_ context.Context, _ *backend.PublishStreamRequest) (*backend.PublishStreamResponse, error) {
	return &backend.PublishStreamResponse{Status: backend.PublishStreamStatusPermissionDenied}, nil
}

// RunStream sends, after every scrape round, the newest value of each of the query's series as one wide frame,
// until Grafana cancels the stream when the last subscriber leaves.
func (d *Datasource) RunStream(ctx context.Context, req *backend.RunStreamRequest, sender *backend.StreamSender) error {
	q, ok := d.streams.lookup(req.Path)
	if !ok || d.direct == nil {
		return fmt.Errorf("no stream at path %q", req.Path)
	}
	rounds, unsubscribe := d.direct.scraper.Subscribe()
	defer unsubscribe()
	interval := time.Duration(d.settings.ScrapeInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case t := <-rounds:
			now := time.UnixMilli(t)
			res, err := d.direct.eval(ctx, q, query.Request{From: now.Add(-2 * interval), To: now, Interval: interval})
			if err != nil {
				// Returning an error makes Grafana restart the stream silently; skip this round instead.
				continue
			}
			if f := latestFrame(res); f != nil {
				if err := sender.SendFrame(f, data.IncludeAll); err != nil {
					return err
				}
			}
		}
	}
}

// latestFrame is a one-row wide frame holding the newest point of every output series.
func latestFrame(res *query.Result) *data.Frame {
	var newest int64
	for _, o := range res.Outputs {
		if n := len(o.Points); n > 0 && o.Points[n-1].T > newest {
			newest = o.Points[n-1].T
		}
	}
	if newest == 0 {
		return nil
	}
	f := data.NewFrame("stream", data.NewField(data.TimeSeriesTimeFieldName, nil, []time.Time{time.UnixMilli(newest).UTC()}))
	for _, o := range res.Outputs {
		n := len(o.Points)
		if n == 0 || o.Points[n-1].T != newest {
			continue
		}
		field := data.NewField(o.Measure, data.Labels(o.Labels), []float64{o.Points[n-1].V})
		field.Config = &data.FieldConfig{Unit: o.Unit}
		f.Fields = append(f.Fields, field)
	}
	return f
}

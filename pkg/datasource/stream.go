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

// Bounds of a data source's stream registry (each data source instance has its own): dashboards with many
// variable combinations register many queries, and any Viewer can register more.
const (
	maxStreams     = 1000
	maxStreamBytes = 4 << 20 // query JSON held
)

// streamRegistry remembers the queries whose frames point at a Live channel, so RunStream can evaluate them. When
// full, it forgets the least recently registered query that no stream is running; a running stream's query is
// never evicted, and a query that finds the registry full of running streams gets no channel.
type streamRegistry struct {
	mu      sync.Mutex
	entries map[string]*streamEntry
	bytes   int
	clock   uint64
}

type streamEntry struct {
	q       query.Query
	size    int
	running int    // RunStream calls evaluating it now
	used    uint64 // registry clock of the last registration
}

func newStreamRegistry() *streamRegistry { return &streamRegistry{entries: map[string]*streamEntry{}} }

// register returns the channel for a query, the same for identical queries, or "" when the registry is full of
// running streams.
func (r *streamRegistry) register(uid string, q query.Query) string {
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	id := hex.EncodeToString(sum[:8])
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock++
	if e := r.entries[id]; e != nil {
		e.used = r.clock
	} else {
		if len(b) > maxStreamBytes {
			return ""
		}
		for len(r.entries) >= maxStreams || r.bytes+len(b) > maxStreamBytes {
			if !r.evictIdle() {
				return ""
			}
		}
		r.entries[id] = &streamEntry{q: q, size: len(b), used: r.clock}
		r.bytes += len(b)
	}
	return live.Channel{Scope: live.ScopeDatasource, Namespace: uid, Path: streamPathPrefix + id}.String()
}

// evictIdle forgets the least recently registered query without a running stream; false when there is none.
func (r *streamRegistry) evictIdle() bool {
	var oldest string
	for id, e := range r.entries {
		if e.running == 0 && (oldest == "" || e.used < r.entries[oldest].used) {
			oldest = id
		}
	}
	if oldest == "" {
		return false
	}
	r.bytes -= r.entries[oldest].size
	delete(r.entries, oldest)
	return true
}

func (r *streamRegistry) lookup(path string) (query.Query, bool) {
	id, ok := strings.CutPrefix(path, streamPathPrefix)
	if !ok {
		return query.Query{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[id]
	if !ok {
		return query.Query{}, false
	}
	return e.q, true
}

// acquire is lookup for a stream that starts running: its query stays registered until release.
func (r *streamRegistry) acquire(path string) (query.Query, func(), bool) {
	id, _ := strings.CutPrefix(path, streamPathPrefix)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[id]
	if !ok || !strings.HasPrefix(path, streamPathPrefix) {
		return query.Query{}, nil, false
	}
	e.running++
	return e.q, func() {
		r.mu.Lock()
		e.running--
		r.mu.Unlock()
	}, true
}

// SubscribeStream accepts channels of queries this instance has answered in a mode that scrapes (direct).
func (d *Datasource) SubscribeStream(_ context.Context, req *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	if d.mode.rounds() == nil {
		return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusNotFound}, nil
	}
	if _, ok := d.streams.lookup(req.Path); !ok {
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
	source := d.mode.rounds() // only a mode that scrapes streams: it knows when a scrape round ends
	if source == nil {
		return fmt.Errorf("no stream at path %.64q", req.Path)
	}
	q, release, ok := d.streams.acquire(req.Path)
	if !ok {
		return fmt.Errorf("no stream at path %.64q", req.Path)
	}
	defer release()
	rounds, unsubscribe := source.Subscribe()
	defer unsubscribe()
	interval := time.Duration(d.settings.ScrapeInterval)
	var sent int64 // the newest time sent: a round whose scrapes brought nothing newer (failed, timed out) sends nothing
	for {
		select {
		case <-ctx.Done():
			return nil
		case t := <-rounds:
			now := time.UnixMilli(t)
			res, _, err := d.evaluate(ctx, q, query.Request{From: now.Add(-2 * interval), To: now, Interval: interval})
			if err != nil {
				// Returning an error makes Grafana restart the stream silently; skip this round instead.
				continue
			}
			if f, newest := latestFrame(res); f != nil && newest > sent {
				if err := sender.SendFrame(f, data.IncludeAll); err != nil {
					return err
				}
				sent = newest
			}
		}
	}
}

// latestFrame is a one-row wide frame holding the newest point of every output series, and that point's time.
func latestFrame(res *query.Result) (*data.Frame, int64) {
	var newest int64
	for _, o := range res.Outputs {
		if n := len(o.Points); n > 0 && o.Points[n-1].T > newest {
			newest = o.Points[n-1].T
		}
	}
	if newest == 0 {
		return nil, 0
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
	return f, newest
}

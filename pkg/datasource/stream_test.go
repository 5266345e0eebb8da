package datasource

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestStreamRegistryKeepsRunningStreams (item 5): a flood of distinct queries used to clear the registry, so live
// panels' channels vanished. Now idle queries go first, oldest first, a running stream's query stays, and the
// registry's size stays bounded in entries and bytes.
func TestStreamRegistryKeepsRunningStreams(t *testing.T) {
	r := newStreamRegistry()
	live := r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: "live"})
	_, release, ok := r.acquire(strings.TrimPrefix(live, "ds/ds/"))
	if !ok {
		t.Fatalf("channel %q not found", live)
	}
	defer release()
	for i := 0; i < 5*maxStreams; i++ {
		r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: fmt.Sprintf("flood-%d", i), LegendFormat: strings.Repeat("x", 2000)})
	}
	if _, ok := r.lookup(strings.TrimPrefix(live, "ds/ds/")); !ok {
		t.Fatal("the running stream's query was evicted by the flood")
	}
	if len(r.entries) > maxStreams || r.bytes > maxStreamBytes {
		t.Fatalf("registry holds %d queries, %d bytes", len(r.entries), r.bytes)
	}
	recent := r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: fmt.Sprintf("flood-%d", 5*maxStreams-1), LegendFormat: strings.Repeat("x", 2000)})
	if _, ok := r.lookup(strings.TrimPrefix(recent, "ds/ds/")); !ok {
		t.Fatal("the most recent query is not registered")
	}
}

// TestStreamRegistryFullOfRunningStreams: when every entry runs, a new query gets no channel instead of evicting.
func TestStreamRegistryFullOfRunningStreams(t *testing.T) {
	r := newStreamRegistry()
	var releases []func()
	for i := 0; i < maxStreams; i++ {
		ch := r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: fmt.Sprint(i)})
		_, release, ok := r.acquire(strings.TrimPrefix(ch, "ds/ds/"))
		if !ok {
			t.Fatal(i)
		}
		releases = append(releases, release)
	}
	if ch := r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: "new"}); ch != "" {
		t.Fatalf("got channel %q with every entry running", ch)
	}
	releases[0]()
	if ch := r.register("ds", query.Query{QueryType: query.TypeQueue, Endpoint: "new"}); ch == "" {
		t.Fatal("no channel after a stream stopped")
	}
}

// TestStreamRegistryIsPerDataSource: two data sources' floods do not touch each other's queries.
func TestStreamRegistryIsPerDataSource(t *testing.T) {
	a := instance(t, backend.DataSourceInstanceSettings{UID: "a", JSONData: []byte(`{"scrapeInterval":"1h","endpoints":[{"url":"http://127.0.0.1:1/metrics"}]}`)})
	b := instance(t, backend.DataSourceInstanceSettings{UID: "b", JSONData: []byte(`{"scrapeInterval":"1h","endpoints":[{"url":"http://127.0.0.1:1/metrics"}]}`)})
	ch := a.streams.register("a", query.Query{QueryType: query.TypeQueue})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < maxStreams; i++ {
				b.streams.register("b", query.Query{QueryType: query.TypeQueue, Endpoint: fmt.Sprint(w, "-", i)})
			}
		}(w)
	}
	wg.Wait()
	resp, err := a.SubscribeStream(context.Background(), &backend.SubscribeStreamRequest{Path: strings.TrimPrefix(ch, "ds/a/")})
	if err != nil || resp.Status != backend.SubscribeStreamStatusOK {
		t.Fatalf("a's stream after b's flood: %v %v", resp, err)
	}
}

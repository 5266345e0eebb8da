package datasource

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// countingSender counts the frames a stream sends.
type countingSender struct {
	mu     sync.Mutex
	frames int
}

func (s *countingSender) Send(*backend.StreamPacket) error {
	s.mu.Lock()
	s.frames++
	s.mu.Unlock()
	return nil
}

func (s *countingSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}

// simEndpoint serves a simulated vLLM V1 server with two engines on loopback until the test ends.
func simEndpoint(t *testing.T) *httptest.Server {
	t.Helper()
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-engines=2", "-qps=5", "-seed=3"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestStreamsEvaluateEachScrapeOnce: live panels on a scraped simulator — two channels whose queries differ only in
// their legend, and a third query — evaluate, after each scrape, only the newest step, once per distinct query.
func TestStreamsEvaluateEachScrapeOnce(t *testing.T) {
	ts := simEndpoint(t)
	store := history.New(history.Options{})
	sc := scraper.New([]scraper.Target{{Name: "sim", URL: ts.URL + "/metrics"}}, store,
		scraper.Options{Interval: time.Second, Timeout: 900 * time.Millisecond, Client: ts.Client()})
	cache := query.NewCache(64 << 20)
	d := &Datasource{uid: "ds", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(time.Second), ScrapeTimeout: Duration(900 * time.Millisecond)},
		mode: &direct{store: store, scraper: sc, engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: time.Second, Cache: cache}}}
	sc.Start()
	defer sc.Stop()
	first, cancelFirst := context.WithTimeout(context.Background(), 10*time.Second)
	sc.WaitFirstScrape(first, func(string) bool { return true })
	cancelFirst()
	rev0 := store.Revision("sim")

	kv := query.Query{QueryType: query.TypeKVCacheUsage}
	kvLegend := kv
	kvLegend.LegendFormat = "{{engine}}"
	running := query.Query{QueryType: query.TypeQueue, Measure: "running"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	senders := make([]*countingSender, 3)
	for i, q := range []query.Query{kv, kvLegend, running} {
		senders[i] = &countingSender{}
		path := strings.TrimPrefix(d.streams.register("ds", q), "ds/ds/")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.RunStream(ctx, &backend.RunStreamRequest{Path: path}, backend.NewStreamSender(senders[i])); err != nil {
				t.Error(err)
			}
		}()
	}
	for ctx.Err() == nil && (senders[0].count() < 5 || senders[1].count() < 5 || senders[2].count() < 5) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if senders[0].count() < 5 {
		t.Fatalf("the streams sent %d, %d and %d frames in 30 s", senders[0].count(), senders[1].count(), senders[2].count())
	}
	oldest, newest, _ := store.Bounds("sim")
	rounds := int64((newest-oldest)/1000) + 2 // scrapes are a second apart, give or take the ticker
	st := cache.Stats()
	// Each round ends a new step; two distinct queries evaluate it once each (the first round: the three steps of
	// the stream's range). Without the cache three streams would evaluate three steps a round. A revision change (a
	// scrape that fails on a loaded machine drops the endpoint's names) makes each query evaluate its three steps
	// again.
	revisions := int64(store.Revision("sim") - rev0)
	if limit := 2*(rounds+3) + 6*revisions; st.Computed > limit {
		t.Errorf("%d scrape rounds, %d revisions: the streams computed %d steps, want at most %d (reused %d)", rounds, revisions, st.Computed, limit, st.Reused)
	}
	if st.Reused == 0 {
		t.Error("nothing was reused")
	}
	t.Logf("%d rounds, %d revisions: %d steps computed, %d reused", rounds, revisions, st.Computed, st.Reused)
}

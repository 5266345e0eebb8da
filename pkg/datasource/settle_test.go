package datasource

import (
	"context"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

// TestDirectModeAnswersFromTheWatermark: a panel refreshed twice between two scrape rounds, with steps after the
// newest scrape, evaluates those steps once. Direct mode has the scraper give history its watermark before
// answering, so the steps whose time has passed are final although no scrape has come after them yet.
func TestDirectModeAnswersFromTheWatermark(t *testing.T) {
	ts := simEndpoint(t)
	store := history.New(history.Options{})
	sc := scraper.New([]scraper.Target{{Name: "sim", URL: ts.URL + "/metrics"}}, store,
		scraper.Options{Interval: time.Hour, Timeout: 30 * time.Second, Client: ts.Client()}) // rounds only when the test asks
	cache := query.NewCache(64 << 20)
	d := &direct{settings: Settings{ScrapeInterval: Duration(time.Hour), ScrapeTimeout: Duration(30 * time.Second)}, store: store, scraper: sc,
		engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: time.Second, Cache: cache}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sc.ScrapeAll(ctx)
	_, scraped, ok := store.Bounds("sim")
	if !ok {
		t.Fatal("the round recorded nothing")
	}
	// Two whole seconds after the scrape: the range's last steps come after it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().UnixMilli() < scraped+2100 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	to := time.Now().Truncate(time.Second)
	if to.UnixMilli() <= scraped+1000 {
		t.Fatalf("the clock did not pass the scrape (%d) by two seconds: now %s", scraped, to)
	}
	r := query.Request{From: to.Add(-30 * time.Second), To: to, Interval: time.Second}
	q := query.Query{QueryType: query.TypeKVCacheUsage}
	if _, err := d.answer(ctx, q, r); err != nil {
		t.Fatal(err)
	}
	before := cache.Stats()
	res, err := d.answer(ctx, q, r)
	if err != nil {
		t.Fatal(err)
	}
	after := cache.Stats()
	if got := after.Computed - before.Computed; got != 0 {
		t.Errorf("the second refresh evaluated %d steps, want every one from the cache: the steps after the scrape were not final", got)
	}
	if len(res.Outputs) == 0 || len(res.Outputs[0].Points) == 0 {
		t.Fatalf("no KV usage answered: %+v", res.Outputs)
	}
	if last := res.Outputs[0].Points[len(res.Outputs[0].Points)-1].T; last <= scraped {
		t.Errorf("the last step answered is %d, not after the scrape at %d", last, scraped)
	}
}

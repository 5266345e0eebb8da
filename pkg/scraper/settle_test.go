package scraper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/history"
)

// TestSettleWaitsForTheRound: between rounds Settle gives history the watermark just before now, so an endpoint's
// newest time runs past its last scrape; during a round, just before the round began (its scrapes are stamped from
// then on, before now); and the round's scrape lands after both, leaving the revision (and every cached answer) as
// it was.
func TestSettleWaitsForTheRound(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 2 { // the second round waits until the test has tried to settle during it
			close(arrived)
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		_, _ = w.Write([]byte("vllm:num_requests_running{engine=\"0\"} 1\n"))
	}))
	defer srv.Close()
	store := history.New(history.Options{})
	s := New([]Target{{Name: "a", URL: srv.URL}}, store, Options{Interval: time.Hour, Timeout: 40 * time.Second})
	ctx := context.Background()

	s.ScrapeAll(ctx)
	_, first, ok := store.Bounds("a")
	if !ok {
		t.Fatal("the first round recorded nothing")
	}
	for time.Now().UnixMilli() <= first+5 { // bounded: a few milliseconds of wall time
		time.Sleep(time.Millisecond)
	}
	s.Settle()
	_, settled, _ := store.Bounds("a")
	if settled <= first || settled >= time.Now().UnixMilli() {
		t.Fatalf("newest after Settle between rounds = %d, want after the scrape (%d) and before now", settled, first)
	}
	rev := store.Revision("a")

	for time.Now().UnixMilli() <= settled+5 { // the next round begins after the watermark
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.ScrapeAll(ctx); close(done) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the second round never reached the endpoint")
	}
	for time.Now().UnixMilli() <= settled+10 {
		time.Sleep(time.Millisecond)
	}
	s.Settle() // a round is in flight: its scrape is stamped when it began, before now, so only that far
	_, during, _ := store.Bounds("a")
	if during <= settled {
		t.Errorf("Settle during a round left newest at %d: the round began after it", during)
	}
	close(release)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the second round did not finish")
	}
	if _, n, _ := store.Bounds("a"); n <= during {
		t.Errorf("newest after the second round = %d, want its scrape, after the watermark given during it (%d)", n, during)
	}
	if store.Revision("a") != rev {
		t.Error("the round changed the revision: its scrape was stamped at or before a watermark")
	}
}

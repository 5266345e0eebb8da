package scraper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
)

// keeper records into a history store and keeps every scrape it was given, against the Recorder rule, to see what
// the scraper did with them afterwards.
type keeper struct {
	*history.Store
	mu   sync.Mutex
	kept []*exposition.Scrape
}

func (k *keeper) Append(endpoint string, t int64, sc *exposition.Scrape) bool {
	if sc.Family("vllm:num_requests_running") == nil {
		panic("the scrape reached the recorder without its samples")
	}
	same := k.Store.Append(endpoint, t, sc)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, sc)
	return same
}

// TestScrapeReleasedOnceRecorded checks that the scraper releases each parsed scrape once the recorder has it, so
// that the next parse reuses its arrays (exposition.Scrape.Release): before, every scrape of every endpoint made
// a sample and a label array sized for its body, two thirds of all a data source allocated at 256 endpoints
// (BenchmarkScrapeFleet), and the collector's pace.
func TestScrapeReleasedOnceRecorded(t *testing.T) {
	body, err := os.ReadFile("../../testdata/fixtures/synthetic_v1_8engines_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	rec := &keeper{Store: history.New(history.Options{})}
	s := New([]Target{{Name: "dp8", URL: srv.URL}}, rec, Options{Interval: time.Second, Timeout: time.Minute})
	for range 3 {
		s.ScrapeAll(context.Background())
	}
	if st := s.Statuses()[0]; !st.Up || st.Samples == 0 {
		t.Fatalf("the scrape failed: %+v", st)
	}
	if len(rec.kept) != 3 {
		t.Fatalf("the recorder got %d scrapes, want 3", len(rec.kept))
	}
	for i, sc := range rec.kept {
		if sc.Families != nil {
			t.Fatalf("scrape %d still holds %d families after the recorder had it: it was not released", i, len(sc.Families))
		}
	}
	// What history kept of them is whole, though their arrays were cleared and reused: every series' labels.
	fresh, err := exposition.Parse(body, exposition.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for smp := range fresh.Series("vllm:num_requests_running") {
		want = append(want, smp.Labels.String())
	}
	var got []string
	for _, sr := range rec.Select("dp8", "vllm:num_requests_running", 0, time.Now().UnixMilli(), nil) {
		got = append(got, sr.Labels.String())
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("history holds the series %q, want %q", got, want)
	}
}

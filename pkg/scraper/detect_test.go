package scraper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// TestDetectsOnlyWhenTheSeriesChange: an endpoint's flavor and ranks are told from its series' names and labels,
// which a serving engine's scrapes repeat with new values; telling them again at every scrape was a tenth of
// scraping's CPU at 256 endpoints. A scrape is detected again when its series differ from the previous one's, and
// after a failed scrape.
func TestDetectsOnlyWhenTheSeriesChange(t *testing.T) {
	var calls atomic.Int64
	defer func(d func(vllm.Exposed) vllm.Detection) { detect = d }(detect)
	detect = func(e vllm.Exposed) vllm.Detection {
		calls.Add(1)
		return vllm.Detect(e)
	}
	var mu sync.Mutex
	body, fail := "", false
	serve := func(b string, f bool) {
		mu.Lock()
		defer mu.Unlock()
		body, fail = b, f
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	s := New([]Target{{Name: "e", URL: srv.URL}}, history.New(history.Options{}), Options{Interval: time.Hour, Timeout: time.Minute})
	oneEngine := func(v string) string {
		return "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} " + v + "\n"
	}
	twoEngines := func(v string) string {
		return oneEngine(v) + "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} " + v + "\n"
	}
	steps := []struct {
		name      string
		body      string
		fail      bool
		detected  int64 // calls to detect so far
		wantRanks []string
	}{
		{name: "first scrape", body: oneEngine("1"), detected: 1, wantRanks: []string{"0"}},
		{name: "new values", body: oneEngine("2"), detected: 1, wantRanks: []string{"0"}},
		{name: "new values again", body: oneEngine("3"), detected: 1, wantRanks: []string{"0"}},
		{name: "a second engine", body: twoEngines("3"), detected: 2, wantRanks: []string{"0", "1"}},
		{name: "its new values", body: twoEngines("4"), detected: 2, wantRanks: []string{"0", "1"}},
		{name: "down", fail: true, detected: 2},
		{name: "back", body: twoEngines("5"), detected: 3, wantRanks: []string{"0", "1"}},
		{name: "one engine again", body: oneEngine("5"), detected: 4, wantRanks: []string{"0"}},
	}
	for i, st := range steps {
		serve(st.body, st.fail)
		// Each scrape is stamped later than the one before: history ignores one that is not.
		time.Sleep(time.Until(time.UnixMilli(time.Now().UnixMilli() + 2)))
		s.ScrapeAll(context.Background())
		status := s.Statuses()[0]
		if got := calls.Load(); got != st.detected {
			t.Errorf("step %d (%s): %d detections so far, want %d", i, st.name, got, st.detected)
		}
		if st.fail {
			if status.Up || status.Detection != nil {
				t.Errorf("step %d (%s): status %+v, want down without a detection", i, st.name, status)
			}
			continue
		}
		if !status.Up || status.Detection == nil {
			t.Fatalf("step %d (%s): status %+v", i, st.name, status)
		}
		if status.Detection.Flavor != vllm.FlavorV1 || !slices.Equal(status.Detection.Ranks, st.wantRanks) {
			t.Errorf("step %d (%s): detected %s with ranks %q, want %s with %q", i, st.name, status.Detection.Flavor,
				status.Detection.Ranks, vllm.FlavorV1, st.wantRanks)
		}
	}
}

// TestUpSampleChangesNoDetection: the scraper detects a scrape's flavor after history has it, with the up sample
// upScrape added; on every fixture, the detection is the one of the scrape as parsed.
func TestUpSampleChangesNoDetection(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/fixtures/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		opts := exposition.ParseOptions{Keep: vllm.ReadsFamily, NormalizeFloatLabels: true}
		sc, err := exposition.Parse(body, opts)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := vllm.Detect(vllm.ScrapeExposed{Scrape: sc})
		if got := vllm.Detect(vllm.ScrapeExposed{Scrape: upScrape(1, sc)}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: with the up sample %+v, without %+v", filepath.Base(p), got, want)
		}
	}
}

package query

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// countedReads is a HistorySource that counts the selections made through it.
type countedReads struct {
	HistorySource
	n *atomic.Int64
}

func (c countedReads) Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	c.n.Add(1)
	return c.HistorySource.Select(endpoint, name, from, to, match, maxPoints)
}

func (c countedReads) SelectRates(endpoint, name string, from, to int64, steps []int64, window int64, filter string, match func(exposition.Labels) bool, maxPoints int) ([]Series, int, bool) {
	c.n.Add(1)
	return c.HistorySource.SelectRates(endpoint, name, from, to, steps, window, filter, match, maxPoints)
}

func (c countedReads) SelectLatest(endpoint, name string, from, carry, to int64, filter string, match func(exposition.Labels) bool, maxPoints int) ([]Series, int, bool) {
	c.n.Add(1)
	return c.HistorySource.SelectLatest(endpoint, name, from, carry, to, filter, match, maxPoints)
}

// TestCacheSameStepAttainmentReadsNothing: a refresh of an SLO attainment (and goodput) that adds no step takes its
// values and its bucket-bounds notice from the cache, reading no series, and answers as an uncached engine does.
func TestCacheSameStepAttainmentReadsNothing(t *testing.T) {
	f := newLiveFleetOf(t, time.Hour, map[string][]string{"v1": cacheFleet["v1"], "v0": cacheFleet["v0"]})
	for range 10 * 12 {
		f.scrape("", "")
	}
	const step = 15 * time.Second
	for f.start.Add(f.el+5*time.Second).UnixMilli()/step.Milliseconds() != f.start.Add(f.el).UnixMilli()/step.Milliseconds() {
		f.scrape("", "")
	}
	reads := &atomic.Int64{}
	src := countedReads{HistorySource{Store: f.store}, reads}
	cached := &Engine{Source: src, ScrapeInterval: 5 * time.Second, Cache: NewCache(64 << 20)}
	plain := &Engine{Source: HistorySource{Store: f.store}, ScrapeInterval: 5 * time.Second}
	threshold := 0.3 // between bounds: the answer carries the interpolation notice
	at := func() Request {
		now := f.start.Add(f.el)
		return Request{From: now.Add(-10 * time.Minute), To: now, Interval: step}
	}
	for _, measure := range []string{"slo_attainment", "goodput"} {
		q := Query{QueryType: TypeLatency, Measure: measure, Metric: "ttft", Threshold: &threshold, GroupBy: GroupEndpoint}
		if _, err := cached.Eval(context.Background(), q, at()); err != nil {
			t.Fatal(err)
		}
	}
	f.scrape("", "") // within the newest scrape's step
	reads.Store(0)
	for _, measure := range []string{"slo_attainment", "goodput"} {
		q := Query{QueryType: TypeLatency, Measure: measure, Metric: "ttft", Threshold: &threshold, GroupBy: GroupEndpoint}
		got, err := cached.Eval(context.Background(), q, at())
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Eval(context.Background(), q, at())
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Outputs) == 0 || len(want.Notices) == 0 {
			t.Fatalf("%s: %d series, notices %q: want series and the interpolation notice", measure, len(want.Outputs), want.Notices)
		}
		if d := resultDiff(want, got); d != "" {
			t.Errorf("%s: cached answer differs from uncached: %s", measure, d)
		}
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("refreshes within the step read %d selections, want 0", n)
	}
}

package history

import (
	"testing"
)

// TestWatermarkCompletesBounds: the writer's watermark extends every endpoint's newest time past its last scrape
// and never goes back; anything written at or before it after all (a row, a point with its own timestamp, an
// endpoint marked down) changes the endpoint's Revision, so an answer cached on the watermark's word is redone,
// while a scrape after it changes nothing.
func TestWatermarkCompletesBounds(t *testing.T) {
	s := New(Options{})
	sc := singleEngine(t)
	for _, ep := range []string{"a", "b"} {
		s.Append(ep, 10_000, sc)
		s.Append(ep, 15_000, sc)
	}
	if _, n, _ := s.Bounds("a"); n != 15_000 {
		t.Fatalf("newest before any watermark = %d, want the last scrape 15000", n)
	}
	s.AdvanceWatermark(17_999)
	s.AdvanceWatermark(16_000) // never back
	for _, ep := range []string{"a", "b"} {
		if o, n, ok := s.Bounds(ep); o != 10_000 || n != 17_999 || !ok {
			t.Errorf("%s: Bounds = %d..%d %v, want 10000..17999 (the watermark)", ep, o, n, ok)
		}
		if _, _, n, _ := s.Span(ep); n != 17_999 {
			t.Errorf("%s: Span's newest = %d, want the watermark 17999", ep, n)
		}
	}
	if _, _, ok := s.Bounds("none"); ok {
		t.Error("the watermark made an endpoint without history held")
	}

	rev := s.Revision("a")
	s.Append("a", 20_000, sc) // after the watermark: what the scraper does
	if s.Revision("a") != rev {
		t.Error("a scrape after the watermark changed the revision")
	}
	if _, n, _ := s.Bounds("a"); n != 20_000 {
		t.Errorf("newest = %d after a scrape past the watermark, want 20000", n)
	}

	s.AdvanceWatermark(30_000)
	rev = s.Revision("a")
	s.Append("a", 25_000, sc) // the clock stepped back: a row the watermark said would not come
	if s.Revision("a") == rev {
		t.Error("a row at or before the watermark left the revision as it was")
	}

	own := parseText(t, "vllm:num_requests_running{engine=\"0\"} 3 28000\n")
	rev = s.Revision("a")
	s.Append("a", 40_000, own) // a scrape after the watermark holding a point stamped before it
	if s.Revision("a") == rev {
		t.Error("a point with its own timestamp at or before the watermark left the revision as it was")
	}
	// Such an endpoint may stamp every scrape's points before the watermark: it is no longer extended by it, so
	// points stamped between its scrapes change nothing cached and need no new revision.
	s.AdvanceWatermark(50_000)
	if _, n, _ := s.Bounds("a"); n != 40_000 {
		t.Errorf("newest of an endpoint with its own timestamps = %d, want its newest scrape 40000, not the watermark", n)
	}
	rev = s.Revision("a")
	s.Append("a", 55_000, parseText(t, "vllm:num_requests_running{engine=\"0\"} 4 45000\n"))
	if s.Revision("a") != rev {
		t.Error("a point stamped between two scrapes of an endpoint with its own timestamps changed the revision")
	}

	rev = s.Revision("b")
	s.MarkDown("b", 29_000)
	if s.Revision("b") == rev {
		t.Error("marking an endpoint down at or before the watermark left the revision as it was")
	}
}

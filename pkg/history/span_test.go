package history

import (
	"testing"
	"time"
)

// TestSpanIsRevisionAndBounds: Span answers what Revision and Bounds answer, for a held endpoint whose oldest scrapes
// are trimmed and for one not held, and reading it allocates nothing (every query reads it for every endpoint).
func TestSpanIsRevisionAndBounds(t *testing.T) {
	s := New(Options{Retention: 10 * time.Minute})
	sc := singleEngine(t)
	for i := range 600 { // 50 minutes of 5 s scrapes: sealed blocks, trimmed, and a head
		s.Append("a", int64(i)*5000, sc)
		if i%97 != 0 {
			continue
		}
		rev, oldest, newest, ok := s.Span("a")
		o, n, held := s.Bounds("a")
		if rev != s.Revision("a") || oldest != o || newest != n || ok != held || !ok {
			t.Fatalf("scrape %d: Span = %d %d %d %v, Revision and Bounds = %d %d %d %v", i, rev, oldest, newest, ok, s.Revision("a"), o, n, held)
		}
	}
	if o, n, _ := s.Bounds("a"); o != 599*5000-10*60*1000 || n != 599*5000 {
		t.Errorf("Bounds = %d..%d, want the last 10 minutes up to %d", o, n, 599*5000)
	}
	if rev, _, _, ok := s.Span("none"); rev != 0 || ok {
		t.Errorf("Span of an endpoint not held = %d %v", rev, ok)
	}
	if a := testing.AllocsPerRun(100, func() { s.Span("a") }); a != 0 {
		t.Errorf("Span allocates %v times", a)
	}
	if a := testing.AllocsPerRun(100, func() { s.Bounds("a") }); a != 0 {
		t.Errorf("Bounds allocates %v times", a)
	}
	// Span reads what writes published: a removed endpoint is not held, and one added again starts afresh.
	rev, _, _, _ := s.Span("a")
	s.Remove("a")
	if r, _, _, ok := s.Span("a"); r != 0 || ok {
		t.Errorf("Span of a removed endpoint = %d %v", r, ok)
	}
	s.Append("a", 1_000_000, sc)
	if r, o, n, ok := s.Span("a"); r <= rev || o != 1_000_000 || n != 1_000_000 || !ok {
		t.Errorf("Span of the endpoint added again = %d %d %d %v; want a revision past %d and its one scrape", r, o, n, ok, rev)
	}
}

package history

import (
	"testing"
	"time"
)

// TestRevision: an endpoint's revision stays while scrapes only add points after the newest one, and changes when
// what earlier scrapes answer may change: a sample name gained or lost, a point written into the past, Remove.
func TestRevision(t *testing.T) {
	steps := []struct {
		name    string
		t       int64 // scrape time, s
		text    string
		changes bool
	}{
		{"first scrape", 10, "a 1\nb 2\n", true},
		{"same names, new values", 15, "a 2\nb 3\n", false},
		{"a new label set of a known name", 20, "a 3\nb 4\nb{x=\"1\"} 1\n", false},
		{"a sample with its own timestamp after the newest scrape", 25, "a 4\nb 5\nb{x=\"1\"} 2\nb{x=\"2\"} 1 24000\n", false},
		{"a sample with its own timestamp at an earlier scrape", 30, "a 5\nb 6\nb{x=\"3\"} 1 15000\n", true},
		{"a series vanishes (a staleness marker, names kept)", 35, "a 6\n", false},
		{"a new name", 40, "a 7\nc 1\n", true},
		{"a failed scrape", 45, "", false},
	}
	s := New(Options{Retention: time.Hour})
	if r := s.Revision("ep"); r != 0 {
		t.Fatalf("an endpoint not held has revision %d, want 0", r)
	}
	var prev uint64
	for _, st := range steps {
		s.Append("ep", st.t*1000, parseText(t, st.text))
		r := s.Revision("ep")
		if changed := r != prev; changed != st.changes {
			t.Errorf("%s: revision %d → %d, want a change: %v", st.name, prev, r, st.changes)
		}
		prev = r
	}
	s.Remove("ep")
	s.Append("ep", 100_000, parseText(t, "a 1\n"))
	if r := s.Revision("ep"); r == prev || r == 0 {
		t.Errorf("a removed and re-added endpoint has revision %d, its old one was %d", r, prev)
	}
}

// TestRevisionChangesWhenTrimmingForgetsAName: once every point of a name is trimmed the name is gone from Names,
// which the revision reports.
func TestRevisionChangesWhenTrimmingForgetsAName(t *testing.T) {
	s := New(Options{Retention: time.Minute})
	s.Append("ep", 0, parseText(t, "gone 1\nkept 1\n"))
	before := s.Revision("ep")
	// Blocks are trimmed whole: run far enough for the block holding "gone" to leave the retention.
	for i := int64(1); i <= 2*blockRows+2; i++ {
		s.Append("ep", i*5000, parseText(t, "kept 1\n"))
	}
	names := s.Names("ep")
	if len(names) != 1 || names[0] != "kept" {
		t.Fatalf("names after trimming: %v", names)
	}
	if s.Revision("ep") == before {
		t.Error("trimming forgot a name but the revision stayed")
	}
}

package history

import (
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// readNewest selects every name over the newest minutes as a warm refresh's new steps do (a short lookback, a
// 5-minute rate window with its step, ranges ending past the newest scrape and at a step before it), checking each answer against the
// model (from the oldest scrape held if capped), and returns how many selections a tail could answer.
func readNewest(t *testing.T, s *Store, m *refModel, step int, capped bool) int {
	t.Helper()
	floor := m.lastT - DefaultRetention.Milliseconds()
	if oldest, _, ok := s.Bounds("ep"); ok && capped {
		floor = max(floor, oldest) // a memory cap trims from the oldest block
	}
	match := func(ls exposition.Labels) bool { return ls.Get("le") == "+Inf" || ls.Get("engine") == "1" }
	served := 0
	for _, name := range m.names() {
		for _, r := range [][2]int64{{60_000, 0}, {300_000, 0}, {315_000, 0}, {300_000, 7_000}, {300_000, -7_000}, {45_000, -40_000}} {
			lo, hi := m.lastT-r[0], m.lastT+r[1]
			for _, f := range []func(exposition.Labels) bool{nil, match} {
				if err := diffSeries(s.Select("ep", name, lo, hi, f), m.selectRef(name, max(lo, floor), hi, f)); err != nil {
					t.Fatalf("scrape %d: Select(%s, newest %d ms to %+d ms): %v", step, name, r[0], r[1], err)
				}
			}
			if ep := s.get("ep"); ep != nil {
				ep.mu.RLock()
				for _, id := range ep.byName[name] {
					if tl := ep.tails.get(id); tl != nil && tl.from <= lo {
						served++
						break
					}
				}
				ep.mu.RUnlock()
			}
		}
	}
	return served
}

// TestTailsAnswerAsDecoding reads the newest minutes every few scrapes through series that vanish and return,
// failed scrapes, samples with their own timestamps (some out of order), special values and heads sealed into
// blocks: answers from tails equal the reference model's, with and without a memory cap that trims blocks.
func TestTailsAnswerAsDecoding(t *testing.T) {
	for _, sc := range []scenario{
		{name: "churn", fixture: dynamoFixture, steps: 3*blockRows + 17, churn: true, markDown: true, every: 4},
		{name: "explicit", fixture: dynamoFixture, steps: 2*blockRows + 9, explicit: true, specials: true, every: 3},
	} {
		for _, capped := range []bool{false, true} {
			if capped && sc.explicit {
				continue // the model knows no cap: it cannot tell which own-timestamped points a trimmed block took
			}
			opts := Options{MaxBytes: -1, MemoBytes: -1} // no memo: every repeated read is a tail's or decoded
			if capped {
				opts.MaxBytes = 48 << 10 // a few blocks: the cap trims while tails live
			}
			s := New(opts)
			served := 0
			sc.run(t, s, "ep", func(step int, m *refModel) {
				served += readNewest(t, s, m, step, capped)
				if got := s.tailBytes.Load(); got > s.tailMax {
					t.Fatalf("tails hold %d bytes, bound %d", got, s.tailMax)
				}
			})
			if served == 0 {
				t.Fatalf("%s (capped %v): no selection was answered from a tail", sc.name, capped)
			}
		}
	}
}

// TestTailsBounded holds tails to their budget, drops those nobody reads, and gives their bytes back on Remove.
func TestTailsBounded(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	const bound = 16 << 10
	s := New(Options{MaxBytes: -1, MemoBytes: -1, TailBytes: bound})
	m := newRefModel()
	at := func(i int64) int64 { return i * 5000 }
	i := int64(0)
	for ; i < 100; i++ {
		s.Append("ep", at(i), sc)
		m.append(at(i), sc)
		if i%5 == 0 {
			readNewest(t, s, m, int(i), false)
			if got := s.tailBytes.Load(); got > bound {
				t.Fatalf("tails hold %d bytes, bound %d", got, bound)
			}
		}
	}
	if s.tailBytes.Load() == 0 {
		t.Fatal("nothing kept as a tail within the bound")
	}
	// Nobody reads for longer than tailIdle: the writes drop every tail.
	for end := i + tailIdle/5000 + 2; i < end; i++ {
		s.Append("ep", at(i), sc)
		m.append(at(i), sc)
	}
	if got := s.tailBytes.Load(); got != 0 {
		t.Fatalf("tails unread for %v still hold %d bytes", time.Duration(tailIdle)*time.Millisecond, got)
	}
	readNewest(t, s, m, int(i), false)
	s.Remove("ep")
	if got := s.tailBytes.Load(); got != 0 {
		t.Fatalf("after Remove the tails hold %d bytes", got)
	}
}

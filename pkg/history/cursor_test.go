package history

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

// TestRateCursorsMatchPoints reads rates as refreshes do, one or two new steps after every scrape and now and then
// an older one, of counters that grow, reset, vanish and return, outgrow the exact sums, hold fractions, end for
// good (their id given to a new series) or begin late, through endpoint-down markers, block seals and retention
// trimming, and checks every answer, rates and point counts, against the reference model's points. The steady
// counter's rates must come from its cursor but in the blocks the endpoint-down marker put in XOR.
func TestRateCursorsMatchPoints(t *testing.T) {
	const retention = 15 * time.Minute
	s := New(Options{MaxBytes: -1, Retention: retention})
	m := newRefModel()
	rng := newRand(11)
	v := map[string]float64{"steady": 100, "resets": 50, "gaps": 7, "huge": 1 << 52, "frac": 0.5, "once": 3, "late": 9}
	const name = "x_total"
	checked, cursorMoved := 0, 0
	for i := int64(1); i <= 700; i++ {
		now := i * 5000
		var b strings.Builder
		b.WriteString("# TYPE x counter\n")
		for _, k := range []string{"steady", "resets", "gaps", "huge", "frac", "once", "late"} {
			switch k {
			case "resets":
				if rng.IntN(40) == 0 {
					v[k] = float64(rng.IntN(4))
				}
			case "gaps":
				if (i/30)%3 == 1 {
					continue
				}
			case "once":
				if i > 100 {
					continue
				}
			case "late":
				if i < 400 {
					continue
				}
			}
			if k == "frac" {
				v[k] += 0.25 * float64(rng.IntN(3))
			} else {
				v[k] += float64(rng.IntN(6))
			}
			fmt.Fprintf(&b, "x_total{k=%q} %v\n", k, v[k])
		}
		if i == 350 {
			s.MarkDown("ep", now)
			m.markDown(now)
		} else {
			sc := parseText(t, b.String())
			s.Append("ep", now, sc)
			m.append(now, sc)
		}
		for _, window := range []int64{60_000, 300_000} {
			to := now + rng.Int64N(5000)
			last := to - to%15_000
			grids := [][]int64{{last}, {last - 15_000, last}}
			if i%13 == 0 {
				grids = append(grids, []int64{last - 60_000})
			}
			for _, steps := range grids {
				from := steps[0] - window
				got, ok := s.SelectRates("ep", name, from, to, steps, window, nil, 0)
				if !ok {
					t.Fatal("SelectRates without a bound did not fit")
				}
				have := ratesGot(got)
				want := ratesOf(m.selectRef(name, max(from, m.lastT-retention.Milliseconds()), to, nil), steps, window)
				if fmt.Sprint(have) != fmt.Sprint(want) {
					t.Fatalf("scrape %d, steps %v, window %d: rates differ from the reference's\n got %v\nwant %v", i, steps, window, have, want)
				}
				checked += len(got)
				if c := steadyCursor(s, window); c != nil && c.end == steps[len(steps)-1] && c.n > 1 {
					// Moved to this read's last step, or left there by the one before at the same step.
					cursorMoved++
				}
			}
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d series' rates checked", checked)
	}
	if cursorMoved < 2000 {
		t.Fatalf("the steady counter's cursor answered %d reads of 2 800: its rates came from its points", cursorMoved)
	}
	ep := s.rlock("ep")
	n, slots := 0, 0
	for _, s := range ep.cursors.byWindow {
		slots += cap(s)
		for _, c := range s {
			if c != nil {
				n++
			}
		}
	}
	ep.mu.RUnlock()
	if held := s.cursorBytes.Load(); held != int64(n)*cursorSize+8*int64(slots) || n == 0 {
		t.Fatalf("%d cursors in %d slots, %d bytes counted", n, slots, held)
	}
	s.Remove("ep")
	if held := s.cursorBytes.Load(); held != 0 {
		t.Fatalf("after Remove, %d bytes of cursors counted", held)
	}
}

// steadyCursor is the cursor of the series k="steady" for window, nil if it has none.
func steadyCursor(s *Store, window int64) *rateCursor {
	ep := s.rlock("ep")
	defer ep.mu.RUnlock()
	ep.cursors.mu.Lock()
	defer ep.cursors.mu.Unlock()
	for _, id := range ep.byName["x_total"] {
		if s := ep.cursors.byWindow[window]; ep.series[id].id != nil && ep.series[id].id.labels.Get("k") == "steady" && int(id) < len(s) {
			return s[id]
		}
	}
	return nil
}

// TestRateCursorsBounded checks that cursors stop being made at their bound (half the memo's), and that
// the rates are then answered from the points alike.
func TestRateCursorsBounded(t *testing.T) {
	s := New(Options{MaxBytes: -1, MemoBytes: 2 * (3*cursorSize + 8*12)}) // slots for 10 series (and room to grow) and 3 cursors
	var b strings.Builder
	for k := range 10 {
		fmt.Fprintf(&b, "x_total{k=\"%d\"} %d\n", k, k)
	}
	sc := parseText(t, b.String())
	for i := int64(1); i <= 20; i++ {
		for _, smp := range samples(sc) {
			smp.Value++
		}
		s.Append("ep", i*5000, sc)
	}
	got, _ := s.SelectRates("ep", "x_total", 100_000-60_000, 100_000, []int64{100_000}, 60_000, nil, 0)
	if len(got) != 10 {
		t.Fatalf("%d series rated, want 10", len(got))
	}
	pts := map[string][]derive.Point{}
	for _, r := range s.Select("ep", "x_total", 100_000-60_000, 100_000, nil) {
		pts[seriesKey(r.Name, r.Labels)] = r.Points
	}
	if have, want := ratesGot(got), ratesOf(pts, []int64{100_000}, 60_000); fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("rates differ from those of the points\n got %v\nwant %v", have, want)
	}
	if held := s.cursorBytes.Load(); held != 3*cursorSize+8*12 {
		t.Fatalf("cursors hold %d bytes, want 3 cursors' and 12 slots' %d", held, 3*cursorSize+8*12)
	}
}

// TestCursorSlotsGrowInPlace: a series table that grows within the room its cursor slots were made with (a quarter
// more) lengthens them in place; they are made anew, and counted, only past it. Before, every new series made a
// new array of slots for every rate window, at every refresh that added a step.
func TestCursorSlotsGrowInPlace(t *testing.T) {
	s := New(Options{MaxBytes: -1})
	const window = 60_000
	scrape := func(at int64, series int) {
		var b strings.Builder
		for k := range series {
			fmt.Fprintf(&b, "x_total{k=\"%d\"} %d\n", k, at/1000+int64(k))
		}
		s.Append("ep", at, parseText(t, b.String()))
	}
	read := func(at int64) []*rateCursor {
		t.Helper()
		if got, _ := s.SelectRates("ep", "x_total", at-window, at, []int64{at}, window, nil, 0); len(got) == 0 {
			t.Fatal("nothing rated")
		}
		ep := s.get("ep")
		ep.cursors.mu.Lock()
		defer ep.cursors.mu.Unlock()
		return ep.cursors.byWindow[window]
	}
	for i := int64(1); i <= 12; i++ {
		scrape(i*5000, 8)
	}
	first := read(60_000)
	if len(first) != 8 || cap(first) != 10 {
		t.Fatalf("slots len %d cap %d, want 8 and 10", len(first), cap(first))
	}
	held := s.cursorBytes.Load()
	scrape(65_000, 10) // two series more: within the room
	grown := read(65_000)
	if len(grown) != 10 || &grown[0] != &first[0] {
		t.Fatalf("slots len %d, same array %v: want 10, lengthened in place", len(grown), &grown[0] == &first[0])
	}
	if now := s.cursorBytes.Load(); now != held+2*cursorSize {
		t.Fatalf("cursors hold %d bytes, want %d: two cursors more, no slots", now, held+2*cursorSize)
	}
	scrape(70_000, 11) // past it: a new array, with a quarter more room
	if past := read(70_000); len(past) != 11 || cap(past) != 13 || &past[0] == &first[0] {
		t.Fatalf("slots len %d cap %d: want 11 and 13, a new array", len(past), cap(past))
	}
}

package history

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// ratesOf is each series' rates at steps, keyed like selectRef's answer, for comparing.
func ratesOf(pts map[string][]derive.Point, steps []int64, window int64) map[string]string {
	out := map[string]string{}
	for k, p := range pts {
		if len(p) == 0 {
			continue
		}
		var b []string
		derive.RateSteps(p, steps, window, func(i int, v float64) { b = append(b, fmt.Sprintf("%d:%v", i, v)) })
		out[k] = fmt.Sprint(len(p), b)
	}
	return out
}

// ratesGot is SelectRates' answer keyed and written as ratesOf writes the reference's.
func ratesGot(got []Series) map[string]string {
	out := map[string]string{}
	for _, r := range got {
		var b []string
		r.Rates.Each(func(i int, v float64) { b = append(b, fmt.Sprintf("%d:%v", i, v)) })
		out[seriesKey(r.Name, r.Labels)] = fmt.Sprint(r.Rates.Points(), b)
	}
	return out
}

// TestSelectRatesMemoizesRates reads rates as the queries of a refresh do (the same histogram at the same steps,
// with and without a filter, two windows, two grids, after a points read or not) between scrapes that cross block boundaries, and checks every
// answer against the rates of the reference model's points: the second read of a selection is taken from the memo,
// a write makes the memo forget, and each series reports the points its rates came from.
func TestSelectRatesMemoizesRates(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	sm := newSim(sc, 5)
	v := sm.initial()
	rng := newRand(7)
	s := New(Options{MaxBytes: -1})
	m := newRefModel()
	engine1 := func(ls exposition.Labels) bool { return ls.Get("engine") == "1" || ls.Get("le") == "+Inf" }
	const name = "vllm:e2e_request_latency_seconds_bucket"
	checked := 0
	for i := int64(1); i <= 2*blockRows+30; i++ {
		sm.step(v, rng)
		sm.apply(v)
		s.Append("ep", i*5000, sc)
		m.append(i*5000, sc)
		if i%7 != 0 {
			continue
		}
		if got := s.memoBytes.Load() + s.ratesBytes.Load(); got != 0 {
			t.Fatalf("after a write the memo holds %d bytes", got)
		}
		to := i * 5000
		for _, grid := range [][2]int64{{20, 60_000}, {20, 300_000}, {40, 60_000}, {40, 300_000}} {
			n, window := grid[0], grid[1]
			steps := derive.Steps(to-n*15_000, to, 15_000)
			from := steps[0] - window
			if n == 40 && window == 300_000 {
				// A points read of every other series first: the unfiltered rates read then takes their points from
				// the memo and decodes only the others.
				odd := false
				s.Select("ep", name, from, to, func(exposition.Labels) bool { odd = !odd; return odd })
			}
			var afterAll int64 // what the memo held once every series' rates were read
			for round, match := range []func(exposition.Labels) bool{engine1, nil, engine1, nil} {
				got, ok := s.SelectRates("ep", name, from, to, steps, window, match, 0)
				if !ok {
					t.Fatal("SelectRates without a bound did not fit")
				}
				have := ratesGot(got)
				want := ratesOf(m.selectRef(name, from, to, match), steps, window)
				if fmt.Sprint(have) != fmt.Sprint(want) {
					t.Fatalf("scrape %d, %d steps, window %d, read %d: rates differ from the reference's\n got %v\nwant %v", i, n, window, round, have, want)
				}
				checked += len(got)
				switch held := s.ratesBytes.Load(); {
				case round == 1:
					afterAll = held
				case round > 1 && held != afterAll:
					t.Fatalf("scrape %d: read %d grew the memo from %d to %d bytes: it decoded what the memo held", i, round, afterAll, held)
				}
			}
		}
		ep := s.rlock("ep")
		held := len(ep.memo.rates)
		ep.mu.RUnlock()
		if held != 4 {
			t.Fatalf("scrape %d: the memo holds the rates of %d selections, want 4 (one per grid and window: a filtered read and an unfiltered one share their series' rates)", i, held)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d series' rates checked", checked)
	}
	// Over the bound, the rates are answered, not kept.
	small := New(Options{MaxBytes: -1, MemoBytes: 64})
	small.Append("ep", 5000, sc)
	small.Append("ep", 10000, sc)
	if got, _ := small.SelectRates("ep", name, 0, 10000, []int64{10000}, 10000, nil, 0); len(got) == 0 || small.ratesBytes.Load() > 64 {
		t.Fatalf("over the memo bound: %d series answered, %d bytes of rates held (bound 64)", len(got), small.ratesBytes.Load())
	}
	// A selection over maxPoints is refused before anything is decoded.
	if got, ok := s.SelectRates("ep", name, 0, 1<<62, []int64{1 << 40}, 300_000, nil, 10); ok || got != nil {
		t.Fatal("a selection over maxPoints answered")
	}
}

// TestSelectRatesSharedHandsOnTheSelection reads rates and instant values as a refresh's queries do, each with a
// named filter: a read with a name read before between two scrapes gets that answer without its match run, counting
// the series matched as the first read counted them; another name, a write, or a cold range's read runs match
// again; a read whose bound the shared selection passes is refused; and every answer equals the unshared read's.
func TestSelectRatesSharedHandsOnTheSelection(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	s := New(Options{MaxBytes: -1})
	const name = "vllm:e2e_request_latency_seconds_bucket"
	inf := func(ls exposition.Labels) bool { return ls.Get("le") == "+Inf" }
	for i := int64(1); i <= 30; i++ {
		s.Append("ep", i*5000, sc)
	}
	to := int64(30 * 5000)
	steps := derive.Steps(to-4*15_000, to, 15_000)
	from := steps[0] - 60_000
	read := func(filter string, match func(exposition.Labels) bool, maxPoints int) (got []Series, matched, calls int, fits bool) {
		counting := func(ls exposition.Labels) bool {
			calls++
			return match == nil || match(ls)
		}
		got, matched, fits = s.SelectRatesShared("ep", name, from, to, steps, 60_000, filter, counting, maxPoints)
		return got, matched, calls, fits
	}
	want, _ := s.SelectRates("ep", name, from, to, steps, 60_000, inf, 0)
	first, matched, calls, _ := read("le=+Inf", inf, 0)
	if calls == 0 || matched != len(want) || fmt.Sprint(ratesGot(first)) != fmt.Sprint(ratesGot(want)) {
		t.Fatalf("first read: match ran %d times, %d matched, %d series; want %d as SelectRates", calls, matched, len(first), len(want))
	}
	again, matched2, calls, _ := read("le=+Inf", inf, 0)
	if calls != 0 || matched2 != matched || &again[0] != &first[0] {
		t.Errorf("a second read of the filter ran match %d times, matched %d (want 0 and %d), shared=%v", calls, matched2, matched, &again[0] == &first[0])
	}
	all, matchedAll, calls, _ := read("all", nil, 0)
	if calls == 0 || matchedAll <= matched || len(all) <= len(first) {
		t.Errorf("another filter's read ran match %d times and matched %d series: it took the first filter's selection", calls, matchedAll)
	}
	if got, _, _, fits := read("le=+Inf", inf, 1); fits || got != nil {
		t.Error("a shared selection was handed to a read whose point bound it passes")
	}
	s.Append("ep", 31*5000, sc)
	if _, _, calls, _ := read("le=+Inf", inf, 0); calls == 0 {
		t.Error("after a write the shared selection was handed on")
	}
	if _, matched, calls, _ := read("", inf, 0); calls == 0 || matched != len(want) {
		t.Errorf("an unnamed filter: match ran %d times, %d matched", calls, matched)
	}
	// A cold range's reads are not shared: the memo holds their rates and points already.
	long := derive.Steps(to-(CursorSteps+5)*5000, to, 5000)
	for range 2 {
		calls = 0
		s.SelectRatesShared("ep", name, long[0]-60_000, to, long, 60_000, "le=+Inf", func(ls exposition.Labels) bool { calls++; return inf(ls) }, 0)
		if calls == 0 {
			t.Fatalf("a read of %d steps was shared", len(long))
		}
		calls = 0
		s.SelectLatestShared("ep", name, 0, 0, to, "le=+Inf", func(ls exposition.Labels) bool { calls++; return inf(ls) }, 0)
		if calls == 0 {
			t.Fatal("an instant read of every point was shared")
		}
	}
	// Instant reads share alike, apart from rate reads of the same range.
	calls = 0
	counting := func(ls exposition.Labels) bool { calls++; return inf(ls) }
	wantLatest, _ := s.SelectLatest("ep", name, from, to-5000, to, inf, 0)
	for round := range 2 {
		calls = 0
		got, matched, fits := s.SelectLatestShared("ep", name, from, to-5000, to, "le=+Inf", counting, 0)
		if !fits || matched != len(wantLatest) || fmt.Sprint(got) != fmt.Sprint(wantLatest) || (round == 0) != (calls > 0) {
			t.Errorf("instant read %d: match ran %d times, %d matched, %d series; want %d as SelectLatest, match run on the first read only",
				round, calls, matched, len(got), len(wantLatest))
		}
	}
}

// TestSelectRatesShareIdenticalSeries rates a histogram whose buckets above its largest observation hold its count
// and those below its smallest hold zero, over two sealed blocks and the head, cold and then at each new step (the
// rate cursors): each run of buckets with equal streams in the blocks read is rated once and shares those rates,
// counted once in the memo's bytes, while a bucket that differs from its neighbour (in the head, or by a scrape it
// missed) gets its own; every answer equals the rates of the series' own points.
func TestSelectRatesShareIdenticalSeries(t *testing.T) {
	s := New(Options{MaxBytes: -1})
	const name, window = "x_bucket", 300_000
	const diverge = 2*blockRows + 20 // from here observations above 4 s reach le="5" but not le="4"
	scrape := func(i int64) {
		count := 3 * i
		if i > diverge {
			count += i % 4
		}
		var b strings.Builder
		b.WriteString("# TYPE x histogram\n")
		fmt.Fprintf(&b, "x_bucket{le=\"0.1\"} 0\nx_bucket{le=\"0.5\"} 0\nx_bucket{le=\"1\"} %d\n", 3*i-i%3)
		fmt.Fprintf(&b, "x_bucket{le=\"2\"} %d\n", 3*i)
		if i != blockRows/2 { // le="3" misses one scrape of the first block
			fmt.Fprintf(&b, "x_bucket{le=\"3\"} %d\n", 3*i)
		}
		fmt.Fprintf(&b, "x_bucket{le=\"4\"} %d\nx_bucket{le=\"5\"} %d\nx_bucket{le=\"+Inf\"} %d\n", 3*i, count, count)
		fmt.Fprintf(&b, "x_sum %d\nx_count %d\n", count, count)
		s.Append("ep", i*5000, parseText(t, b.String()))
	}
	// read reads name's rates at steps, checks them against the rates of the points' own, and checks which buckets
	// share the rates of the one before them against want (nil: those whose points in the range equal its points).
	read := func(steps []int64, want []bool) {
		t.Helper()
		from, to := steps[0]-window, steps[len(steps)-1]
		got, ok := s.SelectRates("ep", name, from, to, steps, window, nil, 0)
		if !ok || len(got) != 8 {
			t.Fatalf("SelectRates at %d: %d series, fits %v", to, len(got), ok)
		}
		pts := map[string][]derive.Point{}
		for _, sr := range s.Select("ep", name, from, to, nil) {
			pts[seriesKey(sr.Name, sr.Labels)] = sr.Points
		}
		if have, want := ratesGot(got), ratesOf(pts, steps, window); fmt.Sprint(have) != fmt.Sprint(want) {
			t.Fatalf("rates at %d differ from the points' own:\n got %v\nwant %v", to, have, want)
		}
		if want == nil {
			want = make([]bool, len(got))
			for i := 1; i < len(got); i++ {
				want[i] = fmt.Sprint(pts[seriesKey(name, got[i].Labels)]) == fmt.Sprint(pts[seriesKey(name, got[i-1].Labels)])
			}
		}
		var distinct int64
		for i := range got {
			shared := i > 0 && got[i].Rates == got[i-1].Rates
			if shared != want[i] {
				t.Errorf("at %d, le=%s: shares the rates before it %v, want %v", to, got[i].Labels.Get("le"), shared, want[i])
			}
			if !shared {
				distinct += got[i].Rates.Bytes()
			}
		}
		if held, want := s.ratesBytes.Load(), distinct+8*memoSeriesSize; held != want {
			t.Errorf("at %d the memo counts %d bytes for the rates, want %d (shared rates once)", to, held, want)
		}
	}
	i := int64(1)
	for ; i <= diverge-10; i++ {
		scrape(i)
	}
	// Cold, an hour: le 0.5 shares the rates of 0.1, and 5 and +Inf those of 4; 3 differs from 2 by its missed
	// scrape, and 4 from 3 by it.
	to := (i - 1) * 5000
	read(derive.Steps(to-3_600_000+window, to, 15_000), []bool{false, true, false, false, false, false, true, true})
	// Then each new step of the grid, as a refresh reads it, through the cursors: the first block is no longer read,
	// so 3 shares the rates of 2 and 4 those of 3, and once le="5" diverges it has its own.
	for ; i <= diverge+40; i++ {
		scrape(i)
		if to := i * 5000; to%15_000 == 0 {
			read([]int64{to}, nil)
		}
	}
}

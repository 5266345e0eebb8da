package history

import (
	"math"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// TestMemoSharesDecodedPoints selects like the queries of a refresh do (the same names and ranges, with and without
// a filter), between scrapes, and checks every answer against the reference model and a store without a memo: the
// memo changes what is decoded, never what is answered, and a write makes it forget.
func TestMemoSharesDecodedPoints(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	sm := newSim(sc, 5)
	v := sm.initial()
	rng := newRand(6)
	memoized, plain := New(Options{MaxBytes: -1}), New(Options{MaxBytes: -1, MemoBytes: -1})
	m := newRefModel()
	engine1 := func(ls exposition.Labels) bool { return ls.Get("engine") == "1" || ls.Get("le") == "+Inf" }
	const name = "vllm:e2e_request_latency_seconds_bucket"
	for i := int64(1); i <= 2*blockRows+30; i++ {
		sm.step(v, rng)
		sm.apply(v)
		for _, s := range []*Store{memoized, plain} {
			s.Append("ep", i*5000, sc)
		}
		m.append(i*5000, sc)
		if i%7 != 0 {
			continue
		}
		if got := memoized.memoBytes.Load(); got != 0 {
			t.Fatalf("after a write the memo holds %d bytes", got)
		}
		lo, hi := (i-60)*5000, i*5000
		for _, match := range []func(exposition.Labels) bool{engine1, nil, engine1, nil} {
			got := memoized.Select("ep", name, lo, hi, match)
			if err := diffSeries(got, m.selectRef(name, lo, hi, match)); err != nil {
				t.Fatalf("scrape %d: memoized Select: %v", i, err)
			}
			if err := diffSeries(plain.Select("ep", name, lo, hi, match), m.selectRef(name, lo, hi, match)); err != nil {
				t.Fatalf("scrape %d: plain Select: %v", i, err)
			}
		}
		if memoized.memoBytes.Load() == 0 {
			t.Fatalf("scrape %d: nothing memoized", i)
		}
		if plain.memoBytes.Load() != 0 {
			t.Fatal("a store with MemoBytes < 0 memoized")
		}
	}
}

// TestMemoBudget holds the memo to its bound: a selection over it is answered, not kept.
func TestMemoBudget(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	s := New(Options{MaxBytes: -1, MemoBytes: 4096})
	m := newRefModel()
	for i := int64(1); i <= 50; i++ {
		s.Append("ep", i*5000, sc)
		m.append(i*5000, sc)
	}
	for _, name := range m.names() {
		for range 2 {
			if err := diffSeries(s.Select("ep", name, 0, math.MaxInt64, nil), m.selectRef(name, 0, math.MaxInt64, nil)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if got := s.memoBytes.Load(); got > 4096 {
			t.Fatalf("memo holds %d bytes, bound 4096", got)
		}
	}
	if s.memoBytes.Load() == 0 {
		t.Fatal("nothing memoized within the bound")
	}
}

// TestSelectLatestKeepsNewestBeforeCarry selects as a refresh's instant reads and rate reads of the same ranges do,
// over scrapes that sometimes fail (staleness markers) and across block boundaries, and checks SelectLatest against
// the reference thinned by hand: of the points before carry only the newest, every point from carry on. A plain
// Select of the same range between them must still answer every point, whatever the memo holds.
func TestSelectLatestKeepsNewestBeforeCarry(t *testing.T) {
	sc := parseFixture(t, dynamoFixture)
	sm := newSim(sc, 7)
	v := sm.initial()
	rng := newRand(8)
	s := New(Options{MaxBytes: -1})
	m := newRefModel()
	const name = "vllm:num_requests_running"
	engine1 := func(ls exposition.Labels) bool { return ls.Get("engine") == "1" }
	downs := 0
	for i := int64(1); i <= 2*blockRows+30; i++ {
		sm.step(v, rng)
		sm.apply(v)
		if rng.IntN(10) == 0 {
			s.MarkDown("ep", i*5000)
			m.markDown(i * 5000)
			downs++
		} else {
			s.Append("ep", i*5000, sc)
			m.append(i*5000, sc)
		}
		if i%5 != 0 {
			continue
		}
		carry := (i - rng.Int64N(4)) * 5000
		lo, hi := carry-60*5000, i*5000
		for _, match := range []func(exposition.Labels) bool{nil, engine1} {
			full := m.selectRef(name, lo, hi, match)
			if err := diffSeries(s.Select("ep", name, lo, hi, match), full); err != nil {
				t.Fatalf("scrape %d: Select before: %v", i, err)
			}
			latest, _ := s.SelectLatest("ep", name, lo, carry, hi, match, 0)
			if err := diffSeries(latest, latestRef(full, carry)); err != nil {
				t.Fatalf("scrape %d: SelectLatest from %d: %v", i, carry, err)
			}
			if err := diffSeries(s.Select("ep", name, lo, hi, match), full); err != nil {
				t.Fatalf("scrape %d: Select after: %v", i, err)
			}
		}
	}
	if downs == 0 {
		t.Fatal("no scrape failed")
	}
}

// latestRef is a reference selection as SelectLatest answers it.
func latestRef(full map[string][]derive.Point, carry int64) map[string][]derive.Point {
	out := make(map[string][]derive.Point, len(full))
	for k, pts := range full {
		var kept []derive.Point
		for i, p := range pts {
			if p.T >= carry || i+1 == len(pts) || pts[i+1].T >= carry {
				kept = append(kept, p)
			}
		}
		out[k] = kept
	}
	return out
}

package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// churnScrape is a fixture scrape plus short-lived series: a "req" series
// that lives for 30 scrapes, so old ones must be forgotten.
func churnScrape(tb testing.TB, base string, i int) *exposition.Scrape {
	var b strings.Builder
	b.WriteString(base)
	for k := i / 30; k <= i/30+1; k++ {
		fmt.Fprintf(&b, "req{id=\"%d\"} %d\n", k, i)
	}
	return parseText(tb, b.String())
}

func TestRetentionForgetsSeries(t *testing.T) {
	const ret = 15 * time.Minute
	s := New(Options{Retention: ret, MaxBytes: -1})
	m := newRefModel()
	rng := rand.New(rand.NewPCG(5, 5))
	var peak int64
	for i := 0; i < 2000; i++ {
		ts := int64(i+1) * 5000
		sc := churnScrape(t, "up 1\n", i)
		s.Append("ep", ts, sc)
		m.append(ts, sc)
		if i == 600 {
			peak = s.Bytes()
		}
	}
	checkAgainst(t, s, "ep", m, ret.Milliseconds(), rng)
	ep := s.get("ep")
	// Physically held: the retention plus at most one block, plus the head.
	if max := int(ret/(5*time.Second))/blockRows + 2; len(ep.blocks) > max {
		t.Errorf("%d sealed blocks held, want <= %d", len(ep.blocks), max)
	}
	// Series whose points all expired are forgotten.
	if n := len(s.LabelValues("ep", "id")); n > 2+int(ret/(5*time.Second))/30+blockRows/30+2 {
		t.Errorf("%d req series held", n)
	}
	if got := s.Bytes(); got > peak*5/4 {
		t.Errorf("Bytes grew from %d to %d although retention caps the span", peak, got)
	}
}

func TestHashCollisions(t *testing.T) {
	defer func(h func(string, exposition.Labels) uint64) { hashSeries = h }(hashSeries)
	hashSeries = func(name string, ls exposition.Labels) uint64 { return uint64(len(name)+len(ls)) % 3 }
	s := New(Options{Retention: 10 * time.Minute, MaxBytes: -1})
	m := newRefModel()
	rng := rand.New(rand.NewPCG(6, 6))
	base := "a 1\nb{x=\"1\"} 2\nb{x=\"2\"} 3\nb{y=\"1\"} 4\ncc 5\n"
	for i := 0; i < 800; i++ {
		ts := int64(i+1) * 5000
		sc := churnScrape(t, base, i)
		if i%7 == 3 { // shuffle so lookups miss the fast path
			fam := sc.Families
			rng.Shuffle(len(fam), func(a, b int) { fam[a], fam[b] = fam[b], fam[a] })
		}
		s.Append("ep", ts, sc)
		m.append(ts, sc)
	}
	checkAgainst(t, s, "ep", m, s.retention, rng)
}

// fill appends n scrapes of the Dynamo fixture to each endpoint, in turn,
// checking the cap after every append; it returns the models.
func fill(t *testing.T, s *Store, eps []string, n int, sizes []int) map[string]*refModel {
	base := parseFixture(t, dynamoFixture)
	models := map[string]*refModel{}
	sims := map[string]*sim{}
	states := map[string][]float64{}
	for i, ep := range eps {
		models[ep] = newRefModel()
		// Endpoints differ in size so equal spans mean unequal bytes.
		sc := filterScrape(base, func(*exposition.Sample) bool { return true })
		sc.Families = sc.Families[:sizes[i]]
		sims[ep] = newSim(sc, uint64(i))
		states[ep] = sims[ep].initial()
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < n; i++ {
		ts := int64(i+1) * 5000
		for _, ep := range eps {
			sm := sims[ep]
			sm.step(states[ep], rng)
			sm.apply(states[ep])
			sc := sm.scrape
			s.Append(ep, ts, sc)
			models[ep].append(ts, sc)
			if s.maxBytes > 0 && s.Bytes() > s.maxBytes && i > blockRows*2 {
				t.Fatalf("scrape %d of %s: Bytes %d over cap %d", i, ep, s.Bytes(), s.maxBytes)
			}
		}
	}
	return models
}

func TestMemoryCap(t *testing.T) {
	eps := []string{"small", "medium", "large", "full"}
	sizes := []int{12, 25, 40, len(parseFixture(t, dynamoFixture).Families)}
	const n = 720
	uncapped := New(Options{MaxBytes: -1})
	fill(t, uncapped, eps, n, sizes)
	limit := uncapped.Bytes() / 2

	s := New(Options{MaxBytes: limit})
	models := fill(t, s, eps, n, sizes)
	if s.Bytes() > limit || s.Bytes() != s.recomputeBytes() {
		t.Fatalf("Bytes = %d (recomputed %d), cap %d", s.Bytes(), s.recomputeBytes(), limit)
	}
	lastT := int64(n) * 5000
	var oldests []int64
	for _, ep := range eps {
		m := models[ep]
		oldest, newest, ok := s.Bounds(ep)
		if !ok || newest != lastT || oldest <= m.rows[0] {
			t.Fatalf("%s: Bounds = %d, %d, %v; want trimmed start, end %d", ep, oldest, newest, ok, lastT)
		}
		oldests = append(oldests, oldest)
		// Everything from oldest on is intact.
		for _, name := range m.names() {
			got := s.Select(ep, name, math.MinInt64, math.MaxInt64, nil)
			if err := diffSeries(got, m.selectRef(name, oldest, math.MaxInt64, nil)); err != nil {
				t.Fatalf("%s: Select(%s): %v", ep, name, err)
			}
		}
	}
	// Fair: spans end up within about one block of each other.
	if spread := slices.Max(oldests) - slices.Min(oldests); spread > 2*blockRows*5000 {
		t.Errorf("history starts %v differ by %d ms", oldests, spread)
	}
}

func TestMemoryCapKeepsNewestScrape(t *testing.T) {
	s := New(Options{MaxBytes: 1}) // far below what one scrape needs
	sc := parseFixture(t, dynamoFixture)
	want := map[string]float64{}
	for _, p := range samples(sc) {
		if _, dup := want[seriesKey(p.Name, p.Labels)]; !dup {
			want[seriesKey(p.Name, p.Labels)] = p.Value
		}
	}
	for i := int64(1); i <= 300; i++ {
		ts := i * 5000
		s.Append("a", ts, sc)
		s.Append("b", ts, sc)
		for _, ep := range []string{"a", "b"} {
			oldest, newest, ok := s.Bounds(ep)
			if !ok || newest != ts || ts-oldest > 5000 {
				t.Fatalf("%s after %d: Bounds = %d, %d, %v", ep, ts, oldest, newest, ok)
			}
			n := 0
			for _, name := range s.Names(ep) {
				for _, sr := range s.Select(ep, name, ts, ts, nil) {
					if len(sr.Points) != 1 || sr.Points[0].V != want[seriesKey(sr.Name, sr.Labels)] {
						t.Fatalf("%s at %d: %s = %v", ep, ts, seriesKey(sr.Name, sr.Labels), sr.Points)
					}
					n++
				}
			}
			if n != len(want) {
				t.Fatalf("%s at %d: %d series at the newest scrape, want %d", ep, ts, n, len(want))
			}
		}
	}
	if s.Bytes() != s.recomputeBytes() {
		t.Fatalf("Bytes = %d, recomputed %d", s.Bytes(), s.recomputeBytes())
	}
}

// TestCompression guards the memory budget: a simulated single-engine
// payload must stay far below the 16 bytes of a plain point.
func TestCompression(t *testing.T) {
	sc := singleEngine(t)
	sm := newSim(sc, 4)
	s := New(Options{MaxBytes: -1})
	rng := newRand(4)
	st := [2][]float64{sm.initial(), sm.initial()}
	for i := int64(1); i <= scrapesPerHour; i++ {
		for e, ep := range []string{"a", "b"} {
			sm.step(st[e], rng)
			sm.apply(st[e])
			s.Append(ep, i*5000, sc)
		}
	}
	perPoint := float64(s.Bytes()) / float64(heldPoints(s))
	t.Logf("%.3f bytes/point, %d bytes for 2 endpoints x 1 h", perPoint, s.Bytes())
	if perPoint > 1.5 {
		t.Errorf("%.3f bytes/point, want <= 1.5", perPoint)
	}
}

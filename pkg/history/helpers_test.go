package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

const fixtureDir = "../../testdata/fixtures"

// dynamoFixture is the single-engine Dynamo V1 worker capture.
const dynamoFixture = "dynamo_vllm_worker_8081_v1_single_engine.txt"

// parseFixture parses one fixture file.
func parseFixture(tb testing.TB, name string) *exposition.Scrape {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := exposition.Parse(data, exposition.ParseOptions{})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return sc
}

// fixtureNames lists the fixture files.
func fixtureNames(tb testing.TB) []string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(fixtureDir, "*.txt"))
	if err != nil || len(m) == 0 {
		tb.Fatalf("no fixtures: %v", err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// parseText parses an inline exposition body.
func parseText(tb testing.TB, text string) *exposition.Scrape {
	tb.Helper()
	sc, err := exposition.Parse([]byte(text), exposition.ParseOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// filterScrape returns a scrape with the samples keep accepts; samples are
// copied, labels shared.
func filterScrape(sc *exposition.Scrape, keep func(*exposition.Sample) bool) *exposition.Scrape {
	out := &exposition.Scrape{Format: sc.Format}
	for _, f := range sc.Families {
		g := f
		g.Samples = nil
		for i := range f.Samples {
			if keep(&f.Samples[i]) {
				g.Samples = append(g.Samples, f.Samples[i])
			}
		}
		out.Families = append(out.Families, g)
	}
	return out
}

// singleEngine is the synthetic 8-engine payload cut down to engine 0 plus
// the engine-less series: a realistic ~550-series single-engine V1 payload.
func singleEngine(tb testing.TB) *exposition.Scrape {
	sc := parseFixture(tb, "synthetic_v1_8engines_full.txt")
	return filterScrape(sc, func(s *exposition.Sample) bool {
		e, ok := s.Labels.Lookup("engine")
		return !ok || e == "0"
	})
}

// samples returns pointers to all samples of sc in order.
func samples(sc *exposition.Scrape) []*exposition.Sample {
	var out []*exposition.Sample
	for fi := range sc.Families {
		for si := range sc.Families[fi].Samples {
			out = append(out, &sc.Families[fi].Samples[si])
		}
	}
	return out
}

// seriesKey identifies a series in tests.
func seriesKey(name string, ls exposition.Labels) string { return name + ls.Key() }

// ---- realistic value evolution ----

// sampleKind says how a simulated sample evolves.
type sampleKind uint8

const (
	kindConst sampleKind = iota
	kindCounter
	kindGaugeInt
	kindGaugeFrac
	kindHist // bucket, _count or _sum: driven by its histogram group
)

// histGroup is one histogram series (labels without le).
type histGroup struct {
	buckets []int // sample indexes sorted by le
	bounds  []float64
	count   int // sample index or -1
	sum     int
}

// sim evolves the values of a scrape's samples like a loaded vLLM engine:
// counters increase, histograms observe a few requests (often none) per
// scrape so most buckets stay unchanged, gauges jitter.
type sim struct {
	scrape *exposition.Scrape
	smps   []*exposition.Sample
	kinds  []sampleKind
	rates  []float64
	groups []histGroup
}

// newSim classifies the samples of sc.
func newSim(sc *exposition.Scrape, seed uint64) *sim {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := &sim{scrape: sc, smps: samples(sc)}
	s.kinds = make([]sampleKind, len(s.smps))
	s.rates = make([]float64, len(s.smps))
	idx := make(map[*exposition.Sample]int, len(s.smps))
	for i, p := range s.smps {
		idx[p] = i
	}
	for fi := range sc.Families {
		f := &sc.Families[fi]
		switch f.Type {
		case exposition.TypeHistogram:
			groups := map[string]*histGroup{}
			var order []string
			for si := range f.Samples {
				p := &f.Samples[si]
				i := idx[p]
				k := p.Labels.KeyWithout("le")
				g := groups[k]
				if g == nil {
					g = &histGroup{count: -1, sum: -1}
					groups[k] = g
					order = append(order, k)
				}
				switch {
				case strings.HasSuffix(p.Name, "_bucket"):
					le, _ := strconv.ParseFloat(p.Labels.Get("le"), 64)
					g.buckets = append(g.buckets, i)
					g.bounds = append(g.bounds, le)
					s.kinds[i] = kindHist
				case strings.HasSuffix(p.Name, "_count"):
					g.count = i
					s.kinds[i] = kindHist
				case strings.HasSuffix(p.Name, "_sum"):
					g.sum = i
					s.kinds[i] = kindHist
				}
			}
			for _, k := range order {
				g := groups[k]
				sort.Sort(byBound{g})
				s.groups = append(s.groups, *g)
			}
		case exposition.TypeCounter:
			for si := range f.Samples {
				p := &f.Samples[si]
				if !strings.HasSuffix(p.Name, "_created") {
					i := idx[p]
					s.kinds[i] = kindCounter
					if rng.IntN(3) > 0 { // a third of counters never move
						s.rates[i] = float64(rng.IntN(50))
					}
				}
			}
		case exposition.TypeGauge:
			for si := range f.Samples {
				p := &f.Samples[si]
				i := idx[p]
				switch {
				case strings.HasSuffix(p.Name, "_created"): // prometheus_client's text format types these as gauges
				case strings.Contains(p.Name, "perc") || strings.Contains(p.Name, "usage") || strings.Contains(p.Name, "rate"):
					s.kinds[i] = kindGaugeFrac
				case strings.Contains(p.Name, "info") || strings.Contains(p.Name, "state") || strings.Contains(p.Name, "total_blocks"):
				default:
					s.kinds[i] = kindGaugeInt
				}
			}
		}
	}
	return s
}

type byBound struct{ g *histGroup }

func (b byBound) Len() int           { return len(b.g.buckets) }
func (b byBound) Less(i, j int) bool { return b.g.bounds[i] < b.g.bounds[j] }
func (b byBound) Swap(i, j int) {
	b.g.buckets[i], b.g.buckets[j] = b.g.buckets[j], b.g.buckets[i]
	b.g.bounds[i], b.g.bounds[j] = b.g.bounds[j], b.g.bounds[i]
}

// initial returns the fixture's values as a starting state.
func (s *sim) initial() []float64 {
	v := make([]float64, len(s.smps))
	for i, p := range s.smps {
		v[i] = p.Value
	}
	return v
}

// step advances state by one scrape interval.
func (s *sim) step(v []float64, rng *rand.Rand) {
	for i, k := range s.kinds {
		switch k {
		case kindCounter:
			if s.rates[i] > 0 {
				v[i] += float64(rng.IntN(int(2*s.rates[i]) + 1))
			}
		case kindGaugeInt:
			if rng.IntN(4) == 0 {
				v[i] = max(0, v[i]+float64(rng.IntN(5)-2))
			}
		case kindGaugeFrac:
			v[i] = rng.Float64()
		}
	}
	for gi := range s.groups {
		g := &s.groups[gi]
		if len(g.buckets) == 0 || rng.IntN(2) == 0 { // idle half the time
			continue
		}
		n := 1 + rng.IntN(4)
		for range n {
			// Observations cluster around a bucket a third of the way up.
			j := min(len(g.buckets)-1, max(0, len(g.buckets)/3+int(rng.NormFloat64()*2)))
			for _, b := range g.buckets[j:] {
				v[b]++
			}
			if g.sum >= 0 {
				ub := g.bounds[j]
				if math.IsInf(ub, 1) {
					ub = 2 * g.bounds[max(0, j-1)]
				}
				v[g.sum] += ub * (0.5 + rng.Float64()/2)
			}
		}
		if g.count >= 0 {
			v[g.count] += float64(n)
		}
	}
}

// apply writes state into the scrape's samples.
func (s *sim) apply(v []float64) {
	for i, p := range s.smps {
		p.Value = v[i]
	}
}

// ---- reference model ----

// refSeries is one series of the reference model.
type refSeries struct {
	name   string
	labels exposition.Labels
	pts    []derive.Point
	lastT  int64
}

// refModel is a naive implementation of the Store's semantics for one
// endpoint: every point in a plain slice.
type refModel struct {
	series  map[string]*refSeries
	byName  map[string][]*refSeries
	live    map[string]bool
	rows    []int64
	lastT   int64
	hasRows bool
}

func newRefModel() *refModel {
	return &refModel{series: map[string]*refSeries{}, byName: map[string][]*refSeries{}, live: map[string]bool{}}
}

func (m *refModel) append(t int64, sc *exposition.Scrape) {
	if m.hasRows && t <= m.lastT {
		return
	}
	m.rows = append(m.rows, t)
	m.lastT, m.hasRows = t, true
	seen := map[string]bool{}
	for _, p := range samples(sc) {
		k := seriesKey(p.Name, p.Labels)
		if seen[k] {
			continue
		}
		seen[k] = true
		s := m.series[k]
		if s == nil {
			s = &refSeries{name: p.Name, labels: slices.Clone(p.Labels), lastT: math.MinInt64}
			m.series[k] = s
			m.byName[p.Name] = append(m.byName[p.Name], s)
		}
		pt := t
		if p.HasTimestamp {
			pt = p.TimestampMs
		}
		if pt <= s.lastT {
			continue
		}
		s.pts = append(s.pts, derive.Point{T: pt, V: p.Value})
		s.lastT = pt
	}
	for k := range m.live {
		if !seen[k] {
			m.stale(k, t)
		}
	}
	m.live = seen
}

func (m *refModel) markDown(t int64) {
	if !m.hasRows || t <= m.lastT || len(m.live) == 0 {
		return
	}
	m.rows = append(m.rows, t)
	m.lastT = t
	for k := range m.live {
		m.stale(k, t)
	}
	m.live = map[string]bool{}
}

func (m *refModel) stale(k string, t int64) {
	s := m.series[k]
	if t > s.lastT {
		s.pts = append(s.pts, derive.Point{T: t, V: derive.StaleNaN})
		s.lastT = t
	}
}

// selectRef returns the model's points of name in [from, to], keyed.
func (m *refModel) selectRef(name string, from, to int64, match func(exposition.Labels) bool) map[string][]derive.Point {
	out := map[string][]derive.Point{}
	for _, s := range m.byName[name] {
		if match != nil && !match(s.labels) {
			continue
		}
		k := seriesKey(s.name, s.labels)
		var pts []derive.Point
		for _, p := range s.pts {
			if p.T >= from && p.T <= to {
				pts = append(pts, p)
			}
		}
		if len(pts) > 0 {
			out[k] = pts
		}
	}
	return out
}

// names returns the model's distinct names.
func (m *refModel) names() []string {
	var out []string
	for n := range m.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// diffSeries compares Select output with expected points bit for bit.
func diffSeries(got []Series, want map[string][]derive.Point) error {
	seen := map[string]bool{}
	for _, s := range got {
		k := seriesKey(s.Name, s.Labels)
		if seen[k] {
			return fmt.Errorf("series %s returned twice", k)
		}
		seen[k] = true
		w, ok := want[k]
		if !ok {
			return fmt.Errorf("unexpected series %s (%d points)", k, len(s.Points))
		}
		if len(s.Points) != len(w) {
			return fmt.Errorf("%s: %d points, want %d", k, len(s.Points), len(w))
		}
		for i := range w {
			g := s.Points[i]
			if g.T != w[i].T || math.Float64bits(g.V) != math.Float64bits(w[i].V) {
				return fmt.Errorf("%s point %d: got (%d, %#x), want (%d, %#x)", k, i,
					g.T, math.Float64bits(g.V), w[i].T, math.Float64bits(w[i].V))
			}
		}
	}
	for k := range want {
		if !seen[k] {
			return fmt.Errorf("missing series %s", k)
		}
	}
	return nil
}

// recomputeBytes recalculates Store.Bytes from scratch, to check the
// incremental accounting.
func (s *Store) recomputeBytes() int64 {
	var n int64
	for _, ep := range s.snapshot() {
		ep.mu.RLock()
		for _, b := range ep.blocks {
			n += b.bytes
		}
		n += ep.head.bytes() + seriesCost*int64(len(ep.series)) + 4*int64(cap(ep.prev)+cap(ep.cur)+cap(ep.free))
		ep.mu.RUnlock()
	}
	s.syms.mu.Lock()
	for _, set := range s.syms.sets {
		for _, x := range set {
			n += identSize + labelSize*int64(len(x.labels))
		}
	}
	for str := range s.syms.strs {
		n += symbolSize + int64(len(str))
	}
	s.syms.mu.Unlock()
	return n
}

// randT is the generator type of the simulations.
type randT = rand.Rand

// newRand returns a deterministic generator.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }

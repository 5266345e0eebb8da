package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// specials are values whose bits must survive storage exactly.
var specials = []float64{
	math.NaN(), math.Float64frombits(0x7ff8dead0000beef), math.Float64frombits(0xfff0000000000001),
	math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, 1e-300, 1.7682643398898673e+09,
}

// scenario drives one endpoint through many scrapes.
type scenario struct {
	name      string
	fixture   string
	steps     int
	retention time.Duration
	churn     bool // drop samples at random so series vanish and return
	markDown  bool // fail some scrapes
	explicit  bool // give some samples their own (possibly out of order) timestamps
	specials  bool // mix in NaNs, infinities, signed zeros...
}

// run appends the scenario to s as endpoint ep, mirroring it in a model,
// and calls check at a few points and at the end.
func (sc scenario) run(t *testing.T, s *Store, ep string, check func(step int, m *refModel)) {
	base := parseFixture(t, sc.fixture)
	smps := samples(base)
	vals := make([]float64, len(smps))
	for i, p := range smps {
		vals[i] = p.Value
	}
	rng := rand.New(rand.NewPCG(uint64(len(sc.name)), uint64(sc.steps)))
	m := newRefModel()
	ts := int64(1_700_000_000_000)
	for step := 0; step < sc.steps; step++ {
		ts += 5000 + rng.Int64N(200) - 100
		if sc.markDown && rng.IntN(30) == 0 {
			s.MarkDown(ep, ts)
			m.markDown(ts)
			continue
		}
		for i := range vals {
			switch r := rng.IntN(10); {
			case r < 6:
			case r < 8:
				vals[i] += float64(rng.IntN(7))
			case r < 9 || !sc.specials:
				vals[i] = rng.NormFloat64() * 1e3
			default:
				vals[i] = specials[rng.IntN(len(specials))]
			}
			smps[i].Value = vals[i]
		}
		dropFam := -1
		if sc.churn && rng.IntN(4) == 0 {
			dropFam = rng.IntN(len(base.Families))
		}
		n := 0
		cp := filterScrape(base, func(p *exposition.Sample) bool {
			n++
			if sc.churn && (rng.IntN(50) == 0 || dropFam >= 0 && p.Name == base.Families[dropFam].Name) {
				return false
			}
			return true
		})
		if sc.explicit {
			for _, p := range samples(cp) {
				if rng.IntN(8) == 0 {
					p.HasTimestamp = true
					p.TimestampMs = ts + []int64{-7000, -3000, -1, 0, 1, 2000}[rng.IntN(6)]
				}
			}
		}
		s.Append(ep, ts, cp)
		m.append(ts, cp)
		if step%97 == 13 {
			check(step, m)
		}
	}
	check(sc.steps, m)
}

// checkAgainst compares everything Store reports for ep with the model.
func checkAgainst(t *testing.T, s *Store, ep string, m *refModel, retention int64, rng *rand.Rand) {
	t.Helper()
	floor := m.lastT - retention
	oldest, newest, ok := s.Bounds(ep)
	wantOldest := m.rows[slices.IndexFunc(m.rows, func(r int64) bool { return r >= floor })]
	if !ok || oldest != wantOldest || newest != m.lastT {
		t.Fatalf("Bounds = %d, %d, %v; want %d, %d", oldest, newest, ok, wantOldest, m.lastT)
	}
	// Span reads what the last write published, without the endpoint's lock: the same as Revision and Bounds.
	if rev, o, n, ok := s.Span(ep); rev != s.Revision(ep) || o != oldest || n != newest || !ok {
		t.Fatalf("Span = %d, %d, %d, %v; Revision and Bounds say %d, %d, %d", rev, o, n, ok, s.Revision(ep), oldest, newest)
	}
	if got := s.Bytes(); got != s.recomputeBytes() {
		t.Fatalf("Bytes = %d, recomputed %d", got, s.recomputeBytes())
	}
	for _, name := range m.names() {
		got := s.Select(ep, name, math.MinInt64, math.MaxInt64, nil)
		if err := diffSeries(got, m.selectRef(name, floor, math.MaxInt64, nil)); err != nil {
			t.Fatalf("Select(%s, all): %v", name, err)
		}
		for range 3 {
			a, b := m.rows[rng.IntN(len(m.rows))], m.rows[rng.IntN(len(m.rows))]+rng.Int64N(3)-1
			if a > b {
				a, b = b, a
			}
			got := s.Select(ep, name, a, b, nil)
			if err := diffSeries(got, m.selectRef(name, max(a, floor), b, nil)); err != nil {
				t.Fatalf("Select(%s, %d, %d): %v", name, a, b, err)
			}
			// SelectLabels sees the series Select's match sees, without counting their points.
			var seen, listed []string
			s.Select(ep, name, a, b, func(ls exposition.Labels) bool { seen = append(seen, ls.Key()); return false })
			s.SelectLabels(ep, name, a, b, func(ls exposition.Labels) { listed = append(listed, ls.Key()) })
			slices.Sort(seen)
			slices.Sort(listed)
			if !slices.Equal(seen, listed) {
				t.Fatalf("SelectLabels(%s, %d, %d) lists %d series, Select's match sees %d:\n%q\n%q", name, a, b, len(listed), len(seen), listed, seen)
			}
		}
		match := func(ls exposition.Labels) bool { return ls.Get("le") == "+Inf" || ls.Get("engine") == "1" }
		got = s.Select(ep, name, math.MinInt64, math.MaxInt64, match)
		if err := diffSeries(got, m.selectRef(name, floor, math.MaxInt64, match)); err != nil {
			t.Fatalf("Select(%s, matched): %v", name, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	var cases []scenario
	for _, f := range fixtureNames(t) {
		steps := 400
		if f == "synthetic_v1_8engines_full.txt" {
			steps = 125 // crosses one block boundary; the payload is large
		}
		cases = append(cases,
			scenario{name: f + "/plain", fixture: f, steps: steps, specials: true},
			scenario{name: f + "/churn", fixture: f, steps: steps, churn: true, markDown: true, specials: true},
			scenario{name: f + "/explicit", fixture: f, steps: steps, churn: true, explicit: true},
		)
	}
	cases = append(cases,
		scenario{name: "retention/plain", fixture: dynamoFixture, steps: 700, retention: 10 * time.Minute},
		scenario{name: "retention/churn", fixture: dynamoFixture, steps: 700, retention: 7 * time.Minute,
			churn: true, markDown: true, explicit: true, specials: true},
	)
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) {
			s := New(Options{Retention: sc.retention, MaxBytes: -1})
			ret := s.retention
			rng := rand.New(rand.NewPCG(7, 7))
			sc.run(t, s, "ep", func(step int, m *refModel) {
				if len(m.rows) == 0 {
					return
				}
				checkAgainst(t, s, "ep", m, ret, rng)
				if sc.retention == 0 && !slices.Equal(s.Names("ep"), m.names()) {
					// Nothing was trimmed, so every series ever seen is held.
					t.Fatalf("Names = %v, want %v", s.Names("ep"), m.names())
				}
			})
		})
	}
}

func TestNamesLabelValuesEndpoints(t *testing.T) {
	s := New(Options{})
	sc := parseFixture(t, dynamoFixture)
	s.Append("b:8081", 1000, sc)
	s.Append("a:8081", 1000, parseText(t, "x{engine=\"7\"} 1\n"))
	m := newRefModel()
	m.append(1000, sc)
	if got, want := s.Names("b:8081"), m.names(); !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if got := s.LabelValues("b:8081", "dynamo_endpoint"); !slices.Equal(got,
		[]string{"clear_kv_blocks", "generate", "list_loras", "load_lora", "unload_lora"}) {
		t.Errorf("LabelValues(dynamo_endpoint) = %v", got)
	}
	if got := s.LabelValues("b:8081", "engine"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("LabelValues(engine) = %v", got)
	}
	if got := s.Endpoints(); !slices.Equal(got, []string{"a:8081", "b:8081"}) {
		t.Errorf("Endpoints = %v", got)
	}
	for _, f := range []func() bool{
		func() bool { return s.Names("nope") == nil },
		func() bool { return s.LabelValues("nope", "engine") == nil },
		func() bool { return s.Select("nope", "x", 0, 1e18, nil) == nil },
		func() bool { _, _, ok := s.Bounds("nope"); return !ok },
	} {
		if !f() {
			t.Error("unknown endpoint not empty")
		}
	}
	s.MarkDown("nope", 5) // must not create it
	if got := s.Endpoints(); len(got) != 2 {
		t.Errorf("MarkDown created an endpoint: %v", got)
	}
}

// step is one operation of a hand-written staleness case.
type step struct {
	t    int64
	text string // "" with down: MarkDown
	down bool
}

func TestStaleness(t *testing.T) {
	stale := derive.StaleNaN
	nan := math.NaN()
	cases := []struct {
		name  string
		steps []step
		want  map[string][]derive.Point
	}{{
		name: "disappear and return",
		steps: []step{
			{t: 1000, text: "a 1\nb{x=\"1\"} 2\n"},
			{t: 2000, text: "a 1\n"},
			{t: 3000, text: "a 1\n"},
			{t: 4000, text: "a 1\nb{x=\"1\"} 3\n"},
		},
		want: map[string][]derive.Point{
			"a":        {pt(1000, 1), pt(2000, 1), pt(3000, 1), pt(4000, 1)},
			`b{x="1"}`: {pt(1000, 2), pt(2000, stale), pt(4000, 3)},
		},
	}, {
		name: "mark down once",
		steps: []step{
			{t: 1000, text: "a 1\nb NaN\n"},
			{t: 2000, down: true},
			{t: 3000, down: true},
			{t: 4000, text: "a 5\n"},
			{t: 5000, text: "b 6\n"},
		},
		want: map[string][]derive.Point{
			"a": {pt(1000, 1), pt(2000, stale), pt(4000, 5), pt(5000, stale)},
			"b": {pt(1000, nan), pt(2000, stale), pt(5000, 6)},
		},
	}, {
		name: "out of order scrape ignored",
		steps: []step{
			{t: 2000, text: "a 1\n"},
			{t: 2000, text: "a 2\n"},
			{t: 1000, text: "a 3\n"},
			{t: 1500, down: true},
			{t: 3000, text: "a 4\n"},
		},
		want: map[string][]derive.Point{"a": {pt(2000, 1), pt(3000, 4)}},
	}, {
		name: "explicit timestamps",
		steps: []step{
			{t: 10000, text: "a 1 9000\nb 1\n"},
			{t: 15000, text: "a 2 9000\nb 2 14000\n"},  // a: duplicate time, dropped
			{t: 20000, text: "a 3 12000\nb 3 13000\n"}, // b: out of order, dropped
			{t: 25000, text: "a 4 30000\n"},            // b vanishes: stale at 25000
			{t: 28000, text: "b 5\n"},                  // a vanishes, but ran ahead: no marker
			{t: 35000, text: "a 6\nb 6 35000\n"},
		},
		want: map[string][]derive.Point{
			"a": {pt(9000, 1), pt(12000, 3), pt(30000, 4), pt(35000, 6)},
			"b": {pt(10000, 1), pt(14000, 2), pt(25000, stale), pt(28000, 5), pt(35000, 6)},
		},
	}, {
		name: "duplicate series in one scrape: first wins",
		steps: []step{
			{t: 1000, text: "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_sum 4\nh_count 2\n"},
		},
		want: map[string][]derive.Point{
			`h_bucket{le="1"}`: {pt(1000, 1)}, `h_bucket{le="+Inf"}`: {pt(1000, 2)},
			"h_sum": {pt(1000, 3)}, "h_count": {pt(1000, 2)},
		},
	}, {
		name: "label order does not matter",
		steps: []step{
			{t: 1000, text: "a{x=\"1\",y=\"2\"} 1\n"},
			{t: 2000, text: "a{y=\"2\",x=\"1\"} 2\n"},
		},
		want: map[string][]derive.Point{`a{x="1",y="2"}`: {pt(1000, 1), pt(2000, 2)}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Options{})
			for _, st := range c.steps {
				if st.down {
					s.MarkDown("ep", st.t)
				} else {
					s.Append("ep", st.t, parseText(t, st.text))
				}
			}
			got := map[string][]derive.Point{}
			for _, name := range s.Names("ep") {
				for _, sr := range s.Select("ep", name, 0, math.MaxInt64, nil) {
					got[seriesKey(sr.Name, sr.Labels)] = sr.Points
				}
			}
			// diffSeries compares bits, so a marker never passes for a NaN.
			if err := diffSeries(toSeries(got), c.want); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// toSeries turns a keyed map back into Select output for diffSeries; the
// key is carried in Name with no labels.
func toSeries(m map[string][]derive.Point) []Series {
	var out []Series
	for k, pts := range m {
		out = append(out, Series{Name: k, Points: pts})
	}
	return out
}

// pt is a short derive.Point literal.
func pt(t int64, v float64) derive.Point { return derive.Point{T: t, V: v} }

func TestGapsAcrossBlock(t *testing.T) {
	// A series present on some rows only, with gaps in both bitmap words.
	s := New(Options{MaxBytes: -1})
	m := newRefModel()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := int64(1); i <= 3*blockRows+7; i++ {
		text := "a 1\n"
		if rng.IntN(3) == 0 {
			text += "b 2\n"
		}
		if i%5 == 0 {
			s.MarkDown("ep", i*1000)
			m.markDown(i * 1000)
			continue
		}
		sc := parseText(t, text)
		s.Append("ep", i*1000, sc)
		m.append(i*1000, sc)
	}
	checkAgainst(t, s, "ep", m, s.retention, rng)
}

func TestLabelCopySafety(t *testing.T) {
	s := New(Options{})
	sc := parseFixture(t, dynamoFixture)
	want := map[string][]derive.Point{}
	for _, p := range samples(sc) {
		want[seriesKey(p.Name, p.Labels)] = []derive.Point{{T: 1000, V: p.Value}}
	}
	s.Append("ep", 1000, sc)
	// The caller reuses the scrape's backing arrays for its next parse.
	for _, p := range samples(sc) {
		for i := range p.Labels {
			p.Labels[i] = exposition.Label{Name: "clobbered", Value: "x"}
		}
		p.Name = "clobbered"
		p.Value = -1
	}
	var got []Series
	for _, name := range s.Names("ep") {
		got = append(got, s.Select("ep", name, 0, 2000, nil)...)
	}
	if err := diffSeries(got, want); err != nil {
		t.Fatal(err)
	}
	// Appending to the labels or the points Select returned must not reach the store either. (Both are shared with
	// the store and between the queries of a refresh, and are read-only.)
	for _, sr := range got {
		grownLabels := append(sr.Labels, exposition.Label{Name: "extra"})
		grownLabels[0].Value = "mutated"
		grown := append(sr.Points, derive.Point{T: 3000, V: 42})
		grown[0].V = 42
	}
	got = got[:0]
	for _, name := range s.Names("ep") {
		got = append(got, s.Select("ep", name, 0, 2000, nil)...)
	}
	if err := diffSeries(got, want); err != nil {
		t.Fatal(err)
	}
}

func TestInternSharesAcrossEndpoints(t *testing.T) {
	s := New(Options{})
	for _, ep := range []string{"a", "b"} {
		s.Append(ep, 1000, parseFixture(t, dynamoFixture))
	}
	a := s.Select("a", "vllm:e2e_request_latency_seconds_bucket", 0, 2000, nil)
	ea, eb := s.get("a"), s.get("b")
	if len(a) == 0 || ea.series[0].id != eb.series[0].id {
		t.Fatal("identities not shared across endpoints")
	}
	// A second scrape must not allocate identities again.
	sc := parseFixture(t, dynamoFixture)
	before := len(s.syms.strs)
	next := int64(2000)
	allocs := testing.AllocsPerRun(10, func() {
		next += 5000
		s.Append("a", next, sc)
	})
	if len(s.syms.strs) != before || allocs > 2 {
		t.Errorf("steady-state Append: %v allocs, %d -> %d interned strings", allocs, before, len(s.syms.strs))
	}
}

func TestRemove(t *testing.T) {
	s := New(Options{})
	sc := parseFixture(t, dynamoFixture)
	for i := int64(1); i <= 300; i++ {
		s.Append("a", i*5000, sc)
		s.Append("b", i*5000, sc)
	}
	s.Remove("a")
	if got := s.Endpoints(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("Endpoints = %v", got)
	}
	if s.Bytes() != s.recomputeBytes() {
		t.Fatalf("Bytes = %d, recomputed %d", s.Bytes(), s.recomputeBytes())
	}
	if s.Select("a", "vllm:num_requests_running", 0, math.MaxInt64, nil) != nil {
		t.Fatal("removed endpoint still answers")
	}
	s.Remove("b")
	s.Remove("b")
	if s.Bytes() != 0 || len(s.syms.strs) != 0 || len(s.syms.sets) != 0 {
		t.Fatalf("after removing all: Bytes = %d, %d strings, %d identities", s.Bytes(), len(s.syms.strs), len(s.syms.sets))
	}
	s.Append("a", 1, sc) // usable again
	if _, _, ok := s.Bounds("a"); !ok {
		t.Fatal("re-added endpoint has no bounds")
	}
}

func TestXOR(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// steps walks an integer through deltas of every code length (putDelta), both signs.
	steps := make([]float64, 120)
	for i, acc := 1, int64(1e9); i < len(steps); i++ {
		bound := []int64{1, 5, 64, 4096, 1 << 20, 1 << 40}[rng.IntN(6)]
		acc += rng.Int64N(2*bound) - bound
		steps[i] = float64(acc)
	}
	steps[0] = 1e9
	gens := map[string]func(i int) float64{
		"int steps":    func(i int) float64 { return steps[i] },
		"const":        func(int) float64 { return 42 },
		"counter":      func(i int) float64 { return float64(i * 7) },
		"random":       func(int) float64 { return rng.NormFloat64() },
		"bits":         func(int) float64 { return math.Float64frombits(rng.Uint64()) },
		"specials":     func(int) float64 { return specials[rng.IntN(len(specials))] },
		"ints":         func(int) float64 { return float64(rng.Int64N(1<<54) - 1<<53) },
		"small ints":   func(i int) float64 { return float64(i/3 + rng.IntN(3) - rng.IntN(200)*(i%2)) },
		"int then NaN": func(i int) float64 { return []float64{float64(i), derive.StaleNaN}[min(1, i/60)] },
		"int edges": func(i int) float64 {
			return []float64{1 << 53, -1 << 53, 1<<53 + 2, 0, math.Copysign(0, -1), 0.5, 1e300}[rng.IntN(7)]
		},
		"mixed": func(i int) float64 {
			if i%3 == 0 {
				return math.Float64frombits(rng.Uint64() >> rng.IntN(64))
			}
			return float64(i)
		},
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 64, 120} {
			var a valueAppender
			a.reset()
			want := make([]uint64, n)
			for i := range n {
				v := gen(i)
				want[i] = math.Float64bits(v)
				a.append(v, i)
			}
			var r valueReader
			r.init(a.buf)
			for i := range n {
				if got := math.Float64bits(r.next()); got != want[i] {
					t.Fatalf("%s n=%d: value %d = %#x, want %#x", name, n, i, got, want[i])
				}
			}
			// A stream's decode reads the commonest integer steps itself: it must read what next reads.
			rows := make([]int64, n)
			for i := range rows {
				rows[i] = int64(i)
			}
			st := stream{bits: a.buf, n: n, rowTS: rows}
			pts := st.decode(nil, math.MinInt64, math.MaxInt64)
			for i := range n {
				if got := math.Float64bits(pts[i].V); got != want[i] || pts[i].T != int64(i) {
					t.Fatalf("%s n=%d: decoded point %d = (%d, %#x), want (%d, %#x)", name, n, i, pts[i].T, got, i, want[i])
				}
			}
		}
	}
}

// TestLeadingOnesMatchesReadBit holds the prefix reader to readBit over random streams, truncated ones included.
func TestLeadingOnesMatchesReadBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 2000 {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			// Mostly ones, so long runs and runs that reach the end are common.
			b[i] = byte(rng.Uint32()) | byte(rng.Uint32()) | byte(rng.Uint32())
		}
		fast, slow := bitReader{b: b}, bitReader{b: b}
		for step := range 40 {
			limit := 1 + rng.IntN(6)
			want := 0
			for want < limit && slow.readBit() == 1 {
				want++
			}
			if got := fast.leadingOnes(limit); got != want {
				t.Fatalf("trial %d step %d limit %d: leadingOnes %d, readBit run %d", trial, step, limit, got, want)
			}
			k := uint8(rng.IntN(12))
			if f, s := fast.readBits(k), slow.readBits(k); f != s {
				t.Fatalf("trial %d step %d: the readers parted: %x, %x", trial, step, f, s)
			}
		}
	}
}

// TestEndpointsFollowAddsAndRemoves checks the kept sorted names against endpoints coming and going, and that a
// caller changing its copy changes no other caller's.
func TestEndpointsFollowAddsAndRemoves(t *testing.T) {
	s := New(Options{})
	sc := parseText(t, "x_total 1\n")
	s.Append("b", 1000, sc)
	s.Append("a", 1000, sc)
	got := s.Endpoints()
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Endpoints = %v", got)
	}
	got[0] = "changed by a caller"
	for _, step := range []struct {
		do   func()
		want []string
	}{
		{func() {}, []string{"a", "b"}},
		{func() { s.Append("c", 2000, sc) }, []string{"a", "b", "c"}},
		{func() { s.Remove("a") }, []string{"b", "c"}},
		{func() { s.Append("a", 3000, sc) }, []string{"a", "b", "c"}},
		{func() { s.MarkDown("d", 4000) }, []string{"a", "b", "c"}},
	} {
		step.do()
		if got := s.Endpoints(); !slices.Equal(got, step.want) {
			t.Fatalf("Endpoints = %v, want %v", got, step.want)
		}
	}
}

// TestSelectLabelsSeesWhatMatchSees: series that stopped, and series that started, across sealed blocks and the head,
// are listed for a range exactly when Select's match sees them: when they have points in a block overlapping it.
func TestSelectLabelsSeesWhatMatchSees(t *testing.T) {
	s := New(Options{Retention: time.Hour})
	const n = 2*blockRows + 60 // two sealed blocks and a head
	for row := range n {
		text := "h_bucket{le=\"1\"} 1\n"
		if row < blockRows+10 {
			text += "h_bucket{le=\"2\"} 2\n" // stops in the second block (a staleness marker, then nothing)
		}
		if row >= 2*blockRows-30 {
			text += "h_bucket{le=\"4\"} 3\n" // starts late in the second block
		}
		s.Append("ep", int64(row)*1000, parseText(t, text))
	}
	for _, tc := range []struct {
		from, to int64
		want     []string
	}{
		{0, 10_000, []string{"1", "2"}},
		{0, n * 1000, []string{"1", "2", "4"}},
		{(blockRows + 50) * 1000, (2*blockRows - 40) * 1000, []string{"1", "2", "4"}}, // the second block, whole
		{(2*blockRows + 10) * 1000, n * 1000, []string{"1", "4"}},                     // the head only
	} {
		var seen, listed []string
		s.Select("ep", "h_bucket", tc.from, tc.to, func(ls exposition.Labels) bool { seen = append(seen, ls.Get("le")); return false })
		s.SelectLabels("ep", "h_bucket", tc.from, tc.to, func(ls exposition.Labels) { listed = append(listed, ls.Get("le")) })
		slices.Sort(seen)
		slices.Sort(listed)
		if !slices.Equal(seen, tc.want) || !slices.Equal(listed, tc.want) {
			t.Errorf("[%d, %d]: SelectLabels lists %q, Select's match sees %q; want %q", tc.from, tc.to, listed, seen, tc.want)
		}
	}
	s.SelectLabels("nowhere", "h_bucket", 0, n*1000, func(exposition.Labels) { t.Error("an endpoint not held lists a series") })
}

// TestAppendReportsTheSameSeries: Append tells the scraper when a scrape held exactly the previous scrape's series,
// so that what is told from the series alone (the flavor, the ranks) need not be told again.
func TestAppendReportsTheSameSeries(t *testing.T) {
	steps := []struct {
		name string
		t    int64
		text string
		down bool
		want bool
	}{
		{name: "first scrape", t: 1000, text: "a 1\nb{x=\"1\"} 2\n", want: false},
		{name: "same series, new values", t: 2000, text: "a 5\nb{x=\"1\"} 7\n", want: true},
		{name: "again", t: 3000, text: "a 6\nb{x=\"1\"} 8\n", want: true},
		{name: "a new label value", t: 4000, text: "a 6\nb{x=\"1\"} 8\nb{x=\"2\"} 1\n", want: false},
		{name: "a series gone", t: 5000, text: "a 6\nb{x=\"2\"} 1\n", want: false},
		{name: "the same again", t: 6000, text: "a 6\nb{x=\"2\"} 1\n", want: true},
		{name: "another order", t: 7000, text: "b{x=\"2\"} 1\na 6\n", want: false},
		{name: "a duplicate sample, the same series", t: 8000, text: "b{x=\"2\"} 1\na 6\na 7\n", want: true},
		{name: "not after the newest scrape", t: 8000, text: "b{x=\"2\"} 1\na 6\n", want: false},
		{name: "the scrape failed", t: 9000, down: true},
		{name: "back, as before it failed", t: 10000, text: "b{x=\"2\"} 1\na 6\n", want: false},
		{name: "and the same", t: 11000, text: "b{x=\"2\"} 1\na 6\n", want: true},
		{name: "empty", t: 12000, text: "", want: false},
		{name: "empty again", t: 13000, text: "", want: false},
	}
	s := New(Options{})
	for _, st := range steps {
		if st.down {
			s.MarkDown("e", st.t)
			continue
		}
		if got := s.Append("e", st.t, parseText(t, st.text)); got != st.want {
			t.Errorf("%s: Append reported the same series %v, want %v", st.name, got, st.want)
		}
	}
}

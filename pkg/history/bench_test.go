package history

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// scrapesPerHour is 1 h at the 5 s scrape interval.
const scrapesPerHour = 720

// precompute returns n successive value vectors of a simulated engine.
func precompute(sm *sim, n int, seed uint64) [][]float64 {
	rng := newRand(seed)
	st := sm.initial()
	out := make([][]float64, n)
	for i := range out {
		sm.step(st, rng)
		out[i] = append([]float64(nil), st...)
	}
	return out
}

// heldPoints counts the points an endpoint holds (staleness markers included).
func heldPoints(s *Store) int64 {
	var n int64
	for _, ep := range s.snapshot() {
		ep.mu.RLock()
		for id := range ep.series {
			for _, b := range ep.blocks {
				if st, ok := b.stream(int32(id)); ok {
					n += int64(st.n)
				}
			}
			if st, ok := ep.head.stream(int32(id)); ok {
				n += int64(st.n)
			}
		}
		ep.mu.RUnlock()
	}
	return n
}

// BenchmarkAppend appends one scrape of the Dynamo V1 worker fixture (~270
// series) per op to an endpoint in steady state (1 h held, blocks sealing
// and expiring as they would in production).
func BenchmarkAppend(b *testing.B) {
	sc := parseFixture(b, dynamoFixture)
	sm := newSim(sc, 1)
	vals := precompute(sm, scrapesPerHour, 1)
	s := New(Options{})
	t := int64(1_700_000_000_000)
	for i := range 2 * scrapesPerHour { // reach steady state first
		sm.apply(vals[i%len(vals)])
		t += 5000
		s.Append("ep", t, sc)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sm.apply(vals[i%len(vals)])
		t += 5000
		s.Append("ep", t, sc)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sc.NumSamples()), "ns/sample")
}

// BenchmarkSelect reads one histogram family (22 bucket series) over the
// full hour held for the Dynamo fixture.
func BenchmarkSelect(b *testing.B) {
	sc := parseFixture(b, dynamoFixture)
	sm := newSim(sc, 2)
	vals := precompute(sm, scrapesPerHour, 2)
	s := New(Options{MemoBytes: -1}) // every Select decodes, as the first query of a refresh does
	t := int64(1_700_000_000_000)
	for _, v := range vals {
		sm.apply(v)
		t += 5000
		s.Append("ep", t, sc)
	}
	const name = "vllm:e2e_request_latency_seconds_bucket"
	for _, bc := range []struct {
		name  string
		match func(exposition.Labels) bool
	}{
		{"family", nil},
		{"one_bucket", func(ls exposition.Labels) bool { return ls.Get("le") == "+Inf" }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pts := 0
			for _, sr := range s.Select("ep", name, 0, math.MaxInt64, bc.match) {
				pts += len(sr.Points)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Select("ep", name, 0, math.MaxInt64, bc.match)
			}
			b.StopTimer()
			b.ReportMetric(float64(pts), "points/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(pts), "ns/point")
		})
	}
}

// BenchmarkMemory256x1h fills 256 endpoints with 1 h (720 scrapes at 5 s)
// of a realistic single-engine V1 payload (~550 series) and reports the
// memory held: Store.Bytes and the Go heap in use after GC, in total and per
// point. It takes several seconds, hence a benchmark and not a test.
func BenchmarkMemory256x1h(b *testing.B) {
	const endpoints = 256
	sc := singleEngine(b)
	sm := newSim(sc, 3)
	names := make([]string, endpoints)
	for i := range names {
		names[i] = "10.0." + string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10)) + ".1:8000"
	}
	for i := 0; i < b.N; i++ {
		states := make([][]float64, endpoints)
		rngs := make([]*randT, endpoints)
		for e := range states {
			states[e] = sm.initial()
			rngs[e] = newRand(uint64(e))
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		s := New(Options{MaxBytes: -1})
		t := int64(1_700_000_000_000)
		for range scrapesPerHour {
			t += 5000
			for e, ep := range names {
				sm.step(states[e], rngs[e])
				sm.apply(states[e])
				s.Append(ep, t, sc)
			}
		}
		elapsed := time.Since(start)
		states, rngs = nil, nil
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		pts := heldPoints(s)
		heap := float64(after.HeapInuse) - float64(before.HeapInuse)
		b.ReportMetric(float64(s.Bytes())/(1<<20), "store-MB")
		b.ReportMetric(heap/(1<<20), "heap-MB")
		b.ReportMetric(float64(s.Bytes())/float64(pts), "store-B/point")
		b.ReportMetric(heap/float64(pts), "heap-B/point")
		b.ReportMetric(float64(pts)/endpoints/scrapesPerHour, "series/endpoint")
		b.ReportMetric(float64(elapsed.Nanoseconds())/(endpoints*scrapesPerHour), "ns/append+sim")
		runtime.KeepAlive(s)
	}
}

// BenchmarkDecode decodes one block's stream of an integer counter (blockRows points) per op, by its steps: a
// histogram bucket at a few requests a scrape (±63, the three shortest codes), a token counter (thousands a scrape)
// and a counter that jumps by millions (the longest code); ns per point.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		step int64
	}{{"bucket", 30}, {"tokens", 20_000}, {"jumps", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			var a valueAppender
			a.reset()
			rng := newRand(1)
			rows := make([]int64, blockRows)
			v := int64(1_000_000)
			for i := range rows {
				rows[i] = int64(i) * 5000
				a.append(float64(v), i)
				v += rng.Int64N(bc.step + 1)
			}
			st := stream{bits: a.buf, n: len(rows), rowTS: rows}
			dst := make([]derive.Point, 0, len(rows))
			for b.Loop() {
				s := st // decode advances its rows
				dst = s.decode(dst[:0], math.MinInt64, math.MaxInt64)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/point")
		})
	}
}

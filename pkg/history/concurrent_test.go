package history

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// TestConcurrent runs scrapers, queriers, a remover and the cap trimmer at
// once; it is meant for -race and checks invariants, not timings.
func TestConcurrent(t *testing.T) {
	base := parseFixture(t, dynamoFixture)
	s := New(Options{Retention: 20 * time.Minute})
	// A cap that forces trimming while the writers run.
	probe := New(Options{MaxBytes: -1})
	for i := int64(1); i <= 200; i++ {
		probe.Append("x", i*5000, base)
	}
	s.maxBytes = probe.Bytes() * 3

	const writers, scrapes = 6, 400
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer owns its scrape, as each scraper parses its own.
			sc := filterScrape(base, func(*exposition.Sample) bool { return true })
			sm := newSim(sc, uint64(w))
			st := sm.initial()
			ep := fmt.Sprintf("ep%d", w%4) // two writers share some endpoints
			rng := newRand(uint64(w))
			for i := int64(1); i <= scrapes; i++ {
				sm.step(st, rng)
				sm.apply(st)
				if i%50 == 0 {
					s.MarkDown(ep, i*5000+int64(w))
				} else {
					s.Append(ep, i*5000+int64(w), sc)
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range 3 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, ep := range s.Endpoints() {
					for _, name := range s.Names(ep) {
						for _, sr := range s.Select(ep, name, 0, math.MaxInt64, nil) {
							for i := 1; i < len(sr.Points); i++ {
								if sr.Points[i].T <= sr.Points[i-1].T {
									t.Errorf("%s: points out of order", name)
									return
								}
							}
						}
					}
					// A refresh's new step: rates through the cursors, which the writers' seals prune and trims strand.
					if _, newest, ok := s.Bounds(ep); ok {
						for _, name := range s.Names(ep) {
							s.SelectRates(ep, name, newest-60_000, newest, []int64{newest}, 60_000, nil, 0)
							// And the selections the refresh's queries share, read by the other readers at once.
							s.SelectRatesShared(ep, name, newest-60_000, newest, []int64{newest}, 60_000, "all", nil, 0)
							s.SelectLatestShared(ep, name, newest-300_000, newest, newest, "all", nil, 0)
						}
					}
					s.LabelValues(ep, "le")
					s.Bounds(ep)
					if rev, oldest, newest, ok := s.Span(ep); ok && (rev == 0 || oldest > newest) {
						t.Errorf("%s: Span = %d, %d..%d", ep, rev, oldest, newest)
					}
					s.SelectLabels(ep, "vllm:e2e_request_latency_seconds_bucket", 0, math.MaxInt64, func(exposition.Labels) {})
					_ = s.Bytes()
				}
				if r == 0 {
					s.Remove("ep3")
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	if got, want := s.Bytes(), s.recomputeBytes(); got != want {
		t.Fatalf("Bytes = %d, recomputed %d", got, want)
	}
	var cursorBytes int64
	for _, name := range s.Endpoints() {
		ep := s.rlock(name)
		cursorBytes += ep.cursors.bytes
		ep.mu.RUnlock()
	}
	if got := s.cursorBytes.Load(); got != cursorBytes {
		t.Fatalf("cursors count %d bytes, the endpoints hold %d", got, cursorBytes)
	}
	for _, ep := range []string{"ep0", "ep1", "ep2"} {
		if _, newest, ok := s.Bounds(ep); !ok || newest < scrapes*5000 {
			t.Errorf("%s: newest %d, %v", ep, newest, ok)
		}
	}
}

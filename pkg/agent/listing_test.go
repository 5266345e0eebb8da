package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// manyTraces fills dir with n empty trace files, their modification times one second apart (the newest last).
func manyTraces(t testing.TB, dir string, n int) {
	t.Helper()
	base := time.Now().Add(-time.Duration(n) * time.Second)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.%06d.pt.trace.json", i%8, i))
		if err := os.WriteFile(p, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		mod := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

// heapPeak samples the heap's object bytes every millisecond until stop is closed and returns the highest.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// listConcurrently lists the agent's traces n times at once and returns the peak heap growth over the run.
func listConcurrently(t testing.TB, a *testAgent, n int) uint64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	stop := make(chan struct{})
	peak := heapPeak(stop)
	c := clientFrom("127.0.0.1")
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := do(t.(*testing.T), c, "GET", a.URL+PathTraces, testToken, "")
			var l TraceList
			if code != http.StatusOK || json.Unmarshal([]byte(body), &l) != nil || len(l.Traces) != MaxTraces || !l.Truncated ||
				l.Traces[0].Name != "rank7.049999.pt.trace.json" {
				errs <- fmt.Sprintf("%d %.200s", code, body)
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for e := range errs {
		t.Errorf("a listing: %s", e)
		break
	}
	return max(<-peak, base) - base
}

// TestTraceListingMemoryIsBounded lists a directory of 50 000 trace files 20 times at once: each listing answers
// the newest MaxTraces, and the heap grows by a bounded amount (the old listing held every entry of every
// concurrent listing: some 377 MB).
func TestTraceListingMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 50 000 files")
	}
	a := newTestAgent(t, newFakeVLLM(t), func(c *Config) { c.Rate, c.Burst = 1e6, 1e6 })
	manyTraces(t, a.traces, 50_000)
	grown := listConcurrently(t, a, 20)
	t.Logf("50 000 files × 20 concurrent listings: peak heap growth %.1f MB", float64(grown)/(1<<20))
	if grown > 64<<20 {
		t.Errorf("50 000 files × 20 concurrent listings grew the heap by %.0f MB; want at most 64 MB", float64(grown)/(1<<20))
	}
}

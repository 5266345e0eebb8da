package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadCache: concurrent calls of one key share one fetch, the answer serves later calls for the TTL, forget
// makes the next call fetch again, and no more fetches than the slots run at once.
func TestReadCache(t *testing.T) {
	c := newReadCache(time.Hour, 2)
	var fetches, inFlight, maxInFlight atomic.Int32
	fetch := func(v int) func(context.Context) int {
		return func(context.Context) int {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
			}
			fetches.Add(1)
			time.Sleep(20 * time.Millisecond)
			return v
		}
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"a", "b", "c", "d", "e"}[i%5]
			if got := cached(c, context.Background(), key, fetch(i%5)); got != i%5 {
				t.Errorf("%s answered %d", key, got)
			}
		}()
	}
	wg.Wait()
	if fetches.Load() != 5 || maxInFlight.Load() > 2 {
		t.Errorf("50 calls over 5 keys: %d fetches, %d at once; want 5, at most 2", fetches.Load(), maxInFlight.Load())
	}
	if got := cached(c, context.Background(), "a", fetch(9)); got != 0 || fetches.Load() != 5 {
		t.Errorf("within the TTL: %d after %d fetches", got, fetches.Load())
	}
	c.forget("a")
	if got := cached(c, context.Background(), "a", fetch(9)); got != 9 || fetches.Load() != 6 {
		t.Errorf("after forget: %d after %d fetches", got, fetches.Load())
	}
	short := newReadCache(time.Millisecond, 1)
	cached(short, context.Background(), "k", fetch(1))
	time.Sleep(5 * time.Millisecond)
	if got := cached(short, context.Background(), "k", fetch(2)); got != 2 {
		t.Errorf("after the TTL: %d, want a new fetch", got)
	}
}

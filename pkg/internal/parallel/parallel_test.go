package parallel

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestMapKeepsTheItemsOrder: the results come in the items' order whichever call ends first, and every call runs at
// once (the first waits for the last to start).
func TestMapKeepsTheItemsOrder(t *testing.T) {
	last := make(chan struct{})
	got := Map([]int{3, 2, 1}, func(i int) int {
		if i == 3 {
			select {
			case <-last:
			case <-time.After(time.Minute):
				t.Error("the last call never started beside the first")
			}
		}
		if i == 1 {
			close(last)
		}
		return i * 10
	})
	if !slices.Equal(got, []int{30, 20, 10}) {
		t.Errorf("Map = %v, want [30 20 10]", got)
	}
	if got := Map(nil, func(int) int { return 1 }); len(got) != 0 {
		t.Errorf("Map(nil) = %v", got)
	}
}

// TestMapNBoundsTheCallsAtOnce: no more than n calls run at once, every item is called once, and n below one runs
// them one at a time.
func TestMapNBoundsTheCallsAtOnce(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3} {
		var running, most atomic.Int64
		items := make([]int, 40)
		for i := range items {
			items[i] = i
		}
		got := MapN(n, items, func(i int) int {
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			return i
		})
		if !slices.Equal(got, items) {
			t.Errorf("n=%d: results %v, want the items in order", n, got)
		}
		if limit := int64(max(n, 1)); most.Load() > limit {
			t.Errorf("n=%d: %d calls at once, want at most %d", n, most.Load(), limit)
		}
	}
}

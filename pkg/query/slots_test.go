package query

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAdmitBoundsHeavyEvaluations: at most cap(heavySlots) heavy evaluations run at once however many ask, light
// ones pass while every slot is taken, and a heavy one whose query is cancelled stops waiting with its error.
func TestAdmitBoundsHeavyEvaluations(t *testing.T) {
	ctx := context.Background()
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for range 3 * cap(heavySlots) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := admit(ctx, 240)
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond) // overlap: the others are admitted meanwhile if they can be
			running.Add(-1)
			done()
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > int32(cap(heavySlots)) || p < 1 {
		t.Errorf("%d heavy evaluations ran at once, want at most %d", p, cap(heavySlots))
	}

	var held []func()
	for range cap(heavySlots) {
		done, err := admit(ctx, heavySteps+1)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, done)
	}
	light := make(chan error, 1)
	go func() {
		done, err := admit(ctx, heavySteps)
		if err == nil {
			done()
		}
		light <- err
	}()
	select {
	case err := <-light:
		if err != nil {
			t.Errorf("a light evaluation: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a light evaluation waited for the heavy slots")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := admit(cancelled, 240); err != context.Canceled {
		t.Errorf("a cancelled heavy evaluation while every slot is taken: %v, want context.Canceled", err)
	}
	for _, done := range held {
		done()
	}
}

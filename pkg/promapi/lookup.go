package promapi

import (
	"context"
	"sync/atomic"
	"time"
)

// The lookups a dashboard's panels share (the names a server holds, its histograms' bucket layouts, its kind and
// intervals for the Horizon, the KV cache configurations, the replica labels) are kept for DefaultNamesTTL. Past it,
// an answer is still served for up to StaleFor more while one lookup in the background replaces it: a refresh then
// never waits on a metadata round trip that the answer before covers (on Prometheus 3 scraping 256 endpoints, every
// sixth refresh waited 100–300 ms for them, every panel behind the lock), and what changes on the server still shows
// a refresh or two later. Only a first lookup, or one past StaleFor (a dashboard left closed), is waited for.

// StaleFor is how long past its TTL a lookup's answer is served while a background lookup replaces it.
const StaleFor = 5 * time.Minute

// lookupTimeout bounds a background lookup, which outlives the request that started it.
const lookupTimeout = 30 * time.Second

// age is how a lookup's answer fetched at fetched (zero: none) stands at now: fresh within ttl, stale for StaleFor
// past it, else expired. A clock that went back makes it expired.
type age int

const (
	expired age = iota
	stale
	fresh
)

func ageOf(fetched, now time.Time, ttl time.Duration) age {
	switch d := now.Sub(fetched); {
	case fetched.IsZero() || d < 0:
		return expired
	case d < ttl:
		return fresh
	case d < ttl+StaleFor:
		return stale
	}
	return expired
}

// revalidator runs one background lookup at a time.
type revalidator struct{ running atomic.Bool }

// start runs lookup in the background unless one is running. The lookup keeps ctx's values (the signed-in user's
// forwarded identity, with which the server is asked) but not its cancellation: the request that started it may end
// first. lookupTimeout bounds it instead.
func (r *revalidator) start(ctx context.Context, lookup func(context.Context)) {
	if !r.running.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
	go func() {
		defer r.running.Store(false)
		defer cancel()
		lookup(ctx)
	}()
}

// shared is a first lookup (no answer to serve meanwhile) that every caller needing its answer waits for: it runs
// once, apart from the callers, so that it holds no lock another lookup needs, and none of the callers' requests
// ending cancels it for the others.
type shared[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// share starts lookup, keeping ctx's values but not its cancellation, bounded by lookupTimeout; kept runs with the
// answer before any caller sees it (to keep it where later callers find it).
func share[T any](ctx context.Context, lookup func(context.Context) (T, error), kept func(T, error)) *shared[T] {
	s := &shared[T]{done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
	go func() {
		defer close(s.done)
		defer cancel()
		s.val, s.err = lookup(ctx)
		kept(s.val, s.err)
	}()
	return s
}

// wait returns the lookup's answer, or ctx's error if the caller gives up first.
func (s *shared[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-s.done:
		return s.val, s.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Package parallel calls a function on every item of a slice at once and keeps the results in the items' order, so
// that a caller reading them (the first error, notices in place) answers the same whichever call ends first.
package parallel

import "sync"

// Map calls f on every item, each call in a goroutine of its own, and returns once all have returned, f's results
// in the items' order.
func Map[T, V any](items []T, f func(T) V) []V {
	return MapN(len(items), items, f)
}

// MapN is Map with at most n calls running at once (at least one): a new call starts when one ends, in the items'
// order.
func MapN[T, V any](n int, items []T, f func(T) V) []V {
	out := make([]V, len(items))
	slots := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			out[i] = f(it)
		}()
	}
	wg.Wait()
	return out
}

package app

import (
	"context"
	"sync"
	"time"
)

// Limits of the app's read-only calls to agents and /metrics URLs, which any Viewer's page load makes.
const (
	// ReadCacheTTL is how long one answer serves every caller: a Viewer polling the page makes at most one call
	// per agent route and /metrics URL per ReadCacheTTL, so it cannot use up the agent's budget for Admins.
	ReadCacheTTL = 2 * time.Second
	// MaxConcurrentReads bounds the read-only calls under way at once per instance (each exposure check parses a
	// /metrics body of up to exposition's size limit).
	MaxConcurrentReads = 4
	// MaxConcurrentDownloads bounds the trace downloads held at once per instance (each up to agent.MaxTraceBytes).
	MaxConcurrentDownloads = 2
)

// readCache coalesces and caches read-only calls by key: concurrent callers of one key share one call, and its
// answer serves later callers for the TTL. Keys come from the settings (agent names, metrics URLs), so the cache
// is bounded by them.
type readCache struct {
	ttl   time.Duration
	slots chan struct{} // calls under way
	mu    sync.Mutex
	calls map[string]*readCall
}

// readCall is one call: done is closed when val is set.
type readCall struct {
	done chan struct{}
	val  any
	at   time.Time
}

func newReadCache(ttl time.Duration, concurrent int) *readCache {
	return &readCache{ttl: ttl, slots: make(chan struct{}, concurrent), calls: map[string]*readCall{}}
}

// cached answers key from the cache, joins a call under way, or makes the call: fetch runs detached from the
// caller that started it (others may be waiting on it), in a slot; each fetch bounds its own time.
func cached[V any](c *readCache, ctx context.Context, key string, fetch func(context.Context) V) V {
	c.mu.Lock()
	call, ok := c.calls[key]
	if !ok || (isDone(call) && time.Since(call.at) >= c.ttl) {
		call = &readCall{done: make(chan struct{})}
		c.calls[key] = call
		c.mu.Unlock()
		go func() {
			c.slots <- struct{}{}
			defer func() { <-c.slots }()
			v := fetch(context.WithoutCancel(ctx))
			c.mu.Lock()
			call.val, call.at = v, time.Now()
			c.mu.Unlock()
			close(call.done)
		}()
	} else {
		c.mu.Unlock()
	}
	<-call.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return call.val.(V)
}

func isDone(c *readCall) bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// forget drops key's answer after a change, so the next read makes a new call and sees the change (a call under
// way still answers those already waiting on it).
func (c *readCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.calls, key)
}

package role

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// CacheTTL is how long a resolution serves: roles come from an hour of evidence, so a dashboard refreshing every
// few seconds shares one resolution (five evidence queries) per CacheTTL instead of running them on every panel.
// A query ending in the same CacheTTL slot takes the resolution of the first one, whose evidence ended up to
// CacheTTL earlier.
const CacheTTL = 30 * time.Second

// maxCacheEntries bounds the cache: a key per endpoint filter and CacheTTL slot.
const maxCacheEntries = 256

// Cache keeps resolved roles for CacheTTL. A nil *Cache resolves every time.
type Cache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[cacheKey]cacheEntry
}

type cacheKey struct {
	endpoint string
	slot     int64 // the query's end, unix ms, rounded down to a multiple of CacheTTL
}

type cacheEntry struct {
	roles map[string]string
	at    time.Time
}

// NewCache returns an empty cache, one per data source instance.
func NewCache() *Cache { return &Cache{now: time.Now, entries: map[cacheKey]cacheEntry{}} }

// Resolve is role.Resolve through the cache: the same endpoint filter and CacheTTL slot of the query's end answer
// from the cache while the entry is younger than CacheTTL. Errors are not kept, and neither is a resolution that
// found no endpoint (a data source that has not scraped yet), so roles appear as soon as evidence does.
func (c *Cache) Resolve(ctx context.Context, eval Eval, endpoint string, r query.Request) (map[string]string, error) {
	if c == nil {
		return Resolve(ctx, eval, endpoint, r)
	}
	key := cacheKey{endpoint: endpoint, slot: r.To.Truncate(CacheTTL).UnixMilli()}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < CacheTTL {
		return maps.Clone(e.roles), nil
	}
	roles, err := Resolve(ctx, eval, endpoint, r)
	if err != nil || len(roles) == 0 {
		return roles, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		now := c.now()
		for k, old := range c.entries {
			if now.Sub(old.at) >= CacheTTL {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCacheEntries {
			clear(c.entries)
		}
	}
	c.entries[key] = cacheEntry{roles: maps.Clone(roles), at: c.now()}
	return roles, nil
}

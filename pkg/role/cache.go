package role

import (
	"context"
	"maps"
	"strings"
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
	// declared are the roles endpoints' labels state; nil when none do.
	declared Declared
}

// Declared returns the roles endpoints' labels state, by endpoint name: direct mode's discovery reads them from a
// pod label such as llm-d.ai/role, Prometheus mode from the label the user's Prometheus relabelled it into.
type Declared func(ctx context.Context) map[string]string

// Declare makes labelled roles win over the evidence, for endpoints whose label says prefill, decode, both or
// unified (other values leave the evidence's role).
func (c *Cache) Declare(d Declared) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.declared = d
}

// overlay gives every endpoint the filter selects whose label states a known role that role, over the evidence's
// (a young or idle endpoint shows no evidence yet, but its label already says what it is).
func (c *Cache) overlay(ctx context.Context, endpoint string, roles map[string]string) map[string]string {
	c.mu.Lock()
	d := c.declared
	c.mu.Unlock()
	if d == nil {
		return roles
	}
	q := query.Query{Endpoint: endpoint}
	re := q.Matchers().Endpoint
	if roles == nil {
		roles = map[string]string{}
	}
	for ep, v := range d(ctx) {
		if re != nil && !re.MatchString(ep) {
			continue
		}
		switch v = strings.ToLower(v); v {
		case Prefill, Decode, Both, Unified:
			roles[ep] = v
		}
	}
	return roles
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
		return c.overlay(ctx, endpoint, maps.Clone(e.roles)), nil
	}
	roles, err := Resolve(ctx, eval, endpoint, r)
	if err != nil {
		return nil, err
	}
	if len(roles) > 0 {
		c.keep(key, roles)
	}
	return c.overlay(ctx, endpoint, roles), nil
}

// keep stores an evidence resolution, making room when the cache is full.
func (c *Cache) keep(key cacheKey, roles map[string]string) {
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
}

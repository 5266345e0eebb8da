package promapi

import (
	"cmp"
	"container/list"
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// Results is Prometheus mode's results cache, as Grafana's incremental querying and the query frontends of Thanos,
// Cortex and Mimir keep one: per range query (expression and step), the answer's steps older than the overlap
// window, which the server will not answer differently any more, so a refresh asks only for the steps after them.
// A step's value reads only samples stamped at or before it, and a sample reaches the server within seconds of its
// stamp (a scrape or a rule evaluation; a remote-write or Thanos sidecar path in well under the default window of
// ten minutes, Mimir's own max_cache_freshness), so a step older than the window is final. Where the server can tell
// of newer final steps (Horizon: a Prometheus that scrapes the fleet itself), those are kept too.
//
// Answers are the server's own joined (joinSpans, as a split range query's), identical to an uncached query's but
// for series order, which Outputs sorts (TestResultsAnswerAsUncached). An answer that came with a warning (a
// store left out, a truncation) is not kept. Memory is counted per series (labels, points) against maxBytes; the
// least recently used entries go first, and an answer larger than a quarter of the budget is not kept.
type Results struct {
	maxBytes int64
	overlap  time.Duration
	now      func() time.Time
	// horizon, if set, may tell of newer final steps than the overlap window does (Horizon).
	horizon Finality

	mu      sync.Mutex
	bytes   int64
	entries map[string]*list.Element // of *resultsEntry; lru's front is the most recently used
	lru     list.List
	flights map[string]*rangeFlight // by range (start, end) and key
	stats   ResultsStats
}

// ResultsStats counts what a Results did, for tests and benchmarks.
type ResultsStats struct {
	// Reused and Asked count steps (per range query) taken from the cache and asked of the server.
	Reused, Asked int64
	Entries       int
	Bytes         int64
}

// resultsEntry is one range query's final steps first..last (ms, on the query's step grid).
type resultsEntry struct {
	key         string
	first, last int64
	m           model.Matrix // each series' Values capped at their length: a join appends to a copy
	bytes       int64
}

// Finality tells up to when a server's answers are final, where it can tell (Horizon).
type Finality interface {
	Final(ctx context.Context, now time.Time) (final time.Time, known bool)
}

// NewResults returns a results cache of at most maxBytes, keeping the steps older than overlap, and those at or
// before what horizon (nil: none) tells of.
func NewResults(maxBytes int64, overlap time.Duration, horizon Finality) *Results {
	return &Results{maxBytes: maxBytes, overlap: overlap, horizon: horizon, now: time.Now, entries: map[string]*list.Element{},
		flights: map[string]*rangeFlight{}}
}

// Stats reports the counters and the memory held.
func (r *Results) Stats() ResultsStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Entries, s.Bytes = r.lru.Len(), r.bytes
	return s
}

// resultsKey is a range query's grid: its expression, its step and its steps' offset from the step's multiples.
func resultsKey(expr string, start int64, step int64) string {
	off := start % step
	if off < 0 {
		off += step
	}
	return strconv.FormatInt(step, 10) + "/" + strconv.FormatInt(off, 10) + "/" + expr
}

// fetcher asks the server for a range query's steps from start to end (split as QueryRange splits).
type fetcher func(ctx context.Context, start, end time.Time) (model.Matrix, []string, error)

// rangeFlight is a range query being answered; identical ones arriving meanwhile (panels sharing a query, viewers
// of one dashboard refreshing together) wait for its answer instead of asking the server again.
type rangeFlight struct {
	done    chan struct{}
	waiters int // under Results.mu
	m       model.Matrix
	warns   []string
	err     error
}

// queryRange answers a range query from the cached steps and the server's answer for the others, then keeps the
// final steps; the same query already in flight answers this one too (its matrix shared: readers do not modify
// answers).
func (r *Results) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration, fetch fetcher) (model.Matrix, []string, error) {
	s, e, st := start.UnixMilli(), end.UnixMilli(), step.Milliseconds()
	if st <= 0 || e < s {
		return fetch(ctx, start, end)
	}
	e = s + (e-s)/st*st // the last step
	key := resultsKey(expr, s, st)
	fk := strconv.FormatInt(s, 10) + "/" + strconv.FormatInt(e, 10) + "/" + key
	r.mu.Lock()
	if f := r.flights[fk]; f != nil {
		f.waiters++
		r.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if f.err == nil {
			r.mu.Lock()
			r.stats.Reused += (e-s)/st + 1
			r.mu.Unlock()
			return f.m, slices.Clone(f.warns), nil
		}
		return r.answer(ctx, key, s, e, st, start, end, fetch) // its asker's failure (a cancelled request) need not be ours
	}
	f := &rangeFlight{done: make(chan struct{})}
	r.flights[fk] = f
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.flights, fk)
		r.mu.Unlock()
		close(f.done)
	}()
	f.m, f.warns, f.err = r.answer(ctx, key, s, e, st, start, end, fetch)
	return f.m, f.warns, f.err
}

// answer is queryRange's work for the steps s..e (ms) of key.
func (r *Results) answer(ctx context.Context, key string, s, e, st int64, start, end time.Time, fetch fetcher) (model.Matrix, []string, error) {
	r.mu.Lock()
	var cached *resultsEntry
	if el, ok := r.entries[key]; ok {
		cached = el.Value.(*resultsEntry)
		r.lru.MoveToFront(el)
	}
	r.mu.Unlock()

	lo, hi := s, s-st // the cached steps this query takes; none when lo > hi
	if cached != nil {
		lo, hi = max(cached.first, s), min(cached.last, e)
	}
	if cached != nil && lo == s && hi == e {
		// Every step is kept (a refresh within a step): the kept series are one joined answer already, distinct and
		// in capped arrays, and storing them again would keep the same steps. Nothing is asked, so neither is the
		// horizon: its read is a round trip the refresh's other panels would wait behind.
		r.mu.Lock()
		r.stats.Reused += (e-s)/st + 1
		r.mu.Unlock()
		return cached.span(s, e), nil, nil
	}
	// The horizon is read before the server is asked: the answer then holds every sample stamped at or before it.
	var horizon int64 = math.MinInt64
	if r.horizon != nil {
		if h, ok := r.horizon.Final(ctx, r.now()); ok {
			horizon = h.UnixMilli()
		}
	}
	var parts []model.Matrix
	var warns []string
	ask := func(from, to int64) error {
		if from > to {
			return nil
		}
		m, w, err := fetch(ctx, time.UnixMilli(from), time.UnixMilli(to))
		if err != nil {
			return err
		}
		parts, warns = append(parts, m), append(warns, w...)
		return nil
	}
	reused := int64(0)
	if lo > hi {
		if err := ask(s, e); err != nil {
			return nil, warns, err
		}
	} else {
		if err := ask(s, lo-st); err != nil {
			return nil, warns, err
		}
		parts = append(parts, cached.span(lo, hi))
		if err := ask(hi+st, e); err != nil {
			return nil, warns, err
		}
		reused = (hi-lo)/st + 1
	}
	m, truncated := joinSpans(parts)
	if reused > 0 && (truncated || points(m) > query.MaxPointsPerQuery) {
		// Joined, the cached steps and the new ones overflow what one answer may hold: ask for the whole range, which
		// the server's answer cuts as without a cache.
		return fetch(ctx, start, end)
	}
	if truncated {
		warns = append(warns, TruncatedWarning)
	}
	r.mu.Lock()
	r.stats.Reused += reused
	r.stats.Asked += (e-s)/st + 1 - reused
	r.mu.Unlock()
	final := max(r.now().Add(-r.overlap).UnixMilli(), horizon)
	if last := s + floorDiv(final-s, st)*st; len(warns) == 0 && last >= s {
		r.store(key, s, min(last, e), m)
	}
	return m, warns, nil
}

// negativeOffset finds an offset into a step's future (x offset -5m), whose step reads samples stamped after it.
var negativeOffset = regexp.MustCompile(`(?i)\boffset\s*-`)

// cacheable reports whether a range query's steps may be kept: not when a step reads more than the samples at or
// before it, that is when the expression names the query's own start or end (@ start(), @ end(): its steps
// depend on the range) or reads the future through a negative offset.
func cacheable(expr string) bool { return splittable(expr) && !negativeOffset.MatchString(expr) }

// points counts an answer's points.
func points(m model.Matrix) int {
	n := 0
	for _, s := range m {
		n += len(s.Values)
	}
	return n
}

// span is the entry's series restricted to the steps lo..hi, sharing their values (capped: an append copies).
func (e *resultsEntry) span(lo, hi int64) model.Matrix {
	out := make(model.Matrix, 0, len(e.m))
	for _, s := range e.m {
		if v := valuesIn(s.Values, lo, hi); len(v) > 0 {
			out = append(out, &model.SampleStream{Metric: s.Metric, Values: v})
		}
	}
	return out
}

// valuesIn is the part of time-ordered values with lo ≤ T ≤ hi, its capacity capped at its length.
func valuesIn(v []model.SamplePair, lo, hi int64) []model.SamplePair {
	at := func(p model.SamplePair, t int64) int { return cmp.Compare(int64(p.Timestamp), t) }
	a, _ := slices.BinarySearchFunc(v, lo, at)
	b, found := slices.BinarySearchFunc(v, hi, at)
	if found {
		b++
	}
	if a >= b {
		return nil
	}
	return v[a:b:b]
}

// store keeps m's steps first..last as key's entry, replacing the one before, within the budget.
func (r *Results) store(key string, first, last int64, m model.Matrix) {
	e := &resultsEntry{key: key, first: first, last: last, bytes: int64(len(key)) + 96}
	for _, s := range m {
		v := valuesIn(s.Values, first, last)
		if len(v) == 0 {
			continue
		}
		e.m = append(e.m, &model.SampleStream{Metric: s.Metric, Values: v})
		e.bytes += seriesBytes(s.Metric, cap(s.Values)) // v holds the whole array
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.entries[key]; ok {
		r.bytes -= el.Value.(*resultsEntry).bytes
		r.lru.Remove(el)
		delete(r.entries, key)
	}
	if e.bytes > r.maxBytes/4 {
		return
	}
	r.entries[key] = r.lru.PushFront(e)
	r.bytes += e.bytes
	for r.bytes > r.maxBytes {
		old := r.lru.Back()
		oe := old.Value.(*resultsEntry)
		r.lru.Remove(old)
		delete(r.entries, oe.key)
		r.bytes -= oe.bytes
	}
}

// seriesBytes is what one kept series counts: its labels (strings and map slots, shared with the answer), its
// stream and an array of n points.
func seriesBytes(m model.Metric, n int) int64 {
	b := int64(48+64) + 16*int64(n)
	for k, v := range m {
		b += int64(len(k)+len(v)) + 48
	}
	return b
}

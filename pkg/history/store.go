package history

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultRetention = time.Hour
	DefaultMaxBytes  = 256 << 20
)

// Options configures a Store.
type Options struct {
	// Retention is how far back from an endpoint's newest scrape points are
	// kept; 0 means DefaultRetention.
	Retention time.Duration
	// MaxBytes caps Bytes for all endpoints together; 0 means
	// DefaultMaxBytes, negative means no cap.
	MaxBytes int64
	// MemoBytes bounds the decoded points kept between the queries of a refresh, and apart the rates kept
	// (SelectRates); 0 means DefaultMemoBytes, or MaxBytes/8 if that is smaller; negative means none are kept.
	MemoBytes int64
}

// Series is one series' points, or its rates at steps (SelectRates). Its labels, points and rates are shared with
// the store and other readers: keep them, never modify them (appending to labels or points copies).
type Series struct {
	// Name is the full sample name, e.g. "vllm:e2e_request_latency_seconds_bucket".
	Name   string
	Labels exposition.Labels
	// Points in increasing time, staleness markers (derive.StaleNaN bits)
	// included.
	Points []derive.Point
	// Rates replace Points in a rate selection (SelectRates): the series' rates at the selection's steps.
	Rates *derive.StepRates
}

// Store is the history of all endpoints. It is safe for concurrent use.
type Store struct {
	retention int64 // ms
	maxBytes  int64 // <= 0: no cap

	mu  sync.RWMutex
	eps map[string]*endpoint
	// view is a copy of eps made at every change of it under mu, which get reads without mu: every read of every
	// query looks its endpoint up.
	view atomic.Pointer[map[string]*endpoint]
	// sorted is the names of eps, sorted (Endpoints); nil when an endpoint came or went since.
	sorted []string

	bytes atomic.Int64
	// memoBytes and ratesBytes are the points and the rates the endpoints' memos hold (not part of Bytes: they are
	// dropped at every write); memoMax bounds each.
	memoBytes, ratesBytes atomic.Int64
	// cursorBytes is what the endpoints' rate cursors hold (cursor.go), bounded by cursorMax: they stay from one
	// refresh to the next.
	cursorBytes atomic.Int64
	memoMax     int64
	// revs numbers endpoint revisions store-wide, so a removed and re-added endpoint never repeats one.
	revs atomic.Uint64
	syms interner
	// trimMu makes one goroutine at a time enforce the cap; others skip it.
	trimMu sync.Mutex
	// watermark is the writer's word that nothing more lands at or before it (AdvanceWatermark); minTime until given.
	watermark atomic.Int64
}

// New returns an empty Store.
func New(opts Options) *Store {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	s := &Store{
		retention: opts.Retention.Milliseconds(),
		maxBytes:  opts.MaxBytes,
		memoMax:   opts.MemoBytes,
		eps:       make(map[string]*endpoint),
	}
	s.view.Store(&map[string]*endpoint{})
	if s.memoMax == 0 {
		s.memoMax = DefaultMemoBytes
		if opts.MaxBytes > 0 {
			s.memoMax = min(s.memoMax, opts.MaxBytes/8)
		}
	}
	s.syms = interner{sets: make(map[uint64][]*ident), strs: make(map[string]*symbol), bytes: &s.bytes}
	s.watermark.Store(minTime)
	return s
}

// AdvanceWatermark records the writer's word that it will write nothing at or before t, to any endpoint: a scraper
// with no scrape in flight gives it for the moment before now, since its next scrape is stamped later. Bounds then
// reports every endpoint's history complete up to t, not only up to its newest scrape, so a step between that
// scrape and t is final although no scrape has come after it yet. Were a point written at or before t after all
// (the wall clock stepped back), the endpoint's Revision changes, as it does for a point written among earlier
// scrapes. The watermark never goes back.
func (s *Store) AdvanceWatermark(t int64) {
	for {
		old := s.watermark.Load()
		if t <= old || s.watermark.CompareAndSwap(old, t) {
			return
		}
	}
}

// Bytes returns the estimated bytes held by all endpoints: compressed
// blocks, head buffers, series tables and interned identities. It is the
// number MaxBytes is enforced against; the Go heap holds somewhat more
// (map and allocator overhead).
func (s *Store) Bytes() int64 { return s.bytes.Load() }

// CursorBytes returns what the endpoints' rate cursors hold (cursor.go): kept between refreshes, within half the
// memo's bound, and not part of Bytes.
func (s *Store) CursorBytes() int64 { return s.cursorBytes.Load() }

// Endpoints returns the names of the endpoints held, sorted. Every query asks at every refresh: the sorted names
// are kept until an endpoint comes or goes, and each caller gets its own copy.
func (s *Store) Endpoints() []string {
	s.mu.RLock()
	sorted := s.sorted
	s.mu.RUnlock()
	if sorted == nil {
		s.mu.Lock()
		if s.sorted == nil {
			s.sorted = make([]string, 0, len(s.eps))
			for name := range s.eps {
				s.sorted = append(s.sorted, name)
			}
			slices.Sort(s.sorted)
		}
		sorted = s.sorted
		s.mu.Unlock()
	}
	return slices.Clone(sorted)
}

// Remove forgets endpoint and all its history.
func (s *Store) Remove(endpoint string) {
	s.mu.Lock()
	ep := s.eps[endpoint]
	delete(s.eps, endpoint)
	s.changed()
	s.mu.Unlock()
	if ep == nil {
		return
	}
	ep.lock()
	defer ep.mu.Unlock()
	ep.removed = true
	ep.span.Store(nil)
	for id := range ep.series {
		if ep.series[id].id != nil {
			s.syms.release(ep.series[id].id)
		}
	}
	s.bytes.Add(-ep.reported)
	ep.clear()
}

// get returns the endpoint or nil.
func (s *Store) get(name string) *endpoint { return (*s.view.Load())[name] }

// changed records that eps changed: the sorted names are made again when asked, and get reads a new copy. mu is
// write-held.
func (s *Store) changed() {
	s.sorted = nil
	view := make(map[string]*endpoint, len(s.eps))
	for name, ep := range s.eps {
		view[name] = ep
	}
	s.view.Store(&view)
}

// lockForWrite returns the endpoint write-locked, creating it if create.
// It retries if the endpoint was removed between lookup and lock.
func (s *Store) lockForWrite(name string, create bool) *endpoint {
	for {
		ep := s.get(name)
		if ep == nil {
			if !create {
				return nil
			}
			s.mu.Lock()
			if ep = s.eps[name]; ep == nil {
				ep = newEndpoint(s, name)
				s.eps[name] = ep
				s.changed()
			}
			s.mu.Unlock()
		}
		ep.lock()
		if !ep.removed {
			return ep
		}
		ep.mu.Unlock()
	}
}

// rlock returns the endpoint read-locked, or nil if it is not held.
func (s *Store) rlock(name string) *endpoint {
	ep := s.get(name)
	if ep == nil {
		return nil
	}
	ep.mu.RLock()
	if ep.removed {
		ep.mu.RUnlock()
		return nil
	}
	return ep
}

// Append records one successful scrape of endpoint taken at t (Unix ms).
// Every sample becomes a point of the series (sample name, labels); samples
// with their own timestamp use it. Series present in the previous scrape but
// absent now get a staleness marker (derive.StaleNaN) at t, as Prometheus
// writes, so gauges stop instead of repeating old values. A nil scrape is an
// empty one.
//
// Scrapes must arrive in time order: one with t not after the endpoint's
// newest scrape is ignored, as is a point not after its series' last point
// (out of order or duplicate; within a scrape the first sample of a series
// wins). Append does not retain sc or anything reachable from it.
//
// same reports that sc held exactly the series of the endpoint's previous scrape, in the same order: the same
// names and label sets, so whatever is told from them alone (the flavor, the ranks) holds as it did. It is false
// for the endpoint's first scrape, for one after a scrape that failed or was ignored, and for one ignored itself.
func (s *Store) Append(endpoint string, t int64, sc *exposition.Scrape) (same bool) {
	ep := s.lockForWrite(endpoint, true)
	same = ep.append(t, sc)
	s.bytes.Add(ep.settle())
	ep.mu.Unlock()
	s.enforceCap()
	return same
}

// MarkDown records that the scrape of endpoint at t failed: every series of
// its last successful scrape gets a staleness marker at t, once. It is a
// no-op for unknown endpoints and for t not after the newest scrape.
func (s *Store) MarkDown(endpoint string, t int64) {
	ep := s.lockForWrite(endpoint, false)
	if ep == nil {
		return
	}
	ep.markDown(t)
	s.bytes.Add(ep.settle())
	ep.mu.Unlock()
	s.enforceCap()
}

// Bounds returns the time span of endpoint's history actually held: the
// first scrape at or after the retention cutoff that has not been trimmed
// for memory, and the newest scrape (successful or marked down) or, if later,
// the store's watermark (AdvanceWatermark), unless the endpoint's points have come
// with their own timestamps. ok is false if nothing is held.
// Points with explicit timestamps may lie outside.
func (s *Store) Bounds(endpoint string) (oldest, newest int64, ok bool) {
	ep := s.rlock(endpoint)
	if ep == nil {
		return 0, 0, false
	}
	defer ep.mu.RUnlock()
	return ep.bounds()
}

// Revision identifies the state of endpoint's past: it changes when the endpoint's sample names change, a sample
// with its own timestamp lands at or before an earlier scrape, anything lands at or before the watermark
// (AdvanceWatermark), and on Remove. Between two equal revisions, points
// are only appended after the newest scrape and trimmed from the oldest (see Bounds), so an answer computed from
// scrapes up to the newest then is still right for every instant whose reads Bounds still holds. 0: not held.
func (s *Store) Revision(endpoint string) uint64 {
	ep := s.rlock(endpoint)
	if ep == nil {
		return 0
	}
	defer ep.mu.RUnlock()
	return ep.rev
}

// Span is Revision and Bounds of endpoint as its last write published them together, read without its lock, as a
// query reads them for every endpoint it selects. Revision and Bounds read the endpoint under its lock, which the
// tests hold Span to.
func (s *Store) Span(endpoint string) (rev uint64, oldest, newest int64, ok bool) {
	ep := s.get(endpoint)
	if ep == nil {
		return 0, 0, 0, false
	}
	// The endpoint's last write published its revision and bounds together (publishSpan), as a read lock would
	// have read them.
	st := ep.span.Load()
	if st == nil {
		return 0, 0, 0, false
	}
	if !st.hasRows {
		return st.rev, 0, 0, false
	}
	newest = st.lastT
	if !st.ownTimes {
		newest = max(newest, s.watermark.Load())
	}
	return st.rev, st.oldest, newest, true
}

// Names returns the distinct sample names of the series endpoint holds,
// sorted.
func (s *Store) Names(endpoint string) []string {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil
	}
	defer ep.mu.RUnlock()
	names := make([]string, 0, len(ep.byName))
	for name := range ep.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// LabelValues returns the distinct non-empty values of label over the series
// endpoint holds, sorted.
func (s *Store) LabelValues(endpoint, label string) []string {
	ep := s.rlock(endpoint)
	if ep == nil {
		return nil
	}
	defer ep.mu.RUnlock()
	seen := make(map[string]struct{})
	for id := range ep.series {
		if x := ep.series[id].id; x != nil {
			if v := x.labels.Get(label); v != "" {
				seen[v] = struct{}{}
			}
		}
	}
	vals := make([]string, 0, len(seen))
	for v := range seen {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	return vals
}

// minTime is the "no point yet" time of a series.
const minTime = math.MinInt64

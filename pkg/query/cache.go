package query

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

// Cache keeps, per normalized query (its JSON without the legend, plus step, rate window and range length), the
// values of the steps that can no longer change, so a dashboard refresh evaluates only the steps after them and the
// few at the range's start whose reads reach history trimmed since. Direct-mode history only grows after each
// endpoint's newest scrape and shrinks from its oldest (Source.Bounds), and a step's value reads only its rate window
// (rates) or the newest scrape at or before it (gauges: a series missing from a scrape got a staleness marker there),
// so a step at or before every selected endpoint's newest time (its newest scrape, or the writer's watermark when
// later: in direct mode the scraper's word, between rounds, that nothing more is stamped before now) is final until
//   - the selected endpoints, or one's Revision, change (its sample names decide which series a measure reads), or
//   - trimming takes a point the step reads: a cached step t stays only while t − reach ≥ oldest held, where reach
//     is the rate window for formulas that read rates and 0 for gauges.
//
// Answers are identical to an uncached evaluation, series order included (TestCacheMatchesUncached). Memory is
// counted per entry (points, labels, keys), per endpoint name set and per shared label map (labelMap) against a
// byte budget; the least recently used entries go first, and an entry larger than a quarter of the budget is not
// kept. Identical queries running at once are evaluated once: the second waits and reads the first's steps.
type Cache struct {
	maxBytes int64

	mu      sync.Mutex
	bytes   int64
	entries map[string]*list.Element // of *cacheEntry; lru's front is the most recently used
	lru     list.List
	flights map[string]*flight
	names   map[string]cachedNames
	// setIDs numbers the distinct name sets names holds (nameSet).
	setIDs uint64
	bounds map[string]cachedBounds
	labels map[labelMapKey]*labelSet
	stats  CacheStats
}

// CacheStats counts what a Cache did, for tests and benchmarks.
type CacheStats struct {
	// Reused and Computed count steps (per query) taken from the cache and evaluated.
	Reused, Computed int64
	Entries          int
	Bytes            int64
}

// NewCache returns a cache holding at most maxBytes of counted memory.
func NewCache(maxBytes int64) *Cache {
	return &Cache{maxBytes: maxBytes, entries: map[string]*list.Element{}, flights: map[string]*flight{}, names: map[string]cachedNames{},
		bounds: map[string]cachedBounds{}, labels: map[labelMapKey]*labelSet{}}
}

// Stats reports the counters and the memory held.
func (k *Cache) Stats() CacheStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.stats
	s.Entries, s.Bytes = k.lru.Len(), k.bytes
	return s
}

// cacheEntry is one query's final steps first..last (multiples of step), per catalog output in canonical order.
type cacheEntry struct {
	key         string
	endpoints   []endpointNames // name, rev and oldest as when stored
	first, last int64
	piece
	bytes int64
	// dead bounds the points before each series' first that its array holds (piece.dead).
	dead int
	// slack is whether the room past each series' points (up to appendSlack steps, see concat) is this entry's
	// alone: no answer holds a point there. The next merge of the key takes it (claimSlack) and appends in place.
	slack atomic.Bool
}

// appendSlack is how many steps of room concat leaves past a merged series' points, so that the merges of the next
// refreshes that add a step append in place instead of copying the hour each time.
const appendSlack = 8

// claimSlack reports whether the entry's room past its points is free, and takes it: one merge appends there.
func (e *cacheEntry) claimSlack() bool { return e.slack.CompareAndSwap(true, false) }

// piece is an evaluation's series over some steps, per catalog output in canonical order, with each series'
// canonicalKey: the keys are built once, when the series is first evaluated, not at every merge.
type piece struct {
	groups [][]Output
	keys   [][]string
	// slack: the room past each series' points is this piece's to append into (a cached entry's, claimed).
	slack bool
	// dead bounds how many points each series' array holds before the piece's first: moved out of the range while
	// later points were appended in place (concat).
	dead int
}

// flight serializes evaluations of one key: turn holds a token while one runs.
type flight struct {
	turn    chan struct{}
	waiters int
}

// cachedNames is an endpoint's sample-name set at one revision; every query of a refresh reads it.
type cachedNames struct {
	rev   uint64
	set   map[string]bool
	bytes int64
	// hash and id identify the set's names: endpoints exposing the same names share one set and id.
	hash, id uint64
}

// cachedBounds is bucketBounds' answer for one query (its cacheKey) and signal over the range starting at from, with
// the history it read: per selected endpoint its revision and the part of the range it held (boundsReads). A query
// keeps the newest per signal, as it keeps one cacheEntry.
type cachedBounds struct {
	from   int64
	reads  []boundsRead
	bounds []float64
	bytes  int64
}

// boundsRead is what an endpoint held of the range bucketBounds read: under one revision, history only grows after
// newest and shrinks from oldest (Source), so the same revision and held span hold the same series.
type boundsRead struct {
	name   string
	rev    uint64
	lo, hi int64
	held   bool
}

// maxCachedBounds bounds how many bucketBounds answers a Cache keeps; past it they are all dropped, as they cost a
// refresh one reading of the bucket series' labels each.
const maxCachedBounds = 1024

// boundsReads is what bucketBounds of c reads, per selected endpoint.
func boundsReads(c *evalCtx) []boundsRead {
	out := make([]boundsRead, len(c.endpoints))
	for i, ep := range c.endpoints {
		out[i] = boundsRead{name: ep.name, rev: ep.rev, held: ep.held}
		if ep.held {
			out[i].lo, out[i].hi = max(c.from-c.window, ep.oldest), min(c.to, ep.newest)
		}
	}
	return out
}

// bucketBounds returns compute's answer for c and the signal, from an earlier evaluation that read the same history.
func (k *Cache) bucketBounds(c *evalCtx, sigID string, compute func() []float64) []float64 {
	key := cacheKey(c) + "/" + sigID
	reads := boundsReads(c)
	k.mu.Lock()
	if b, ok := k.bounds[key]; ok && b.from == c.from && slices.Equal(b.reads, reads) {
		k.mu.Unlock()
		return b.bounds
	}
	k.mu.Unlock()
	bounds := compute()
	b := cachedBounds{from: c.from, reads: reads, bounds: bounds, bytes: int64(len(key)) + 96 + 8*int64(len(bounds))}
	for _, r := range reads {
		b.bytes += int64(len(r.name)) + 48
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.bounds[key]; ok {
		k.bytes -= old.bytes
	} else if len(k.bounds) >= maxCachedBounds {
		k.dropBounds()
	}
	k.bounds[key] = b
	k.bytes += b.bytes
	k.evict()
	return bounds
}

// dropBounds forgets every kept bucketBounds answer; k.mu is held.
func (k *Cache) dropBounds() {
	for key, b := range k.bounds {
		delete(k.bounds, key)
		k.bytes -= b.bytes
	}
}

// labelMapKey names one of fetchName's label maps: an endpoint's series of one model and rank, with no other label
// kept.
type labelMapKey struct{ endpoint, model, rankLabel, rank string }

// maxLabelMaps bounds how many label maps a Cache keeps; past it they are all dropped, as each costs a query only
// one map made again.
const maxLabelMaps = 1 << 14

// labelMapBytes is what a kept label map of key counts: the key's strings, the map and a slot per label, and each
// grouping's key and reported labels (labelSet).
func labelMapBytes(key labelMapKey, set *labelSet) int64 {
	n := int64(len(key.endpoint)+len(key.model)+len(key.rankLabel)+len(key.rank)) + 64 + 48
	for name, v := range set.m {
		n += int64(len(name)+len(v)) + 48
	}
	for _, g := range set.by {
		n += int64(len(g.key)) + 16
		if len(g.labels) < len(set.m) { // its own map; the whole set's is shared
			n += 48 + 48*int64(len(g.labels))
		}
	}
	return n
}

// labelMap returns the label set kept for key, or keeps and returns build's. Every query of a refresh labels an
// engine's series with the same map, which inputs and answers only read (Output), so they share one, and the
// grouping keys made from it once.
func (k *Cache) labelMap(key labelMapKey, build func() map[string]string) *labelSet {
	k.mu.Lock()
	defer k.mu.Unlock()
	if m, ok := k.labels[key]; ok {
		return m
	}
	if len(k.labels) >= maxLabelMaps {
		k.dropLabelMaps()
	}
	set := newLabelSet(build())
	k.labels[key] = set
	k.bytes += labelMapBytes(key, set)
	k.evict()
	return set
}

// dropLabelMaps forgets every kept label map; k.mu is held.
func (k *Cache) dropLabelMaps() {
	for key, m := range k.labels {
		delete(k.labels, key)
		k.bytes -= labelMapBytes(key, m)
	}
}

// errNotCacheable stops merging when an output holds two series with one identity, which only an uncached
// evaluation can order.
var errNotCacheable = errors.New("two series share one identity")

// nameSet returns endpoint's names at rev, reading them through names only when rev is new, and the set's id:
// endpoints that expose the same names (a fleet runs a few releases) share one set under one id, so a query
// resolves a signal's name once per distinct set, not once per endpoint.
func (k *Cache) nameSet(endpoint string, rev uint64, names func(string) []string) (map[string]bool, uint64) {
	k.mu.Lock()
	if n, ok := k.names[endpoint]; ok && n.rev == rev && rev != 0 {
		k.mu.Unlock()
		return n.set, n.id
	}
	k.mu.Unlock()
	list := names(endpoint)
	n := cachedNames{rev: rev, hash: namesHash(list), bytes: int64(len(endpoint)) + 64}
	for _, s := range list {
		n.bytes += int64(len(s)) + 48 // string header and map slot
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, other := range k.names {
		if other.hash == n.hash && sameNames(other.set, list) {
			n.set, n.id = other.set, other.id
			break
		}
	}
	if n.set == nil {
		k.setIDs++
		n.set, n.id = nameSet(list), k.setIDs
	}
	if old, ok := k.names[endpoint]; ok {
		k.bytes -= old.bytes
	}
	k.names[endpoint] = n
	k.bytes += n.bytes
	k.evict()
	return n.set, n.id
}

// namesHash is a hash of a name list, to find an equal set quickly.
func namesHash(list []string) uint64 {
	h := fnv.New64a()
	for _, s := range list {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// sameNames reports whether set holds exactly the (distinct) names of list.
func sameNames(set map[string]bool, list []string) bool {
	if len(set) != len(list) {
		return false
	}
	for _, s := range list {
		if !set[s] {
			return false
		}
	}
	return true
}

// cacheKey is the normalized query: what decides its values, not how they are shown, and the range's length, so
// that a panel's hour and the diagnosis's last minutes of the same query keep an entry each.
func cacheKey(c *evalCtx) string {
	q := c.q
	q.LegendFormat = ""
	b, _ := json.Marshal(q)
	return strconv.FormatInt(c.step, 10) + "/" + strconv.FormatInt(c.window, 10) + "/" + strconv.FormatInt(c.to-c.from, 10) + "/" + string(b)
}

// eval answers c's outputs from the cache and the steps it lacks, then keeps the final steps.
func (k *Cache) eval(c *evalCtx, outputs []measure.Output) ([][]Output, error) {
	if len(c.endpoints) == 0 {
		return c.outputs(outputs)
	}
	key := cacheKey(c)
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	release, err := k.enter(ctx, key)
	if err != nil {
		return nil, err
	}
	defer release()

	reach := int64(0)
	if measure.ReadsRates(outputs) || measure.ReadsNode[*measure.Raw](outputs) {
		reach = c.window
	}
	k.mu.Lock()
	var cached *cacheEntry
	if el, ok := k.entries[key]; ok {
		cached = el.Value.(*cacheEntry)
		k.lru.MoveToFront(el)
	}
	k.mu.Unlock()

	lo, hi, ok := reusable(cached, c, reach)
	if ok && lo == c.from && hi == c.to {
		// Every step is held (a refresh that added no step): the entry answers as it is, nothing to merge or keep.
		k.mu.Lock()
		k.stats.Reused += (hi-lo)/c.step + 1
		k.mu.Unlock()
		return cached.view(lo, hi), nil
	}
	var pieces []piece
	computed := int64(0)
	segment := func(from, to int64) {
		if err != nil || from > to {
			return
		}
		s := c.segment(from, to)
		var done func()
		if done, err = admit(ctx, len(s.steps)); err != nil {
			return
		}
		defer done()
		var p piece
		if p, err = s.keyedOutputs(outputs); err == nil {
			pieces = append(pieces, p)
			computed += int64(len(s.steps))
		}
	}
	if ok {
		segment(c.from, lo-c.step)
		p := cached.span(lo, hi)
		// The entry's room is appended into only when its points come first and end where the entry's do, and while
		// what its arrays hold before the range stays within appendSlack steps.
		p.slack = len(pieces) == 0 && hi >= cached.last && p.dead <= appendSlack && cached.claimSlack()
		pieces = append(pieces, p)
		segment(hi+c.step, c.to)
	} else {
		segment(c.from, c.to)
	}
	if err != nil {
		return nil, err
	}
	merged, err := merge(pieces, len(outputs))
	if errors.Is(err, errNotCacheable) {
		if !ok {
			return pieces[0].groups, nil // the whole range, evaluated as without a cache
		}
		full := c.segment(c.from, c.to)
		full.budget = &readBudget{}
		done, err := admit(ctx, len(full.steps))
		if err != nil {
			return nil, err
		}
		defer done()
		return full.outputs(outputs)
	}
	k.mu.Lock()
	k.stats.Computed += computed
	if ok {
		k.stats.Reused += (hi-lo)/c.step + 1
	}
	k.mu.Unlock()
	k.store(key, c, merged)
	// The answer's readers may append: clipped, that copies, and the entry's room stays its own.
	for _, g := range merged.groups {
		for j := range g {
			g[j].Points = slices.Clip(g[j].Points)
		}
	}
	return merged.groups, nil
}

// enter waits for any evaluation of key in progress and returns the release of this one; a cancelled query stops
// waiting.
func (k *Cache) enter(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	f := k.flights[key]
	if f == nil {
		f = &flight{turn: make(chan struct{}, 1)}
		k.flights[key] = f
	}
	f.waiters++
	k.mu.Unlock()
	leave := func() {
		k.mu.Lock()
		if f.waiters--; f.waiters == 0 {
			delete(k.flights, key)
		}
		k.mu.Unlock()
	}
	select {
	case f.turn <- struct{}{}:
		return func() { <-f.turn; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// reusable is the span lo..hi of the entry's steps that c may take: same endpoints at the same revisions, inside
// c's range, and not reading what trimming has taken since.
func reusable(e *cacheEntry, c *evalCtx, reach int64) (lo, hi int64, ok bool) {
	if e == nil || len(e.endpoints) != len(c.endpoints) {
		return 0, 0, false
	}
	lo, hi = max(e.first, c.from), min(e.last, c.to)
	for i, was := range e.endpoints {
		now := c.endpoints[i]
		if was.name != now.name || was.rev != now.rev || !now.held {
			return 0, 0, false
		}
		if now.oldest != was.oldest {
			lo = max(lo, now.oldest+reach)
		}
	}
	// Steps are multiples of step from c.from, which the entry shares (same key, same alignment).
	if r := (lo - c.from) % c.step; r != 0 {
		lo += c.step - r
	}
	return lo, hi, lo <= hi
}

// segment is c restricted to the steps from..to, sharing its read budget and endpoints.
func (c *evalCtx) segment(from, to int64) *evalCtx {
	s := *c
	s.from, s.to, s.steps = from, to, derive.Steps(from, to, c.step)
	s.memo, s.rankCtx = map[measure.Node][]Output{}, nil
	return &s
}

// span returns the entry's series restricted to the steps lo..hi, with their keys.
func (e *cacheEntry) span(lo, hi int64) piece {
	out := piece{groups: make([][]Output, len(e.groups)), keys: make([][]string, len(e.groups)), dead: e.dead}
	for i, g := range e.groups {
		out.groups[i], out.keys[i] = make([]Output, 0, len(g)), make([]string, 0, len(g))
		for j, o := range g {
			a, b := pointRange(o.Points, lo, hi)
			out.dead = max(out.dead, e.dead+a)
			if a < b {
				o.Points = o.Points[a:b]
				out.groups[i], out.keys[i] = append(out.groups[i], o), append(out.keys[i], e.keys[i][j])
			}
		}
	}
	return out
}

// view is span for an answer that leaves the cache: points the caller cannot append into the entry's. Labels and
// points are the entry's, which an answer's readers never write (Output).
func (e *cacheEntry) view(lo, hi int64) [][]Output {
	out := e.span(lo, hi).groups
	for _, g := range out {
		for i := range g {
			g[i].Points = g[i].Points[:len(g[i].Points):len(g[i].Points)]
		}
	}
	return out
}

// pointRange is the index span of points with lo ≤ T ≤ hi.
func pointRange(pts []derive.Point, lo, hi int64) (int, int) {
	a, b := 0, len(pts)
	for a < b && pts[a].T < lo {
		a++
	}
	for b > a && pts[b-1].T > hi {
		b--
	}
	return a, b
}

// merge joins pieces covering consecutive step spans into one answer: per catalog output, each series' points in
// piece order, series in canonical order. The result owns its points, and shares each series' labels and key with
// its first piece (read-only, Output); each series' points fill their array exactly, so store can keep them as they
// are and an append by a reader copies.
func merge(pieces []piece, n int) (piece, error) {
	out := piece{groups: make([][]Output, n), keys: make([][]string, n)}
	for i := range n {
		for _, p := range pieces {
			for j := 1; j < len(p.keys[i]); j++ {
				if p.keys[i][j] == p.keys[i][j-1] { // sorted: one identity's series are adjacent
					return piece{}, errNotCacheable
				}
			}
		}
		if sameSeries(pieces, i) {
			out.groups[i], out.keys[i] = concat(pieces, i), pieces[0].keys[i]
			if pieces[0].slack {
				out.dead = pieces[0].dead
			}
			continue
		}
		index := map[string]int{}
		var at [][]int // per piece, the index in out.groups[i] of each of its series
		var total []int
		for _, p := range pieces {
			js := make([]int, len(p.groups[i]))
			for k, o := range p.groups[i] {
				key := p.keys[i][k]
				j, ok := index[key]
				if !ok {
					j = len(out.groups[i])
					index[key] = j
					out.groups[i] = append(out.groups[i], Output{Measure: o.Measure, Labels: o.Labels, Unit: o.Unit})
					total, out.keys[i] = append(total, 0), append(out.keys[i], key)
				}
				js[k] = j
				total[j] += len(o.Points)
			}
			at = append(at, js)
		}
		for j := range out.groups[i] {
			out.groups[i][j].Points = make([]derive.Point, 0, total[j])
		}
		for pi, p := range pieces {
			for k, o := range p.groups[i] {
				j := at[pi][k]
				out.groups[i][j].Points = append(out.groups[i][j].Points, o.Points...)
			}
		}
		sortByKeys(out.groups[i], out.keys[i])
	}
	return out, nil
}

// sameSeries reports whether every piece holds the same series, by key, in output i: a refresh's common case,
// merged by position.
func sameSeries(pieces []piece, i int) bool {
	for _, p := range pieces[1:] {
		if !slices.Equal(p.keys[i], pieces[0].keys[i]) {
			return false
		}
	}
	return true
}

// concat joins, by position, the points of pieces that hold the same series in output i. It appends into the first
// piece's room where it has it (slack) and else, joining a cached piece with new steps, leaves appendSlack steps of
// room past the joined points, so a refresh that adds a step mostly appends its point instead of copying the series'
// hour. A whole evaluation (one piece: a cold panel) gets no room: most cold answers are never refreshed.
func concat(pieces []piece, i int) []Output {
	room := appendSlack
	if len(pieces) == 1 {
		room = 0
	}
	out := make([]Output, len(pieces[0].groups[i]))
	for j, o := range pieces[0].groups[i] {
		total := 0
		for _, p := range pieces {
			total += len(p.groups[i][j].Points)
		}
		var pts []derive.Point
		if first := o.Points; pieces[0].slack && cap(first) >= total {
			pts = first
		} else {
			pts = make([]derive.Point, 0, total+room)
			pts = append(pts, first...)
		}
		for _, p := range pieces[1:] {
			pts = append(pts, p.groups[i][j].Points...)
		}
		out[j] = Output{Measure: o.Measure, Labels: o.Labels, Unit: o.Unit, Points: pts}
	}
	return out
}

// store keeps the steps of p that are final: at or before every selected endpoint's newest (Source.Bounds).
func (k *Cache) store(key string, c *evalCtx, p piece) {
	settled := c.endpoints[0].newest
	for _, ep := range c.endpoints {
		settled = min(settled, ep.newest)
	}
	if settled < c.from {
		return
	}
	last := c.to
	if settled < c.to {
		last = c.from + (settled-c.from)/c.step*c.step
	}
	e := &cacheEntry{key: key, first: c.from, last: last, endpoints: make([]endpointNames, len(c.endpoints)), dead: p.dead}
	e.bytes = int64(len(key)) + 256
	for i, ep := range c.endpoints {
		e.endpoints[i] = endpointNames{name: ep.name, rev: ep.rev, oldest: ep.oldest, held: ep.held}
		e.bytes += int64(len(ep.name)) + 64
	}
	e.groups, e.keys = make([][]Output, len(p.groups)), make([][]string, len(p.groups))
	whole := true // every series kept up to its last point: the room past them is nobody's but the entry's
	for i, g := range p.groups {
		// Sized for every series (a fleet's outputs are hundreds; grown by doubling they were copied ten times).
		e.groups[i], e.keys[i] = make([]Output, 0, len(g)), make([]string, 0, len(g))
		for j, o := range g {
			_, b := pointRange(o.Points, c.from, last)
			whole = whole && b == len(o.Points)
			if b == 0 {
				continue
			}
			// Points and labels are shared with the answer (merge made the points for it), which readers never write,
			// as with a view; the answer's points are clipped (eval), so an append to it copies.
			kept := Output{Measure: o.Measure, Unit: o.Unit, Labels: o.Labels, Points: o.Points[:b]}
			key := p.keys[i][j]
			e.groups[i], e.keys[i] = append(e.groups[i], kept), append(e.keys[i], key)
			// The key holds the measure's name and every label's name and value, so its length bounds theirs too: it
			// is counted once as itself and once for them, with a map slot per label. The points' array also holds
			// the room past them (concat) and, at most p.dead, points before them.
			e.bytes += 112 + int64(len(o.Unit)) + 16*int64(cap(kept.Points)+p.dead) + 2*int64(len(key)) + 48*int64(len(kept.Labels))
		}
	}
	e.slack.Store(whole)
	k.mu.Lock()
	defer k.mu.Unlock()
	if el, ok := k.entries[key]; ok {
		k.bytes -= el.Value.(*cacheEntry).bytes
		k.lru.Remove(el)
		delete(k.entries, key)
	}
	if e.bytes > k.maxBytes/4 {
		return
	}
	k.entries[key] = k.lru.PushFront(e)
	k.bytes += e.bytes
	k.evict()
}

// evict drops least recently used entries, then the bucket bounds, label maps and name sets, until the counted memory fits; k.mu is held.
func (k *Cache) evict() {
	for k.bytes > k.maxBytes && k.lru.Len() > 0 {
		el := k.lru.Back()
		e := el.Value.(*cacheEntry)
		k.lru.Remove(el)
		delete(k.entries, e.key)
		k.bytes -= e.bytes
	}
	if k.bytes > k.maxBytes {
		k.dropBounds()
		k.dropLabelMaps()
		for name, n := range k.names {
			delete(k.names, name)
			k.bytes -= n.bytes
		}
	}
}

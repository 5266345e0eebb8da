package history

import "slices"

// trimRetention drops the sealed blocks whose scrapes are all before cutoff.
// Points between a block's start and cutoff stay until the whole block
// expires (at most blockRows scrapes later); readers hide them.
func (ep *endpoint) trimRetention(cutoff int64) {
	n := 0
	for n < len(ep.blocks) && ep.blocks[n].ts[len(ep.blocks[n].ts)-1] < cutoff {
		n++
	}
	if n > 0 {
		ep.dropBlocks(n)
	}
}

// droppable reports whether the oldest sealed block may be dropped for
// memory: it must not hold the newest scrape.
func (ep *endpoint) droppable() bool {
	return len(ep.blocks) > 1 || len(ep.blocks) == 1 && len(ep.head.ts) > 0
}

// dropBlocks drops the n oldest sealed blocks and forgets the series left
// without points.
func (ep *endpoint) dropBlocks(n int) {
	for _, b := range ep.blocks[:n] {
		ep.blockBytes -= b.bytes
	}
	// The slice has a handful of entries, so shifting is cheaper than a ring.
	clear(ep.blocks[copy(ep.blocks, ep.blocks[n:]):])
	ep.blocks = ep.blocks[:len(ep.blocks)-n]
	oldest := ep.head.seq
	if len(ep.blocks) > 0 {
		oldest = ep.blocks[0].seq
	}
	for id := range ep.series {
		if sr := &ep.series[id]; sr.id != nil && !sr.live && sr.lastSeq < uint32(oldest) { // #nosec G115 -- sequence numbers are compared in their 32-bit form everywhere; 2^32 scrapes are 136 years at 1 s
			ep.forget(int32(id))
		}
	}
}

// floor is the retention cutoff: points before it are not returned.
func (ep *endpoint) floor() int64 {
	return ep.lastT - ep.st.retention
}

// bounds implements Store.Bounds.
func (ep *endpoint) bounds() (oldest, newest int64, ok bool) {
	if !ep.hasRows {
		return 0, 0, false
	}
	fl := ep.floor()
	newest = ep.lastT
	if !ep.ownTimes {
		newest = max(newest, ep.st.watermark.Load())
	}
	// Every query reads this for every endpoint it selects: the columns are searched in place, oldest first.
	for _, b := range ep.blocks {
		if t, ok := firstAtOrAfter(b.ts, fl); ok {
			return t, newest, true
		}
	}
	if t, ok := firstAtOrAfter(ep.head.ts, fl); ok {
		return t, newest, true
	}
	return ep.lastT, newest, true // unreachable: the newest row is >= floor
}

// firstAtOrAfter is the first of the ascending ts at or after t.
func firstAtOrAfter(ts []int64, t int64) (int64, bool) {
	if i, _ := slices.BinarySearch(ts, t); i < len(ts) {
		return ts[i], true
	}
	return 0, false
}

// enforceCap drops the oldest data until Bytes is under MaxBytes, taking it only from endpoints above their fair
// share (MaxBytes divided by the number of endpoints), oldest block first among them, so those endpoints lose
// history evenly and an endpoint that churns series or is simply bigger can never evict the history of one within
// its share. The block holding an endpoint's newest scrape is never dropped; when the endpoints above their share
// have nothing else, the largest other endpoint gives way (the cap holds), and when no endpoint has anything
// droppable, heads are sealed so that the next scrape of each makes its older scrapes droppable. Only one goroutine trims
// at a time; concurrent callers return at once, as the trimming one rechecks the total after every drop.
func (s *Store) enforceCap() {
	if s.maxBytes <= 0 || s.bytes.Load() <= s.maxBytes || !s.trimMu.TryLock() {
		return
	}
	defer s.trimMu.Unlock()
	for s.bytes.Load() > s.maxBytes {
		eps := s.snapshot()
		if len(eps) == 0 {
			return
		}
		share := s.maxBytes / int64(len(eps))
		var pick, fallback *endpoint
		var pickStart, fallbackSize int64
		for _, ep := range eps {
			ep.mu.RLock()
			if !ep.removed && ep.droppable() {
				if start := ep.blocks[0].ts[0]; ep.reported > share && (pick == nil || start < pickStart || start == pickStart && ep.name < pick.name) {
					pick, pickStart = ep, start
				}
				if fallback == nil || ep.reported > fallbackSize {
					fallback, fallbackSize = ep, ep.reported
				}
			}
			ep.mu.RUnlock()
		}
		if pick == nil {
			// The endpoints above their share are down to their newest scrapes: the cap still holds, so the
			// largest of the others gives way.
			pick = fallback
		}
		if pick == nil {
			s.cutHeads(eps)
			return
		}
		pick.lock()
		if !pick.removed && pick.droppable() {
			pick.dropBlocks(1)
			s.bytes.Add(pick.settle())
		}
		pick.mu.Unlock()
	}
}

// cutHeads seals every head of eps holding more than one scrape when nothing is droppable, so that the next scrape
// of each makes its older scrapes droppable. Only a cap too small for the heads alone gets here.
func (s *Store) cutHeads(eps []*endpoint) {
	for _, ep := range eps {
		ep.lock()
		if !ep.removed && len(ep.head.ts) > 1 {
			ep.sealHead()
			s.bytes.Add(ep.settle())
		}
		ep.mu.Unlock()
	}
}

// snapshot returns the endpoints held now.
func (s *Store) snapshot() []*endpoint {
	s.mu.RLock()
	eps := make([]*endpoint, 0, len(s.eps))
	for _, ep := range s.eps {
		eps = append(eps, ep)
	}
	s.mu.RUnlock()
	return eps
}

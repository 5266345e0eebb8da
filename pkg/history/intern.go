package history

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// ident is an interned series identity, shared by every endpoint exposing
// the same name and label set. It is immutable after creation except refs.
type ident struct {
	name   string
	labels exposition.Labels // cap == len, so appending copies
	hash   uint64
	refs   int32 // guarded by interner.mu
}

// symbol is an interned string with a reference count.
type symbol struct {
	s    string
	refs int32
}

// interner shares series identities and their strings store-wide. It is only
// consulted when an endpoint sees a series for the first time or forgets one,
// so its single mutex is not on the per-scrape path.
type interner struct {
	mu    sync.Mutex
	sets  map[uint64][]*ident
	strs  map[string]*symbol
	bytes *atomic.Int64 // the store's byte counter
}

// Size estimates used for Store.Bytes.
const (
	identSize  = 64 + 16 // struct, map slot
	symbolSize = 48      // struct, map slot, string header
	labelSize  = 32
)

// acquire returns the identity of (name, labels) with one more reference,
// copying name and labels if it is new.
func (in *interner) acquire(hash uint64, name string, labels exposition.Labels) *ident {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, id := range in.sets[hash] {
		if id.name == name && sameLabelSet(id.labels, labels) {
			id.refs++
			return id
		}
	}
	id := &ident{name: in.str(name), hash: hash, refs: 1}
	if len(labels) > 0 {
		id.labels = make(exposition.Labels, len(labels))
		for i, l := range labels {
			id.labels[i] = exposition.Label{Name: in.str(l.Name), Value: in.str(l.Value)}
		}
	}
	in.sets[hash] = append(in.sets[hash], id)
	in.bytes.Add(identSize + labelSize*int64(len(labels)))
	return id
}

// release drops one reference to id, forgetting it and its strings at zero.
func (in *interner) release(id *ident) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id.refs--; id.refs > 0 {
		return
	}
	set := in.sets[id.hash]
	for i, x := range set {
		if x == id {
			set[i] = set[len(set)-1]
			set[len(set)-1] = nil
			set = set[:len(set)-1]
			break
		}
	}
	if len(set) == 0 {
		delete(in.sets, id.hash)
	} else {
		in.sets[id.hash] = set
	}
	in.unstr(id.name)
	for _, l := range id.labels {
		in.unstr(l.Name)
		in.unstr(l.Value)
	}
	in.bytes.Add(-(identSize + labelSize*int64(len(id.labels))))
}

// str returns the interned copy of s with one more reference. The copy is
// made with strings.Clone so nothing of the caller's scrape is retained.
func (in *interner) str(s string) string {
	if sym := in.strs[s]; sym != nil {
		sym.refs++
		return sym.s
	}
	c := strings.Clone(s)
	in.strs[c] = &symbol{s: c, refs: 1}
	in.bytes.Add(symbolSize + int64(len(c)))
	return c
}

// unstr drops one reference to the interned string s.
func (in *interner) unstr(s string) {
	sym := in.strs[s]
	if sym == nil {
		return
	}
	if sym.refs--; sym.refs == 0 {
		delete(in.strs, s)
		in.bytes.Add(-(symbolSize + int64(len(s))))
	}
}

// sameLabelSet reports whether a and b hold the same labels, in any order.
// Label names within a set are unique (Parse rejects duplicates).
func sameLabelSet(a, b exposition.Labels) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		// Orders differ: fall back to lookups.
		for _, l := range a[i:] {
			if v, ok := b.Lookup(l.Name); !ok || v != l.Value {
				return false
			}
		}
		return true
	}
	return true
}

// sameOrdered reports whether a and b are equal label by label; it is the
// cheap check of the fast path, where the exposition order is unchanged.
func sameOrdered(a, b exposition.Labels) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hashSeries is seriesHash; tests replace it to force collisions.
var hashSeries = seriesHash

// seriesHash hashes a series identity independently of label order.
func seriesHash(name string, labels exposition.Labels) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	// Mix so that name and label hashes cannot cancel out.
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ labels.Hash()
}

package exposition

import (
	"slices"
	"strings"
)

// Label is one label pair of a sample.
type Label struct {
	Name, Value string
}

// Labels are a sample's labels in exposition order. Slices returned by Parse
// share one backing array but have no spare capacity, so appending copies.
type Labels []Label

// Get returns the value of the named label, or "" if absent.
func (ls Labels) Get(name string) string {
	for i := range ls {
		if ls[i].Name == name {
			return ls[i].Value
		}
	}
	return ""
}

// Lookup returns the value of the named label and whether it is present.
func (ls Labels) Lookup(name string) (string, bool) {
	for i := range ls {
		if ls[i].Name == name {
			return ls[i].Value, true
		}
	}
	return "", false
}

// Key returns a canonical string for the label set: `{a="x",b="y"}` with
// labels sorted by name and values escaped, or "" for no labels. Equal sets
// give equal keys whatever their exposition order, across scrapes and
// processes.
func (ls Labels) Key() string {
	return ls.key("")
}

// KeyWithout is Key for the set minus the named label (e.g. "le").
func (ls Labels) KeyWithout(name string) string {
	return ls.key(name)
}

// String returns Key, or "{}" for no labels.
func (ls Labels) String() string {
	if k := ls.Key(); k != "" {
		return k
	}
	return "{}"
}

func (ls Labels) key(skip string) string {
	var buf [16]int
	order := ls.sortedOrder(buf[:0])
	var b strings.Builder
	first := true
	for _, i := range order {
		l := &ls[i]
		if skip != "" && l.Name == skip {
			continue
		}
		if first {
			b.WriteByte('{')
			first = false
		} else {
			b.WriteByte(',')
		}
		if isLegacyLabelName(l.Name) {
			b.WriteString(l.Name)
		} else {
			writeQuoted(&b, l.Name)
		}
		b.WriteByte('=')
		writeQuoted(&b, l.Value)
	}
	if !first {
		b.WriteByte('}')
	}
	return b.String()
}

// Hash returns a 64-bit FNV-1a hash of the label set, independent of label
// order and stable across processes (no random seed), for use as a series key.
func (ls Labels) Hash() uint64 {
	return ls.hash("")
}

// HashWithout is Hash for the set minus the named label (e.g. "le").
func (ls Labels) HashWithout(name string) uint64 {
	return ls.hash(name)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (ls Labels) hash(skip string) uint64 {
	var buf [16]int
	h := uint64(fnvOffset)
	for _, i := range ls.sortedOrder(buf[:0]) {
		l := &ls[i]
		if skip != "" && l.Name == skip {
			continue
		}
		h = fnvString(h, l.Name)
		h = (h ^ 0xff) * fnvPrime
		h = fnvString(h, l.Value)
		h = (h ^ 0xff) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// sortedOrder returns the indexes of ls in name order; buf avoids an
// allocation for typical label counts.
func (ls Labels) sortedOrder(buf []int) []int {
	for i := range ls {
		buf = append(buf, i)
	}
	sorted := true
	for i := 1; i < len(ls); i++ {
		if ls[i-1].Name > ls[i].Name {
			sorted = false
			break
		}
	}
	if !sorted {
		slices.SortStableFunc(buf, func(a, b int) int { return strings.Compare(ls[a].Name, ls[b].Name) })
	}
	return buf
}

// equalWithout reports whether a and b are the same set, ignoring label skip.
// Exposition order is tried first because it is nearly always shared.
func equalWithout(a, b Labels, skip string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i].Name == skip {
			i++
		}
		for j < len(b) && b[j].Name == skip {
			j++
		}
		if i == len(a) || j == len(b) {
			if i == len(a) && j == len(b) {
				return true
			}
			break
		}
		if a[i] != b[j] {
			break
		}
		i++
		j++
	}
	na, nb := 0, 0
	for _, l := range a {
		if l.Name != skip {
			na++
		}
	}
	for _, l := range b {
		if l.Name != skip {
			nb++
		}
	}
	if na != nb {
		return false
	}
	if na > 16 {
		// Avoid O(n²) on absurd label sets.
		return a.hash(skip) == b.hash(skip) && a.key(skip) == b.key(skip)
	}
	for _, l := range a {
		if l.Name == skip {
			continue
		}
		if v, ok := b.Lookup(l.Name); !ok || v != l.Value {
			return false
		}
	}
	return true
}

func isLegacyLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

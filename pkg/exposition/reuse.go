package exposition

import (
	"slices"
	"sync"
)

// A data source parses every endpoint's body every few seconds, and each parse used to make a sample array and a
// label array sized for its whole body, the maps that intern its strings and resolve its names, and its families'
// tables: at 256 endpoints that was most of all the plugin allocated, which is what paces its collector. A caller
// done with a Scrape releases it, and a later parse reuses what it is stored in; what never leaves the parser is
// reused without asking.

// held is what a Scrape from Parse is stored in, the part written of each: its samples, their labels, and (when
// Parse made them for it rather than handing over its own) its families and their index.
type held struct {
	samples  []Sample
	labels   []Label
	families []Family
	index    map[string]int32
}

// scratch is what a parser uses and no Scrape keeps; the parser embeds it, so these are its fields.
type scratch struct {
	strs       map[string]string // interned label names and values
	names      map[string]int32  // sample/metadata name -> index in res
	normalized map[string]string // label value -> NormalizeFloatLabel of it, interned; made at the first float label
	famIndex   map[string]int32  // nil when the last Scrape took it (finish)
	res        []resolved
	meta       []famMeta
	runs       []run
	fams       []Family // nil when the last Scrape took it (finish)
}

var (
	heldPool    sync.Pool // *held, given back by Scrape.Release
	scratchPool sync.Pool // *scratch, given back when Parse returns
)

// maxReusedEntries is the most entries a map or table may have held, and maxReusedSamples the most samples an array
// may have room for, and still be reused: a body far larger than a vLLM exposition (a DP8 server's is about 5 000
// samples) leaves what it was parsed into to the collector rather than to every later parse.
const (
	maxReusedEntries = 1 << 14
	maxReusedSamples = 1 << 16
)

// takeHeld returns released storage with room for samples and labels entries, or new storage.
func takeHeld(samples, labels int) *held {
	if h, ok := heldPool.Get().(*held); ok {
		if cap(h.samples) >= samples && cap(h.labels) >= labels {
			return h
		}
		// Too small for this body: a larger one's, released, replaces it.
	}
	return &held{samples: make([]Sample, 0, samples), labels: make([]Label, 0, labels)}
}

// takeScratch returns a parser's empty maps and tables.
func takeScratch() *scratch {
	if s, ok := scratchPool.Get().(*scratch); ok {
		return s
	}
	return &scratch{strs: make(map[string]string, 256), names: make(map[string]int32, 256)}
}

// giveScratch empties s for the next parse, unless a map or table grew past maxReusedEntries.
func giveScratch(s *scratch) {
	if max(len(s.strs), len(s.names), len(s.normalized), len(s.famIndex), len(s.res), len(s.fams)) > maxReusedEntries {
		return
	}
	clear(s.strs)
	clear(s.names)
	clear(s.normalized)
	clear(s.famIndex)
	clear(s.res)  // their names
	clear(s.fams) // their names and samples
	s.res, s.meta, s.runs, s.fams = s.res[:0], s.meta[:0], s.runs[:0], s.fams[:0]
	scratchPool.Put(s)
}

// Release gives what the Scrape is stored in to a later Parse, and empties the Scrape. Call it only when nothing
// reads the Scrape any more, its families, their samples or the samples' Labels slices (their strings may be kept:
// they are never reused). A Scrape from anywhere but Parse, or released already, is left as it is.
func (s *Scrape) Release() {
	h := s.held
	if h == nil {
		return
	}
	s.held, s.Families, s.index = nil, nil, nil
	if cap(h.samples) > maxReusedSamples || cap(h.labels) > 4*maxReusedSamples || len(h.families) > maxReusedEntries {
		return
	}
	// Cleared, so that pooled storage holds nothing of this body.
	clear(h.samples)
	clear(h.labels)
	clear(h.families)
	clear(h.index)
	h.samples, h.labels, h.families = h.samples[:0], h.labels[:0], h.families[:0]
	heldPool.Put(h)
}

// Clone returns a copy of the Scrape that shares nothing with it but strings, so it outlives the Scrape's Release
// (a Recorder that keeps what it is given keeps a clone); Clone of nil is nil.
func (s *Scrape) Clone() *Scrape {
	if s == nil {
		return nil
	}
	out := &Scrape{Format: s.Format}
	for _, f := range s.Families {
		f.Samples = slices.Clone(f.Samples)
		for i := range f.Samples {
			f.Samples[i].Labels = slices.Clone(f.Samples[i].Labels)
		}
		out.Add(f)
	}
	return out
}

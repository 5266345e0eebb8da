package exposition

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/internal/proctest"
)

// TestReleasedArraysServeTheNextParse parses every fixture after every other one was parsed and released, and checks
// each answer against the fixture's own parse made before anything was released: a reused array or map carries
// nothing of the body before. A released scrape is empty.
func TestReleasedArraysServeTheNextParse(t *testing.T) {
	bodies := fixtures(t)
	opts := []ParseOptions{{}, {NormalizeFloatLabels: true, Keep: func(f string) bool { return strings.HasPrefix(f, "vllm") }}}
	for _, o := range opts {
		want := map[string][]Family{}
		for name, b := range bodies {
			sc, err := Parse(b, o)
			if err != nil {
				t.Fatal(name, err)
			}
			want[name] = sc.Clone().Families
		}
		for before, b0 := range bodies {
			for name, b := range bodies {
				sc, err := Parse(b0, o)
				if err != nil {
					t.Fatal(before, err)
				}
				sc.Release()
				if sc.Families != nil || sc.Family("vllm:num_requests_running") != nil {
					t.Fatalf("%s: a released scrape still has families", before)
				}
				got, err := Parse(b, o)
				if err != nil {
					t.Fatal(name, err)
				}
				if d := firstDifference(want[name], got.Families); d != "" {
					t.Fatalf("%s parsed after %s was released differs from its own parse: %s", name, before, d)
				}
				got.Release()
			}
		}
	}
}

// TestReleasedArraysHoldNoStrings checks that the storage a scrape gives back is cleared, to its capacity, so a pool
// of it keeps no body's strings alive.
func TestReleasedArraysHoldNoStrings(t *testing.T) {
	b := fixtures(t)["synthetic_v1_8engines_full.txt"]
	opts := ParseOptions{Keep: func(f string) bool { return strings.HasPrefix(f, "vllm") }} // families made for the scrape
	// The race detector's pools drop some of what they are given: a few tries.
	for range 20 {
		sc, err := Parse(b, opts)
		if err != nil {
			t.Fatal(err)
		}
		sc.Release()
		a, ok := heldPool.Get().(*held)
		if !ok {
			continue
		}
		if len(a.samples) != 0 || len(a.labels) != 0 || len(a.families) != 0 || len(a.index) != 0 {
			t.Fatalf("released storage holds %d samples, %d labels, %d families and %d names", len(a.samples), len(a.labels), len(a.families), len(a.index))
		}
		for _, f := range a.families[:cap(a.families)] {
			if !reflect.ValueOf(f).IsZero() {
				t.Fatalf("a released family table still holds %q", f.Name)
			}
		}
		for _, s := range a.samples[:cap(a.samples)] {
			if !reflect.ValueOf(s).IsZero() {
				t.Fatalf("a released sample array still holds %+v", s)
			}
		}
		for _, l := range a.labels[:cap(a.labels)] {
			if l != (Label{}) {
				t.Fatalf("a released label array still holds %+v", l)
			}
		}
		return
	}
	t.Fatal("no parse released its storage in 20 tries")
}

// TestReleaseHalvesWhatAParseAllocates parses a DP8 server's body as the scraper does, releasing each scrape and
// not, and checks that reusing what a scrape is stored in saves at least half of what a parse allocates (about 95 %
// here; less under the race detector, whose pools drop a quarter of what they are given).
func TestReleaseHalvesWhatAParseAllocates(t *testing.T) {
	b := fixtures(t)["synthetic_v1_8engines_full.txt"]
	opts := ParseOptions{NormalizeFloatLabels: true, Keep: func(f string) bool { return strings.HasPrefix(f, "vllm") }}
	const n = 40
	// allocating parses n times and returns how many bytes that allocated.
	allocating := func(release bool) uint64 {
		a0 := proctest.HeapAllocated()
		for range n {
			sc, err := Parse(b, opts)
			if err != nil {
				t.Fatal(err)
			}
			if release {
				sc.Release()
			}
		}
		return proctest.HeapAllocated() - a0
	}
	kept, released := allocating(false), allocating(true)
	t.Logf("a parse of %d bytes allocates %d bytes, %d reusing a released scrape's storage", len(b), kept/n, released/n)
	if released*2 > kept {
		t.Fatalf("parses whose scrapes were released allocated %d bytes each, more than half the %d of those kept", released/n, kept/n)
	}
}

// firstDifference describes the first family or sample where got differs from want ("" if none); values are
// compared by their bits, so that NaN equals NaN.
func firstDifference(want, got []Family) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d families, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Name != g.Name || w.Help != g.Help || w.Type != g.Type || w.Unit != g.Unit || len(w.Samples) != len(g.Samples) {
			return fmt.Sprintf("family %q (%d samples), want %q (%d)", g.Name, len(g.Samples), w.Name, len(w.Samples))
		}
		for j := range w.Samples {
			ws, gs := w.Samples[j], g.Samples[j]
			if ws.Name != gs.Name || !slices.Equal(ws.Labels, gs.Labels) || math.Float64bits(ws.Value) != math.Float64bits(gs.Value) ||
				ws.TimestampMs != gs.TimestampMs || ws.HasTimestamp != gs.HasTimestamp {
				return fmt.Sprintf("%#v, want %#v", gs, ws)
			}
		}
	}
	return ""
}

package vllm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestBuckets125 checks vLLM's build_1_2_5_buckets, e.g. 14 bounds at max_model_len 32768.
func TestBuckets125(t *testing.T) {
	cases := []struct {
		max  int
		want int
		last float64
	}{{100, 7, 100}, {32768, 14, 20000}, {40960, 14, 20000}, {131072, 16, 100000}}
	for _, c := range cases {
		b := Buckets125(c.max)
		if len(b) != c.want || b[len(b)-1] != c.last {
			t.Errorf("Buckets125(%d) = %v, want %d bounds ending at %v", c.max, b, c.want, c.last)
		}
	}
}

// TestEveryNameHasProvenance fails when a name the catalog reads has no provenance row: no upstream file, or neither
// a release range nor an explicit unreleased marker.
func TestEveryNameHasProvenance(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Signals {
		for _, n := range s.Names {
			if seen[n] {
				continue
			}
			seen[n] = true
			o, ok := Provenance(n)
			switch {
			case !ok:
				t.Errorf("%s (signal %s) has no provenance row", n, s.ID)
			case o.Project == "" || o.File == "":
				t.Errorf("%s: no upstream project and file", n)
			case o.First == "" && o.Unreleased == "":
				t.Errorf("%s: no release range and no unreleased marker", n)
			}
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d names read from Signals", len(seen))
	}
}

// TestOtherFamiliesNameTagsRead fails when a row of another project has no release range and no unreleased marker,
// or names a release that is not among the tags read of its project (OtherReleases), or ends before it begins.
func TestOtherFamiliesNameTagsRead(t *testing.T) {
	for _, f := range OtherFamilies {
		if f.Project == ProjectVLLM {
			continue
		}
		rel, ok := OtherReleases[f.Project]
		switch {
		case !ok || rel.Where == "":
			t.Errorf("%s: project %s has no tags read", f.Name, f.Project)
		case f.Unreleased != "":
			if f.First != "" || f.Last != "" {
				t.Errorf("%s: unreleased yet has releases %q–%q", f.Name, f.First, f.Last)
			}
		case !slices.Contains(rel.Tags, f.First):
			t.Errorf("%s: first release %q is not a tag read of %s", f.Name, f.First, f.Project)
		case f.Last != "" && !slices.Contains(rel.Tags, f.Last):
			t.Errorf("%s: last release %q is not a tag read of %s", f.Name, f.Last, f.Project)
		case f.Last != "" && CompareProjectReleases(f.Project, f.First, f.Last) > 0:
			t.Errorf("%s: releases %s–%s end before they begin", f.Name, f.First, f.Last)
		}
	}
}

// TestSignalsListsEverySignal parses catalog.go and fails when a Signal variable is missing from Signals.
func TestSignalsListsEverySignal(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "catalog.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if i >= len(spec.Values) {
				continue
			}
			switch v := spec.Values[i].(type) {
			case *ast.CompositeLit:
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Signal" {
					declared = append(declared, name.Name)
				}
				if arr, ok := v.Type.(*ast.ArrayType); ok && name.Name == "Signals" {
					if id, ok := arr.Elt.(*ast.Ident); ok && id.Name == "Signal" {
						for _, e := range v.Elts {
							if id, ok := e.(*ast.Ident); ok {
								listed[id.Name] = true
							}
						}
					}
				}
			}
		}
		return true
	})
	if len(declared) < 90 {
		t.Fatalf("found only %d Signal variables in catalog.go", len(declared))
	}
	for _, d := range declared {
		if !listed[d] {
			t.Errorf("%s is not in Signals", d)
		}
	}
}

// TestReadsOnlyTheAPIServerFamiliesListed: the scrape filter keeps the API server's request counter, duration
// histogram and process collector families by exact name, and no other http_ or process_ family.
func TestReadsOnlyTheAPIServerFamiliesListed(t *testing.T) {
	for name, want := range map[string]bool{
		"http_requests_total": true, "http_requests": true, "http_request_duration_seconds": true,
		"http_request_duration_seconds_bucket": true, "http_request_duration_seconds_sum": true,
		"process_cpu_seconds_total": true, "process_resident_memory_bytes": true, "process_open_fds": true,
		"process_start_time_seconds": true, "vllm:num_requests_running": true,
		"http_request_duration_highr_seconds_bucket": false, "http_request_size_bytes": false, "http_requests_created": false,
		"process_max_fds": false, "process_virtual_memory_bytes": false, "python_gc_objects_collected_total": false,
		"http_requests_total_extra": false,
	} {
		if got := ReadsFamily(name); got != want {
			t.Errorf("ReadsFamily(%q) = %v, want %v", name, got, want)
		}
	}
}

package vllm

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// scanNames and scanLabelValues are ScrapeExposed's answers the plain way, one look at every sample.
func scanNames(sc *exposition.Scrape) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range sc.Families {
		for _, s := range f.Samples {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func scanLabelValues(sc *exposition.Scrape, prefix, label string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range sc.Families {
		for _, s := range f.Samples {
			if v, ok := s.Labels.Lookup(label); ok && strings.HasPrefix(s.Name, prefix) && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestScrapeExposedMatchesASampleScan holds ScrapeExposed, which skips whole families by their names, to a look at
// every sample, on every fixture and the prefixes and labels detection asks for, and on prefixes longer than a
// family's name (a family "vllm" whose samples are "vllm:…" could not be skipped by its name).
func TestScrapeExposedMatchesASampleScan(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/fixtures/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	bodies := map[string][]byte{"short family names": []byte("vllm 1\nvllm_x{engine=\"3\"} 2\nv{engine=\"4\"} 1\n# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\",engine=\"5\"} 1\nvllm:h_bucket{le=\"+Inf\",engine=\"5\"} 1\nvllm:h_count{engine=\"5\"} 1\nvllm:h_sum{engine=\"5\"} 1\n")}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(p)] = b
	}
	prefixes := append([]string{VLLMPrefix, AscendPrefix, DynamoComponentPrefix, DynamoFrontendPrefix, "", "v", "vllm_", "vllm:h_b"}, RayPrefixes...)
	labels := []string{RouterLabel, PIDLabel, "engine", "dp", "dp_rank", RayRankLabel, "le", "model_name"}
	for name, b := range bodies {
		sc, err := exposition.Parse(b, exposition.ParseOptions{})
		if err != nil {
			t.Fatal(name, err)
		}
		e := ScrapeExposed{sc}
		if got, want := e.Names(), scanNames(sc); !slices.Equal(got, want) {
			t.Errorf("%s: names %q, want %q", name, got, want)
		}
		for _, p := range prefixes {
			for _, l := range labels {
				if got, want := e.LabelValues(p, l), scanLabelValues(sc, p, l); !slices.Equal(got, want) {
					t.Errorf("%s: values of %s under %q: %q, want %q", name, l, p, got, want)
				}
			}
		}
	}
}

// BenchmarkDetect tells the flavor of a DP8 server's scrape, as the scraper does after every scrape.
func BenchmarkDetect(b *testing.B) {
	body, err := os.ReadFile("../../testdata/fixtures/synthetic_v1_8engines_full.txt")
	if err != nil {
		b.Fatal(err)
	}
	sc, err := exposition.Parse(body, exposition.ParseOptions{Keep: ReadsFamily, NormalizeFloatLabels: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := Detect(ScrapeExposed{sc}); d.Flavor != FlavorV1 {
			b.Fatalf("detected %v", d.Flavor)
		}
	}
}

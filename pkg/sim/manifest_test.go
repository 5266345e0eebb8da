package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// manifest is one ../shared/reference/vllm-families/<tag>.json: every family that tag's own metrics code declares,
// under the configurations it was run with.
type manifest struct {
	Tag            string                    `json:"vllm_tag"`
	Configurations map[string]map[string]any `json:"configurations"`
	Families       map[string]struct {
		Type       string    `json:"type"`
		Labelnames []string  `json:"labelnames"`
		Buckets    []float64 `json:"buckets"`
		DeclaredIn []string  `json:"declared_in"`
	} `json:"families"`
}

// manifestRuns says, per manifest tag, which simulated release speaks it and how each of its configurations is
// simulated. A configuration the manifest lists and this table lacks fails the test.
var manifestRuns = map[string]struct {
	release string
	configs map[string]func(*Config)
}{
	"v0.6.6": {"0.6", map[string]func(*Config){
		"v0-basic":          func(c *Config) {},
		"v0-no-frontend-mp": func(c *Config) {},
	}},
	"v0.10.2": {"0.10", map[string]func(*Config){
		"v1-0.10-deprecated-names": func(c *Config) { c.Engines = 4 },
		"v1-0.10-spec-dp1":         func(c *Config) { c.SpecTokens = 3 },
	}},
	"v0.11.0": {"0.11", map[string]func(*Config){
		"v1-multi-apiserver-pid": func(c *Config) {
			c.Engines, c.APIServerProcesses, c.PIDLabel, c.SpecTokens = 2, 4, true, 3
		},
	}},
	"v0.20.1": {"0.20", map[string]func(*Config){
		"v1-lora-mfu": func(c *Config) { c.LoRAAdapters, c.MaxLoRA, c.MFU = 3, 4, true },
		"v1-newest-dp4-imbalanced": func(c *Config) {
			c.Engines, c.APIServerProcesses, c.SpecTokens, c.Routing = 4, 4, 3, "skewed"
		},
		"v1-newest-restart": func(c *Config) { c.Engines, c.SpecTokens = 2, 3 },
		"v1-offload-residency": func(c *Config) {
			c.KVOffloadGB, c.KVCacheMetrics, c.ExternalPrefixHitRate = 16, true, 0.3
		},
		"v1-pd-decode":  func(c *Config) { c.KVRole = KVRoleDecode },
		"v1-pd-prefill": func(c *Config) { c.KVRole = KVRolePrefill },
		"v1-sleeping": func(c *Config) {
			c.Engines, c.SleepLevel, c.SleepCycle = 2, 1, Duration(2*time.Minute)
		},
	}},
}

// sharedDir finds ../shared beside the repository root (CI clones the repository into a folder of its own with a
// copy of shared/ next to it). Outside CI a missing copy skips the test; under CI=true it fails.
func sharedDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for i := 0; i < 32; i++ {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "reference", "vllm-families")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the vLLM family manifests are missing under CI: %v (CI must put shared/ beside the repository)", err)
		}
		t.Skipf("no %s beside the repository (%v): the manifest comparison needs shared/reference/vllm-families", dir, err)
	}
	return dir
}

// TestReleasesMatchManifests runs every simulated release that has a manifest under each configuration the manifest
// lists, and fails on any family the release declares and the simulator lacks, any it emits that the release does
// not declare, and any difference in type, label names or buckets.
func TestReleasesMatchManifests(t *testing.T) {
	dir := sharedDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "v*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	for _, file := range files {
		var m manifest
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		run, ok := manifestRuns[m.Tag]
		if !ok {
			t.Errorf("%s: no simulated release for vLLM %s", file, m.Tag)
			continue
		}
		cfgNames := slices.Sorted(func(yield func(string) bool) {
			for k := range m.Configurations {
				if !yield(k) {
					return
				}
			}
		})
		for _, cfgName := range cfgNames {
			t.Run(m.Tag+"/"+cfgName, func(t *testing.T) {
				mod, ok := run.configs[cfgName]
				if !ok {
					t.Fatalf("configuration %s has no simulated counterpart", cfgName)
				}
				cfg := testConfig(func(c *Config) {
					c.VLLMVersion = run.release
					if rel, _ := vllm.ResolveSimRelease(run.release); vllm.V0Release(rel) {
						c.Flavor = FlavorV0
					}
					c.QPS = 6
					mod(c)
				})
				f := newTestFleet(t, cfg)
				f.Advance(10 * time.Minute)
				text := render(t, f)
				got := declaredFamilies(parse(t, text), text)
				want := map[string]familyShape{}
				for name, fam := range m.Families {
					if slices.Contains(fam.DeclaredIn, cfgName) {
						want[name] = familyShape{typ: fam.Type, labels: sortedCopy(fam.Labelnames), buckets: fam.Buckets, seen: true}
					}
				}
				for _, d := range diffFamilies(want, got) {
					t.Error(d)
				}
			})
		}
	}
}

// familyShape is what the manifests record of a family: type, label names and bucket bounds. seen is false for a
// family the exposition prints without any series, whose labels and buckets it cannot show.
type familyShape struct {
	typ     string
	labels  []string
	buckets []float64
	seen    bool
}

// declaredFamilies reads the vllm: families of an exposition as prometheus_client names them: counters without
// _total, the _created companions dropped, label names without le and the multiprocess pid. A family printed with
// its TYPE line and no series (a labelled metric without children yet) counts as declared, its labels unseen.
func declaredFamilies(fams map[string]*dto.MetricFamily, text string) map[string]familyShape {
	out := map[string]familyShape{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" || !strings.HasPrefix(f[2], "vllm:") {
			continue
		}
		if _, ok := fams[f[2]]; ok || strings.HasSuffix(f[2], "_created") {
			continue
		}
		name := f[2]
		if f[3] == "counter" {
			name = strings.TrimSuffix(name, "_total")
		}
		out[name] = familyShape{typ: f[3]}
	}
	for name, fam := range fams {
		if !strings.HasPrefix(name, "vllm:") {
			continue
		}
		if base, ok := strings.CutSuffix(name, "_created"); ok && fam.GetType() == dto.MetricType_GAUGE {
			if _, isCounter := fams[base+"_total"]; isCounter {
				continue
			}
			if _, isHist := fams[base]; isHist {
				continue
			}
		}
		s := familyShape{}
		switch fam.GetType() {
		case dto.MetricType_COUNTER:
			s.typ, name = "counter", strings.TrimSuffix(name, "_total")
		case dto.MetricType_HISTOGRAM:
			s.typ = "histogram"
		case dto.MetricType_GAUGE:
			s.typ = "gauge"
		default:
			s.typ = strings.ToLower(fam.GetType().String())
		}
		labels := map[string]bool{}
		for _, m := range fam.GetMetric() {
			s.seen = true
			for _, l := range m.GetLabel() {
				if l.GetName() != "pid" {
					labels[l.GetName()] = true
				}
			}
			if h := m.GetHistogram(); h != nil && s.buckets == nil {
				for _, b := range h.GetBucket() {
					if !math.IsInf(b.GetUpperBound(), 1) {
						s.buckets = append(s.buckets, b.GetUpperBound())
					}
				}
			}
		}
		for l := range labels {
			s.labels = append(s.labels, l)
		}
		sort.Strings(s.labels)
		out[name] = s
	}
	return out
}

// diffFamilies lists every difference between the families a release declares and those the simulator emits.
func diffFamilies(want, got map[string]familyShape) []string {
	var out []string
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	}) {
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inGot:
			out = append(out, fmt.Sprintf("missing: %s (%s %v) is declared by the release, not emitted by the simulator", n, w.typ, w.labels))
		case !inWant:
			out = append(out, fmt.Sprintf("extra: %s (%s %v) is emitted by the simulator, not declared by the release", n, g.typ, g.labels))
		case w.typ != g.typ:
			out = append(out, fmt.Sprintf("type: %s is a %s in the release, a %s in the simulator", n, w.typ, g.typ))
		case !g.seen:
			// Declared without a series (a lazily created child): its labels and buckets do not show.
		case !slices.Equal(w.labels, g.labels):
			out = append(out, fmt.Sprintf("labels: %s has %v in the release, %v in the simulator", n, w.labels, g.labels))
		case w.typ == "histogram" && !slices.Equal(w.buckets, g.buckets):
			out = append(out, fmt.Sprintf("buckets: %s has %v in the release, %v in the simulator", n, w.buckets, g.buckets))
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// TestReleasesMatchTable runs every release the simulator speaks with every condition met (spec decoding, LoRA, NIXL,
// offloading, residency, the NaN check) and fails unless it emits exactly the vllm: families the provenance table
// gives that release, with the table's types, label names and buckets: the releases without a manifest (0.13, 0.16,
// main) are held to the table the way the others are held to vLLM's own code.
func TestReleasesMatchTable(t *testing.T) {
	kinds := map[vllm.Kind]string{vllm.Gauge: "gauge", vllm.Counter: "counter", vllm.Histogram: "histogram"}
	for _, r := range vllm.SimReleases {
		t.Run(r.Short, func(t *testing.T) {
			cfg := testConfig(func(c *Config) {
				c.VLLMVersion, c.QPS = r.Short, 6
				if vllm.V0Release(r.Tag) {
					c.Flavor = FlavorV0
					return
				}
				c.Engines, c.SpecTokens, c.LoRAAdapters, c.KVRole, c.KVOffloadGB = 2, 2, 2, KVRoleDecode, 8
				c.ExternalPrefixHitRate, c.KVCacheMetrics, c.NaNLogitsRate = 0.3, true, 0.01
			})
			f := newTestFleet(t, cfg)
			f.Advance(10 * time.Minute)
			text := render(t, f)
			got := declaredFamilies(parse(t, text), text)
			want := map[string]familyShape{}
			for _, fam := range vllm.FamiliesAt(r.Tag, cfg.registers, false) {
				want[fam.Name] = familyShape{typ: kinds[fam.Type], labels: sortedCopy(fam.LabelsAt(r.Tag)),
					buckets: fam.BucketsAt(cfg.MaxModelLen), seen: true}
			}
			if len(want) < 25 {
				t.Fatalf("the table gives %s only %d families", r.Tag, len(want))
			}
			for _, d := range diffFamilies(want, got) {
				t.Error(d)
			}
		})
	}
}

// TestHTTPFamiliesFollowTheRelease: vLLM mounts the HTTP instrumentator from the release the provenance table gives
// (0.8.3): a simulated 0.6 server has no http_ family, a 0.20 one the request counter and the duration histogram.
func TestHTTPFamiliesFollowTheRelease(t *testing.T) {
	for _, c := range []struct {
		args []func(*Config)
		want bool
	}{
		{[]func(*Config){func(c *Config) { c.Flavor, c.VLLMVersion = FlavorV0, "0.6" }}, false},
		{[]func(*Config){func(c *Config) { c.VLLMVersion = "0.20" }}, true},
	} {
		mods := c.args
		cfg := testConfig(func(c *Config) {
			c.QPS = 6
			for _, m := range mods {
				m(c)
			}
		})
		f := newTestFleet(t, cfg)
		f.Advance(5 * time.Minute)
		fams := parse(t, render(t, f))
		_, counter := fams["http_requests_total"]
		_, hist := fams["http_request_duration_seconds"]
		if counter != c.want || hist != c.want {
			t.Errorf("%s: http_requests_total %v, http_request_duration_seconds %v, want %v", cfg.VLLMVersion, counter, hist, c.want)
		}
	}
}

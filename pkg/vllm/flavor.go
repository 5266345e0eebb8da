package vllm

import (
	"sort"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// Flavor is the kind of server behind an endpoint, as told by the metric names it exposes.
type Flavor string

// Flavors the plugin tells apart.
const (
	FlavorV1             Flavor = "vllm-v1"
	FlavorV0             Flavor = "vllm-v0"
	FlavorAscend         Flavor = "vllm-ascend"
	FlavorDynamoWorker   Flavor = "dynamo-worker"
	FlavorDynamoFrontend Flavor = "dynamo-frontend"
	FlavorUnknown        Flavor = "unknown"
)

// Detection is what an endpoint's exposition says about the server.
type Detection struct {
	Flavor Flavor `json:"flavor"`
	// DeprecatedNames is set when renamed metrics (gpu_cache_usage_perc, gpu_prefix_cache_*,
	// time_per_output_token_seconds) are still exposed, as the releases that deprecated them do.
	DeprecatedNames bool `json:"deprecatedNames"`
	// Ranks are the engine / DP rank label values seen, API-server processes (dp="-1") excluded.
	Ranks []string `json:"ranks"`
	// RankLabel is the label that carries the rank: engine, dp or dp_rank; empty for V0 and frontends.
	RankLabel string `json:"rankLabel,omitempty"`
	// SpecDecode is set when speculative-decoding metrics are exposed.
	SpecDecode bool `json:"specDecode"`
	// AscendProfiler is set when vllm_profiling_* metrics are exposed (metric_enable is 1).
	AscendProfiler bool `json:"ascendProfiler"`
	// PIDLabel is set when a gauge carries the multi-API-server pid label (vllm-project/vllm#28792).
	PIDLabel bool `json:"pidLabel"`
	// Router is set when vLLM names carry production-stack's router label (RouterSeries): a router's look-alikes,
	// which tell no engine flavor.
	Router bool `json:"router,omitempty"`
}

// Exposed is what detection needs to know about an endpoint: the sample names it exposes and, for a
// label, the distinct values it takes on samples whose name has the given prefix.
type Exposed interface {
	Names() []string
	LabelValues(namePrefix, label string) []string
}

// flavorPrefixes are the name prefixes Detect tells flavors by.
var flavorPrefixes = append([]string{VLLMPrefix, AscendPrefix, DynamoComponentPrefix, DynamoFrontendPrefix}, RayPrefixes...)

// Detect tells the flavor of an endpoint from its exposition.
func Detect(e Exposed) Detection {
	names := e.Names()
	set := make(map[string]bool, len(names))
	prefixes := map[string]bool{}
	for _, n := range names {
		set[n] = true
		for _, p := range flavorPrefixes {
			if strings.HasPrefix(n, p) {
				prefixes[p] = true
			}
		}
	}
	has := func(n string) bool { return set[n] }
	d := Detection{Flavor: FlavorUnknown, Router: len(e.LabelValues(VLLMPrefix, RouterLabel)) > 0}
	if d.Router {
		// The look-alikes are not the engines': tell the flavor from the endpoint's other names only.
		has = func(n string) bool { return set[n] && !RouterLookalikes[n] && !routerOwn(n) }
		prefixes[VLLMPrefix] = false
		for _, n := range names {
			if strings.HasPrefix(n, VLLMPrefix) && has(n) {
				prefixes[VLLMPrefix] = true
			}
		}
	}
	switch {
	case prefixes[DynamoFrontendPrefix]:
		d.Flavor = FlavorDynamoFrontend
	case prefixes[DynamoComponentPrefix]:
		d.Flavor = FlavorDynamoWorker
	case prefixes[AscendPrefix]:
		d.Flavor = FlavorAscend
	case has("vllm:num_requests_swapped") || has("vllm:cpu_cache_usage_perc") || has("vllm:gpu_prefix_cache_hit_rate"):
		// Only the V0 engine had a CPU swap pool; some scrapes carry V1 families beside these (DataDog's fixture).
		d.Flavor = FlavorV0
	case prefixes[VLLMPrefix]:
		d.Flavor = FlavorV1
	case prefixes[RayPrefixes[0]] || prefixes[RayPrefixes[1]]:
		// Ray Serve's vLLM: V1 under Ray's names, a replica per rank.
		d.Flavor, d.RankLabel = FlavorV1, RayRankLabel
	}
	d.DeprecatedNames = d.Flavor != FlavorV0 && (has("vllm:gpu_cache_usage_perc") ||
		has("vllm:gpu_prefix_cache_hits_total") || has("vllm:time_per_output_token_seconds_bucket"))
	d.SpecDecode = has("vllm:spec_decode_num_draft_tokens_total") || has("vllm:spec_decode_draft_acceptance_rate") ||
		has("vllm_profiling_num_spec_tokens")
	d.AscendProfiler = prefixes[AscendPrefix]
	d.PIDLabel = len(e.LabelValues(VLLMPrefix, PIDLabel)) > 0

	switch d.Flavor {
	case FlavorAscend:
		d.RankLabel, d.Ranks = "dp", schedulerRanks(e.LabelValues(AscendPrefix, "dp"))
		if len(d.Ranks) == 0 {
			d.RankLabel, d.Ranks = "engine", e.LabelValues(VLLMPrefix, "engine")
		}
	case FlavorDynamoWorker:
		d.RankLabel, d.Ranks = "engine", e.LabelValues(VLLMPrefix, "engine")
		if len(d.Ranks) == 0 {
			d.RankLabel, d.Ranks = "dp_rank", e.LabelValues(DynamoComponentPrefix, "dp_rank")
		}
	case FlavorV1:
		if d.RankLabel == RayRankLabel {
			d.Ranks = append(e.LabelValues(RayPrefixes[0], RayRankLabel), e.LabelValues(RayPrefixes[1], RayRankLabel)...)
			break
		}
		d.RankLabel, d.Ranks = "engine", e.LabelValues(VLLMPrefix, "engine")
	}
	if len(d.Ranks) == 0 {
		d.RankLabel = ""
	}
	sortRanks(d.Ranks)
	return d
}

// schedulerRanks drops the API-server process's dp="-1" from Ascend DP ranks.
func schedulerRanks(vals []string) []string {
	out := vals[:0:0]
	for _, v := range vals {
		if v != APIServerDP {
			out = append(out, v)
		}
	}
	return out
}

// sortRanks orders rank values numerically where they are numbers ("2" before "10").
func sortRanks(r []string) {
	sort.SliceStable(r, func(i, j int) bool {
		if len(r[i]) != len(r[j]) {
			return len(r[i]) < len(r[j])
		}
		return r[i] < r[j]
	})
}

// ScrapeExposed adapts one parsed scrape to Exposed.
type ScrapeExposed struct{ Scrape *exposition.Scrape }

// Names returns the distinct sample names of the scrape. A family's samples come in runs of one name (its buckets,
// then its sums and counts per series), so only a name unlike the one before it is looked up.
func (s ScrapeExposed) Names() []string {
	seen := map[string]bool{}
	var out []string
	for i := range s.Scrape.Families {
		last := ""
		for j := range s.Scrape.Families[i].Samples {
			n := s.Scrape.Families[i].Samples[j].Name
			if n != last && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
			last = n
		}
	}
	sort.Strings(out)
	return out
}

// LabelValues returns the distinct values of label on samples whose name starts with namePrefix. Every sample name
// of a family begins with the family's name, so a family whose name is at least as long as namePrefix is read or
// skipped whole by it; only shorter family names leave each sample to be checked.
func (s ScrapeExposed) LabelValues(namePrefix, label string) []string {
	seen := map[string]bool{}
	var out []string
	for i := range s.Scrape.Families {
		f := &s.Scrape.Families[i]
		whole := len(f.Name) >= len(namePrefix)
		if whole && !strings.HasPrefix(f.Name, namePrefix) {
			continue
		}
		last, had := "", false
		for j := range f.Samples {
			smp := &f.Samples[j]
			if !whole && !strings.HasPrefix(smp.Name, namePrefix) {
				continue
			}
			v, ok := smp.Labels.Lookup(label)
			if !ok || had && v == last {
				continue
			}
			last, had = v, true
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}

package measure

import (
	"regexp"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Node is one step of a measure's formula. The direct engine (pkg/query) evaluates a tree of nodes over scraped
// history and the PromQL generator (pkg/promapi) prints the same tree as PromQL, so both modes compute one
// definition. Every node yields series at the query's steps, labelled as the query's groupBy reports them
// (endpoint, model_name, engine or dp, plus the node's kept labels); a node with nothing to read yields none.
//
// Nodes are pointers so that an evaluator may compute a node shared by several outputs once.
type Node interface{ node() }

// Agg is how the series of one group are combined at a step.
type Agg string

// Aggregations of a gauge's series within a group.
const (
	Sum Agg = "sum"
	Avg Agg = "avg"
)

// Gauge is Agg by (group) of a gauge's value at each step (within the lookback), times Scale. Series that differ
// only by the multi-API-server pid label are folded with max first. Endpoints that expose any of Unless are left
// out: they have a better source, which another node of the same formula reads. Match selects series by label.
type Gauge struct {
	Signal vllm.Signal
	Agg    Agg
	Scale  float64 // 0 means 1
	Keep   []string
	Unless []vllm.Signal
	Match  []Matcher
}

// Matcher selects series whose label matches a regular expression, anchored as PromQL's =~.
type Matcher struct {
	Label, Regex string
	re           *regexp.Regexp
}

// Match is a matcher of label against regex, compiled once when the catalog is built.
func Match(label, regex string) Matcher {
	return Matcher{Label: label, Regex: regex, re: regexp.MustCompile("^(?:" + regex + ")$")}
}

// Matches reports whether a label value matches.
func (m Matcher) Matches(value string) bool { return m.re.MatchString(value) }

// Rate is sum by (group) of rate(signal+Suffix[window]): a counter, or a histogram's _sum or _count.
type Rate struct {
	Signal vllm.Signal
	Suffix string
	Keep   []string
	Match  []Matcher
}

// BucketSuffix is a Rate's Suffix for a histogram's cumulative bucket counters: kept by le, the rates are a
// heatmap's rows once each bucket's rate is taken apart from the ones below it (pkg/query ApplyBucketRates).
const BucketSuffix = "_bucket"

// ReadsBuckets reports whether the outputs read bucket rates (a Rate with BucketSuffix).
func ReadsBuckets(outs []Output) bool {
	for _, o := range outs {
		if r, ok := o.Node.(*Rate); ok && r.Suffix == BucketSuffix {
			return true
		}
	}
	return false
}

// Form is how a Div turns the numerator and denominator at one step into a value.
type Form uint8

const (
	// Quotient is n / d, no value where d is 0.
	Quotient Form = iota
	// OnePlus is 1 + n / d (the bonus token of every speculative verification step).
	OnePlus
	// UsedPercent is (1 − n / d) × 100 for n free of d total, no value unless d > 0.
	UsedPercent
)

// Div divides two nodes' series joined on their labels; Ignoring is a label of the numerator left out of the
// join and kept on the result (the draft position of per-position acceptance).
type Div struct {
	Num, Den Node
	Form     Form
	Ignoring string
}

// Add is A + B joined on their labels.
type Add struct{ A, B Node }

// Or is the series of every part together: PromQL's `or` of parts that never report the same endpoint.
type Or struct{ Parts []Node }

// Quantiles is histogram_quantile(q, sum by (le, group) (rate(signal_bucket[window]))) for each of the query's
// quantiles, labelled quantile="q". A zero Signal means the query's latency metric.
type Quantiles struct{ Signal vllm.Signal }

// Attainment is the share of a histogram's observations at or below the query's threshold over the window:
// derive.SLOAttainment of sum by (le, group) of the bucket rates, between the bounds around the threshold among all
// the selected series' bounds (derive.BoundsAround). With Goodput it is the rate of those observations instead
// (derive.CountWithin): requests per second meeting the SLO. A zero Signal means the query's latency metric.
type Attainment struct {
	Signal  vllm.Signal
	Goodput bool
}

// EngineState is each engine's state as one number: 3 online, 2 asleep (vLLM sleep mode, either level), 1
// unhealthy (engine_healthy 0 under fault tolerance, whatever its sleep state) — the worst (lowest) of a group's
// engines under other groupings. An endpoint whose scrapes fail is down; its engines' series go stale and the
// endpoint-down rule (up) says so. Health is read whatever the model filter, as engine_healthy names no model.
type EngineState struct {
	// Serving counts each group's engines online at every step instead (asleep, unhealthy and down ones count 0),
	// and answers 0 while the group's engines have reported within the window but none serves: a model whose every
	// endpoint is down or asleep, which no per-endpoint series can show once its scrapes fail.
	Serving bool
}

// Engine states (EngineState).
const (
	StateUnhealthy = 1
	StateAsleep    = 2
	StateOnline    = 3
)

// AsleepMatch selects the sleep_state series that say an engine sleeps.
var AsleepMatch = []Matcher{Match("sleep_state", "weights_offloaded|discard_all")}

// LoRA is one reading of vllm:lora_requests_info (LoRAPart). Neither engine evaluates it: PromQL cannot split a
// comma-joined label, so the data source reads the series as a raw query in either mode and pkg/lora reads them.
type LoRA struct{ Part string }

// Parts of a LoRA reading.
const (
	LoRARunning = "running" // adapters the running batches use
	LoRAWaiting = "waiting" // adapters only waiting requests name
	LoRAMax     = "max"     // max_lora: adapters that may run at once
	LoRAState   = "state"   // per adapter (label adapter): 2 running, 1 waiting
)

// PerGPU is the per-second rate of counters summed (vLLM's per-GPU estimates), divided by the query's peak (Peak:
// PeakFlops or PeakBandwidth; "" divides by nothing). It has no value where the counters' sum is still 0: vLLM exposes
// them at 0 when MFU metrics are off, which must read "off", not 0 %.
type PerGPU struct {
	Signals []vllm.Signal
	Peak    string
}

// Peaks a PerGPU divides by.
const (
	PeakFlops     = "flops"
	PeakBandwidth = "bandwidth"
)

// Accelerator is a GPU or NPU model with its dense peak compute (TFLOP/s, bf16/fp16) and memory bandwidth (TB/s), the
// denominators of MFU and bandwidth utilisation.
type Accelerator struct {
	ID     string  `json:"value"`
	Label  string  `json:"label"`
	TFLOPS float64 `json:"tflops"`
	TBps   float64 `json:"tbps"`
}

// Accelerators are the presets of the data source's peak setting; DefaultAccelerator is used where none is set.
var Accelerators = []Accelerator{
	{"h100-sxm", "NVIDIA H100 SXM", 989, 3.35},
	{"h100-pcie", "NVIDIA H100 PCIe", 756, 2.0},
	{"h200", "NVIDIA H200", 989, 4.8},
	{"b200", "NVIDIA B200", 2250, 8},
	{"a100-sxm", "NVIDIA A100 SXM 80GB", 312, 2.039},
	{"l40s", "NVIDIA L40S", 362, 0.864},
	{"mi300x", "AMD MI300X", 1307, 5.3},
	{"ascend-910b", "Huawei Ascend 910B", 313, 1.6},
}

// DefaultAccelerator is the preset of a data source that names none.
const DefaultAccelerator = "h100-sxm"

// AcceleratorByID returns a preset.
func AcceleratorByID(id string) (Accelerator, bool) {
	for _, a := range Accelerators {
		if a.ID == id {
			return a, true
		}
	}
	return Accelerator{}, false
}

// Mean is a histogram's mean over the window, rate(_sum) / rate(_count). A zero Signal means the query's latency
// metric.
type Mean struct{ Signal vllm.Signal }

// InfoProduct is sum by (group) of the product of numeric label values of an info gauge (value 1): the KV pool
// in blocks (num_gpu_blocks) or tokens (num_gpu_blocks × block_size) from vllm:cache_config_info. The info gauge
// names no model, so each series takes the model_name of ModelFrom's series on the same endpoint and engine (and
// the model filter applies through it): without it the pool would never line up with per-model measures.
type InfoProduct struct {
	Signal    vllm.Signal
	Labels    []string
	ModelFrom vllm.Signal
}

// Balance is the data-parallel balance of a per-rank load: the load of each rank (Load evaluated per engine /
// DP rank) and, across the ranks of each reported group, the score named Score.
type Balance struct {
	Load    Node
	Waiting Node   // each rank's waiting requests, for idle_while_waiting
	Score   string // "" for the per-rank load itself, else one of Scores
}

// Capacity is Pool ÷ Mean × (1 − the query's headroom), where Mean > 0.
type Capacity struct{ Pool, Mean Node }

// Raw is the query's metric by name with its own labels: gauges and counters as exposed, histograms as buckets or
// quantiles, as the query's histogram field says.
type Raw struct{}

// PD is one part of a disaggregated pair's end-to-end TTFT (PDTotal and the PD* parts) or of its balance (the
// PDRunning* parts). Neither engine evaluates it: the parts come from different instances, chosen by role, which
// only the data source resolves (pkg/role).
type PD struct{ Part string }

// Parts of a P/D balance: running requests per instance on each side, and their ratio.
const (
	PDRunningRatio   = "running_ratio"
	PDPrefillRunning = "prefill_running"
	PDDecodeRunning  = "decode_running"
)

// Balance reports whether the part is one of a P/D balance's rather than of a P/D TTFT's.
func (p *PD) Balance() bool {
	return p.Part == PDRunningRatio || p.Part == PDPrefillRunning || p.Part == PDDecodeRunning
}

// Parts of a P/D TTFT.
const (
	PDTotal       = "total"
	PDPrefillTTFT = "prefill_ttft"
	PDTransfer    = "transfer"
	PDDecodeQueue = "decode_queue"
	PDInflation   = "decode_inflation"
)

func (*PD) node()          {}
func (*Gauge) node()       {}
func (*Rate) node()        {}
func (*Div) node()         {}
func (*Add) node()         {}
func (*Or) node()          {}
func (*Quantiles) node()   {}
func (*Mean) node()        {}
func (*Attainment) node()  {}
func (*EngineState) node() {}
func (*LoRA) node()        {}
func (*PerGPU) node()      {}
func (*InfoProduct) node() {}
func (*Balance) node()     {}
func (*Capacity) node()    {}
func (*Raw) node()         {}

// Walk calls f on n and every node below it, parents first.
func Walk(n Node, f func(Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, c := range shapeOf(n).children {
		Walk(c, f)
	}
}

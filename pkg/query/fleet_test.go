package query

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// memSource is a Source over series held in memory, for tests.
type memSource struct {
	series  map[string][]Series // endpoint -> series
	selects atomic.Int64        // Select calls, to see that a cancelled query stops reading (diagnosis rules select concurrently)
	rev     uint64
}

func (m *memSource) Endpoints() []string {
	var out []string
	for ep := range m.series {
		out = append(out, ep)
	}
	sort.Strings(out)
	return out
}

func (m *memSource) Names(endpoint string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range m.series[endpoint] {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	return out
}

func (m *memSource) Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	m.selects.Add(1)
	var out []Series
	for _, s := range m.series[endpoint] {
		if s.Name != name || match != nil && !match(s.Labels) {
			continue
		}
		var pts []derive.Point
		for _, p := range s.Points {
			if p.T >= from && p.T <= to {
				pts = append(pts, p)
			}
		}
		out = append(out, Series{Name: s.Name, Labels: s.Labels, Points: pts})
	}
	n := 0
	for _, s := range out {
		n += len(s.Points)
	}
	if maxPoints > 0 && n > maxPoints {
		return nil, false
	}
	return out, true
}

// Revision changes with every series added.
func (m *memSource) Revision(string) uint64 { return m.rev }

func (m *memSource) Bounds(endpoint string) (int64, int64, bool) {
	var lo, hi int64 = math.MaxInt64, math.MinInt64
	for _, s := range m.series[endpoint] {
		for _, p := range s.Points {
			lo, hi = min(lo, p.T), max(hi, p.T)
		}
	}
	return lo, hi, lo != math.MaxInt64
}

func (m *memSource) add(endpoint, name string, labels map[string]string, pts []derive.Point) {
	var ls exposition.Labels
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ls = append(ls, exposition.Label{Name: k, Value: labels[k]})
	}
	if m.series == nil {
		m.series = map[string][]Series{}
	}
	m.series[endpoint] = append(m.series[endpoint], Series{Name: name, Labels: ls, Points: pts})
	m.rev++
}

// fleet is a deterministic synthetic fleet: endpoint "v1" (vLLM V1, two engines, spec decode), "v0" (no engine
// label, swapped, V0 spec gauges) and "ascend" (V1 engine 0 plus profiler families for dp -1, 0, 1).
type fleet struct {
	src        *memSource
	start, end int64 // ms
	om         strings.Builder
	families   map[string][]string // OpenMetrics family -> sample lines
	order      []string
}

const (
	fleetStep     = 5000
	fleetDuration = 40 * 60 * 1000
)

var ttftBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560, math.Inf(1)}

func newFleet(start int64) *fleet {
	f := &fleet{src: &memSource{}, start: start, end: start + fleetDuration, families: map[string][]string{}}
	r := rand.New(rand.NewSource(42))
	times := func(missEvery int) []int64 {
		var ts []int64
		for t := f.start; t <= f.end; t += fleetStep {
			if missEvery > 0 && (t/fleetStep)%int64(missEvery) == 3 {
				continue // a missed scrape
			}
			ts = append(ts, t)
		}
		return ts
	}
	gauge := func(ep, name string, l map[string]string, ts []int64, gen func(i int) float64) {
		pts := make([]derive.Point, len(ts))
		for i, t := range ts {
			pts[i] = derive.Point{T: t, V: gen(i)}
		}
		f.record(ep, name, l, pts)
	}
	counter := func(ep, name string, l map[string]string, ts []int64, perStep func(i int) float64, resetAt int) {
		v := r.Float64() * 100
		gauge(ep, name, l, ts, func(i int) float64 {
			if i == resetAt {
				v = 0 // a restarted server
			}
			v += perStep(i)
			return v
		})
	}
	histogram := func(ep, name string, l map[string]string, ts []int64, scale float64, rate func(i int) int, resetAt int) {
		counts := make([][]float64, len(ts))
		cum := make([]float64, len(ttftBounds))
		sums, ncount := make([]float64, len(ts)), make([]float64, len(ts))
		var sum, n float64
		for i := range ts {
			if i == resetAt {
				cum = make([]float64, len(ttftBounds))
				sum, n = 0, 0
			}
			for k := 0; k < rate(i); k++ {
				obs := scale * math.Exp(r.NormFloat64()*0.6)
				sum += obs
				n++
				for b, ub := range ttftBounds {
					if obs <= ub {
						cum[b]++
					}
				}
			}
			counts[i] = append([]float64(nil), cum...)
			sums[i], ncount[i] = sum, n
		}
		for b, ub := range ttftBounds {
			bl := copyLabels(l)
			bl["le"] = leString(ub)
			pts := make([]derive.Point, len(ts))
			for i, t := range ts {
				pts[i] = derive.Point{T: t, V: counts[i][b]}
			}
			f.record(ep, name+"_bucket", bl, pts)
		}
		gauge(ep, name+"_sum", l, ts, func(i int) float64 { return sums[i] })
		gauge(ep, name+"_count", l, ts, func(i int) float64 { return ncount[i] })
	}

	// vLLM V1, two engines; engine 0 takes most of the load (a skewed router).
	ts := times(0)
	for e, share := range []float64{0.8, 0.2} {
		l := map[string]string{"model_name": "llama-3-8b", "engine": strconv.Itoa(e)}
		load := func(i int) float64 { return share * (20 + 15*math.Sin(float64(i)/40)) }
		gauge("v1", "vllm:num_requests_running", l, ts, func(i int) float64 { return math.Round(load(i)) })
		gauge("v1", "vllm:num_requests_waiting", l, ts, func(i int) float64 {
			if e == 1 {
				return 0
			}
			return math.Max(0, math.Round(load(i)-12))
		})
		gauge("v1", "vllm:kv_cache_usage_perc", l, ts, func(i int) float64 { return math.Min(1, load(i)/22) })
		counter("v1", "vllm:generation_tokens_total", l, ts, func(i int) float64 { return load(i) * 40 }, 200+e*50)
		counter("v1", "vllm:prompt_tokens_total", l, ts, func(i int) float64 { return load(i) * 90 }, -1)
		counter("v1", "vllm:num_preemptions_total", l, ts, func(i int) float64 { return math.Floor(load(i) / 14) }, -1)
		counter("v1", "vllm:prefix_cache_queries_total", l, ts, func(i int) float64 { return 1000 + float64(i%7)*10 }, -1)
		counter("v1", "vllm:prefix_cache_hits_total", l, ts, func(i int) float64 { return 300 + float64(i%5)*20 }, -1)
		counter("v1", "vllm:spec_decode_num_drafts_total", l, ts, func(i int) float64 { return 50 }, -1)
		counter("v1", "vllm:spec_decode_num_draft_tokens_total", l, ts, func(i int) float64 { return 150 }, -1)
		counter("v1", "vllm:spec_decode_num_accepted_tokens_total", l, ts, func(i int) float64 { return 60 + float64(i%9) }, -1)
		for pos, acc := range []float64{30, 20, 10} {
			pl := copyLabels(l)
			pl["position"] = strconv.Itoa(pos)
			counter("v1", "vllm:spec_decode_num_accepted_tokens_per_pos_total", pl, ts, func(i int) float64 { return acc + float64(i%3) }, -1)
		}
		for _, reason := range []string{"stop", "length"} {
			rl := copyLabels(l)
			rl["finished_reason"] = reason
			counter("v1", "vllm:request_success_total", rl, ts, func(i int) float64 { return load(i) / 4 }, -1)
		}
		histogram("v1", "vllm:time_to_first_token_seconds", l, ts, 0.08+0.1*float64(e), func(i int) int { return 3 + i%4 }, 300)
		histogram("v1", "vllm:request_prompt_tokens", l, ts, 900, func(i int) int { return 2 + i%3 }, -1)
		histogram("v1", "vllm:request_generation_tokens", l, ts, 250, func(i int) int { return 2 + i%3 }, -1)
		cl := copyLabels(l)
		cl["block_size"], cl["num_gpu_blocks"] = "16", "2048"
		gauge("v1", "vllm:cache_config_info", cl, ts, func(int) float64 { return 1 })
	}

	// vLLM V0: no engine label, a scrape missed every 30, swapped requests and V0 spec gauges.
	ts0 := times(30)
	l0 := map[string]string{"model_name": "mistral-7b"}
	gauge("v0", "vllm:num_requests_running", l0, ts0, func(i int) float64 { return float64(5 + i%6) })
	gauge("v0", "vllm:num_requests_waiting", l0, ts0, func(i int) float64 { return float64(i % 4) })
	gauge("v0", "vllm:num_requests_swapped", l0, ts0, func(i int) float64 { return float64(i % 2) })
	gauge("v0", "vllm:gpu_cache_usage_perc", l0, ts0, func(i int) float64 { return 0.5 + 0.4*math.Sin(float64(i)/30) })
	gauge("v0", "vllm:spec_decode_draft_acceptance_rate", l0, ts0, func(i int) float64 { return 0.6 + 0.01*float64(i%10) })
	gauge("v0", "vllm:gpu_prefix_cache_hit_rate", l0, ts0, func(i int) float64 { return 0.42 })
	counter("v0", "vllm:generation_tokens_total", l0, ts0, func(i int) float64 { return 120 }, -1)

	// vLLM-Ascend: V1 engine 0 plus the profiler's per-dp families; dp="-1" is the API-server process.
	for _, dp := range []string{"-1", "0", "1"} {
		l := map[string]string{"dp": dp}
		if dp != "-1" {
			total := 4096.0
			gauge("ascend", "vllm_profiling_total_kvcache_blocks", l, ts, func(int) float64 { return total })
			gauge("ascend", "vllm_profiling_free_kvcache_blocks", l, ts, func(i int) float64 { return float64(1000 + (i*37)%2000) })
			counter("ascend", "vllm_profiling_output_total", l, ts, func(i int) float64 { return 70 + float64(i%11) }, -1)
		}
		histogram("ascend", "vllm_profiling_server:create_chat_completion:duration", l, ts, 0.4, func(i int) int { return 1 + i%3 }, -1)
	}
	la := map[string]string{"model_name": "qwen-72b", "engine": "0"}
	gauge("ascend", "vllm:num_requests_running", la, ts, func(i int) float64 { return float64(8 + i%5) })
	gauge("ascend", "vllm:num_requests_waiting", la, ts, func(i int) float64 { return float64(i % 3) })
	gauge("ascend", "vllm:kv_cache_usage_perc", la, ts, func(i int) float64 { return 0.3 })
	return f
}

func leString(ub float64) string {
	if math.IsInf(ub, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(ub, 'g', -1, 64)
}

// record stores a series in the Source and renders it for promtool, with the endpoint as a label.
func (f *fleet) record(endpoint, name string, labels map[string]string, pts []derive.Point) {
	f.src.add(endpoint, name, labels, pts)
	l := copyLabels(labels)
	l["endpoint"] = endpoint
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lb strings.Builder
	for i, k := range keys {
		if i > 0 {
			lb.WriteByte(',')
		}
		fmt.Fprintf(&lb, "%s=%q", k, l[k])
	}
	if _, ok := f.families[name]; !ok {
		f.order = append(f.order, name)
	}
	for _, p := range pts {
		f.families[name] = append(f.families[name], fmt.Sprintf("%s{%s} %s %d", name, lb.String(),
			strconv.FormatFloat(p.V, 'g', -1, 64), p.T/1000))
	}
}

// openMetrics renders every series as untyped OpenMetrics, which promtool backfills as they are; PromQL's rate
// and histogram_quantile do not look at metric types.
func (f *fleet) openMetrics() string {
	var b strings.Builder
	for _, name := range f.order {
		fmt.Fprintf(&b, "# TYPE %s unknown\n", name)
		for _, line := range f.families[name] {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

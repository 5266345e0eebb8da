package sim

import (
	"io"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Fleet is a pure, steppable model of one vLLM deployment: a Poisson client load routed across
// data-parallel engines. It does no I/O and never sleeps; Advance moves simulated time and
// WriteExposition renders /metrics for the current state. It is not safe for concurrent use.
type Fleet struct {
	cfg     Config
	start   time.Time // wall-clock process start, for _created and process_start_time_seconds
	now     float64   // simulated seconds since start
	engines []*engine
	load    *workload
	route   *rng
	fe      *frontendStats // nil unless the flavor is dynamo-frontend

	// profiling mirrors msServiceProfiler's metric_enable: hooks record only while it is on.
	profiling bool
	pids      []int
	// loraInfo are the label sets vllm:lora_requests_info has had, the newest last, each with when it was set;
	// prometheus_client keeps every set it was given, the simulator the last maxLoRAInfo.
	loraInfo []loraInfo
	// sleepDur are the sleep-mode operation durations by operation; sleepPhases the operations recorded so far.
	sleepDur    map[string]*histogram
	sleepPhases int
	// timers are the Ascend profiler's custom timers (full names).
	timers []string
	// release is the vLLM release the fleet speaks (Config.VLLMVersion), empty for the flavor's own families; fams
	// are the vllm: families that release registers under this configuration (vllm.FamiliesAt).
	release string
	fams    map[string]vllm.Family
}

// loraInfo is one series of vllm:lora_requests_info.
type loraInfo struct {
	running, waiting string
	setAt            float64 // unix seconds, as set_to_current_time() writes
}

// maxLoRAInfo bounds the lora_requests_info series the simulator keeps.
const maxLoRAInfo = 20

// NewFleet validates cfg and builds a fleet whose clock starts at start.
func NewFleet(cfg Config, start time.Time) (*Fleet, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, start: start}
	if cfg.VLLMVersion != "" {
		f.release, _ = vllm.ResolveSimRelease(cfg.VLLMVersion) // Validate resolved it
		f.fams = map[string]vllm.Family{}
		for _, fam := range vllm.FamiliesAt(f.release, f.cfg.registers, cfg.Flavor == FlavorV1010) {
			f.fams[fam.Name] = fam
		}
	}
	if cfg.Flavor == FlavorAscend {
		t, err := customTimers(cfg)
		if err != nil {
			return nil, err
		}
		f.timers = t
	}
	f.load = newWorkload(&f.cfg)
	f.route = newRNG(cfg.Seed, 2)
	if cfg.Flavor == FlavorDynamoFrontend {
		f.fe = newFrontendStats(cfg.Engines)
	}
	for i := 0; i < cfg.Engines; i++ {
		f.engines = append(f.engines, newEngine(f, i))
	}
	pr := newRNG(cfg.Seed, 3)
	for i := 0; i < cfg.APIServerProcesses; i++ {
		f.pids = append(f.pids, 1000+pr.IntN(60000))
	}
	return f, nil
}

// SetProfilingEnabled switches msServiceProfiler's metric collection (vllm-ascend only).
func (f *Fleet) SetProfilingEnabled(on bool) { f.profiling = on }

// AdvanceTo moves simulated time forward to elapsed since start; earlier times are ignored.
func (f *Fleet) AdvanceTo(elapsed time.Duration) {
	target := elapsed.Seconds()
	if target <= f.now {
		return
	}
	for f.load.next <= target {
		ta := f.load.next
		for _, e := range f.engines {
			e.advanceTo(ta)
		}
		f.recordSleepOps(ta)
		r := f.load.pop()
		if e := f.pick(ta); e != nil {
			e.enqueue(r)
		}
	}
	for _, e := range f.engines {
		e.advanceTo(target)
	}
	f.recordSleepOps(target)
	f.now = target
}

// pick chooses an engine the way vLLM's DP coordinator does (least loaded, lowest index on a
// tie), or sends most traffic to engine 0 under "skewed" routing; nil when none may serve (asleep, or every engine
// unhealthy), as a router then sends the request elsewhere.
func (f *Fleet) pick(t float64) *engine {
	serving := f.engines[:len(f.engines)-f.cfg.UnhealthyEngines]
	if f.sleepLevelAt(t) > 0 || len(serving) == 0 {
		return nil
	}
	if f.cfg.Routing == "skewed" && f.route.chance(f.cfg.Skew) {
		return serving[0]
	}
	best := serving[0]
	for _, e := range serving[1:] {
		if e.load() < best.load() {
			best = e
		}
	}
	return best
}

// healthy reports whether an engine answers under fault tolerance: all but the last UnhealthyEngines.
func (f *Fleet) healthy(e *engine) bool { return e.idx < len(f.engines)-f.cfg.UnhealthyEngines }

// WriteExposition renders /metrics in the configured flavor for the current simulated state.
func (f *Fleet) WriteExposition(w io.Writer) error {
	x := &exposition{createdBase: float64(f.start.UnixNano()) / 1e9, allow: f.emits}
	if f.cfg.Router {
		x.allow = nil // the router's names are its own, whatever release its engines run
		f.routerFamilies(x)
		return x.write(w)
	}
	switch f.cfg.Flavor {
	case FlavorV0:
		x.noCreated = true
		f.processFamilies(x, stylePython)
		f.v0Families(x)
		f.httpFamilies(x, stylePython)
	case FlavorDynamoWorker:
		f.dynamoWorkerFamilies(x)
		f.v1Families(x, stylePython)
	case FlavorDynamoFrontend:
		f.dynamoFrontendFamilies(x)
	default:
		st := f.pyStyle()
		if st == stylePython {
			f.processFamilies(x, st)
		}
		f.v1Families(x, st)
		if f.cfg.Flavor == FlavorAscend && f.profiling {
			f.ascendFamilies(x)
		}
		f.httpFamilies(x, st)
	}
	if f.cfg.Ray {
		rayNames(x)
	}
	return x.write(w)
}

// rayNames renders vLLM's families the way Ray Serve's metrics agent re-exports them: vllm: becomes ray_vllm_, and
// each engine's series become a replica's, labelled with ReplicaId and WorkerId, every replica saying engine="0".
func rayNames(x *exposition) {
	for _, fam := range x.fams {
		rest, ok := strings.CutPrefix(fam.name, "vllm:")
		if !ok {
			continue
		}
		fam.name = "ray_vllm_" + rest
		for i := range fam.kids {
			labels := fam.kids[i].labels
			for j, l := range labels {
				if l.name == "engine" {
					labels[j].value = "0"
					labels = append(labels, label{"Component", "core_worker"}, label{"ReplicaId", "replica-" + l.value},
						label{"WorkerId", "worker-" + l.value})
					break
				}
			}
			fam.kids[i].labels = labels
		}
	}
}

// pyStyle is single-process prometheus_client unless the registry is multiprocess: with several
// API-server processes, and always on Ascend, where msServiceProfiler requires
// PROMETHEUS_MULTIPROC_DIR.
func (f *Fleet) pyStyle() style {
	if f.cfg.APIServerProcesses > 1 || f.cfg.Flavor == FlavorAscend {
		return stylePythonMultiproc
	}
	return stylePython
}

// local returns the engines this endpoint exposes.
func (f *Fleet) local() []*engine {
	lo, hi := f.cfg.localEngines()
	return f.engines[lo:hi]
}

func (f *Fleet) uptime() float64 { return f.now }

// Elapsed is the simulated time the model has reached.
func (f *Fleet) Elapsed() time.Duration { return time.Duration(f.now * float64(time.Second)) }

// emits reports whether the fleet's release registers a vllm: family; every family passes without a release, and
// other projects' families always do.
func (f *Fleet) emits(name string) bool {
	if f.fams == nil || !strings.HasPrefix(name, "vllm:") {
		return true
	}
	_, ok := f.fams[name]
	return ok
}

// bounds are a vLLM histogram's bucket bounds: the release's where it declares the family, def otherwise.
func (f *Fleet) bounds(name string, def []float64) []float64 {
	if fam, ok := f.fams[name]; ok && fam.Type == vllm.Histogram {
		return fam.BucketsAt(f.cfg.MaxModelLen)
	}
	return def
}

// labelsOf are a family's label names in the fleet's release, nil without one.
func (f *Fleet) labelsOf(name string) []string {
	if fam, ok := f.fams[name]; ok {
		return fam.LabelsAt(f.release)
	}
	return nil
}

package sim

import (
	"time"
)

// Sleep-mode operations as the API server names them in the operation label.
const (
	sleepOp = "sleep"
	wakeOp  = "wake"
)

// sleepOps are the operations vLLM pre-creates in_flight children for, in its order.
var sleepOps = []string{sleepOp, "release_kv_cache_memory", wakeOp}

// bucketsSleepOps are vLLM's buckets for sleep-mode operation durations.
var bucketsSleepOps = []float64{0.01, 0.1, 1, 10, 30, 60, 120, 300, 600}

// sleepLevelAt is the sleep level the instance is in at t (0 awake): SleepLevel the whole run, or, with a sleep
// cycle, awake for one cycle and asleep for the next, in turn.
func (f *Fleet) sleepLevelAt(t float64) int {
	c := time.Duration(f.cfg.SleepCycle).Seconds()
	if f.cfg.SleepLevel == 0 || c > 0 && int(t/c)%2 == 0 {
		return 0
	}
	return f.cfg.SleepLevel
}

// recordSleepOps observes the sleep and wake operations the instance has gone through by t: one sleep at the
// start when it sleeps the whole run, else one at each cycle boundary.
func (f *Fleet) recordSleepOps(t float64) {
	if f.cfg.SleepLevel == 0 {
		return
	}
	if f.sleepDur == nil {
		f.sleepDur = map[string]*histogram{}
	}
	done := 1
	if c := time.Duration(f.cfg.SleepCycle).Seconds(); c > 0 {
		done = int(t / c)
	}
	for f.sleepPhases < done {
		f.sleepPhases++
		op := sleepOp
		if f.cfg.SleepCycle > 0 && f.sleepPhases%2 == 0 {
			op = wakeOp
		}
		h := f.sleepDur[op]
		if h == nil {
			h = newHistogram(bucketsSleepOps)
			f.sleepDur[op] = h
		}
		h.observe(sleepOpSeconds(op, f.cfg.SleepLevel)*(1+0.05*float64(f.sleepPhases%3)), 1)
	}
}

// sleepOpSeconds is how long an operation takes at a level: level 1 copies the weights to host memory and back,
// level 2 drops them and reloads them from storage on wake.
func sleepOpSeconds(op string, level int) float64 {
	switch {
	case op == sleepOp && level == 1:
		return 3.2
	case op == sleepOp:
		return 0.6
	case level == 1:
		return 4.5
	default:
		return 11.8
	}
}

// sleepFamilies renders the API server's sleep-mode operation metrics: durations per operation once one ran, and
// the operations in flight, pre-created at 0 (none is in flight between the simulator's steps). Neither names a
// model or an engine.
func (f *Fleet) sleepFamilies(b *familyBuilder) {
	dur := b.x.add("vllm:sleep_mode_operation_duration_seconds", "Duration of one sleep-mode operation.", typeHistogram, b.st)
	for _, op := range sleepOps {
		if h := f.sleepDur[op]; h != nil {
			dur.setHist(h, label{"operation", op})
		}
	}
	inFlight := b.x.add("vllm:sleep_mode_operations_in_flight", "Sleep-mode operations currently awaited.", typeGauge, b.st)
	for _, op := range sleepOps {
		inFlight.set(0, label{"operation", op})
	}
}

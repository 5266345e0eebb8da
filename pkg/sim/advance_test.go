package sim

import "time"

// Elapsed is the simulated time since start.
func (f *Fleet) Elapsed() time.Duration { return time.Duration(f.now * float64(time.Second)) }

// Advance moves simulated time forward by dt. Results do not depend on how a span is split
// into calls: every event happens at its own simulated time.
func (f *Fleet) Advance(dt time.Duration) {
	if dt > 0 {
		f.AdvanceTo(f.Elapsed() + dt)
	}
}

// Profiler returns the metric_enable watcher (vllm-ascend only, else nil).
func (s *Server) Profiler() *ProfilerSwitch { return s.prof }

package sim

import "time"

// Advance moves simulated time forward by dt. Results do not depend on how a span is split
// into calls: every event happens at its own simulated time.
func (f *Fleet) Advance(dt time.Duration) {
	if dt > 0 {
		f.AdvanceTo(f.Elapsed() + dt)
	}
}

// Profiler returns the metric_enable watcher (vllm-ascend only, else nil).
func (s *Server) Profiler() *ProfilerSwitch { return s.prof }

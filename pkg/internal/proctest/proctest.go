// Package proctest reads what the test process itself has spent so far, for benchmarks that report CPU time and
// allocation rather than wall time: on a shared machine those hold up under load.
package proctest

import (
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the process's user plus system CPU time so far.
func CPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// HeapAllocated is how many bytes the process has allocated on the heap so far; what a phase allocates is what makes
// the collector run, at a pace set by the live heap.
func HeapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

package datasource

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// memOverhead is what the process may use beyond the direct-mode history caps: scrape bodies being parsed,
// queries being evaluated, frames being encoded, the gRPC server.
const memOverhead = 256 << 20

// memLimit sets the Go runtime's soft memory limit to the sum of the live instances' maxMemoryMB plus memOverhead,
// so the garbage collector works harder before the process outgrows what the settings promise, instead of
// letting the heap double between collections. An operator's GOMEMLIMIT wins.
var memLimit = struct {
	sync.Mutex
	reserved int64
}{}

// reserveMemory adds an instance's history cap to the limit and returns its release.
func reserveMemory(bytes int64) func() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	memLimit.Lock()
	memLimit.reserved += bytes
	debug.SetMemoryLimit(memLimit.reserved + memOverhead)
	memLimit.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			memLimit.Lock()
			memLimit.reserved -= bytes
			if memLimit.reserved <= 0 {
				memLimit.reserved = 0
				debug.SetMemoryLimit(math.MaxInt64)
			} else {
				debug.SetMemoryLimit(memLimit.reserved + memOverhead)
			}
			memLimit.Unlock()
		})
	}
}

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

// executableReserve is what of the promised maxMemoryMB + memOverhead the runtime's limit leaves to the pages of
// the executable: RSS counts those (about 23 MiB of the 30 MB data source binary when serving), the runtime's
// limit does not, so a heap held at the limit would put RSS that much over the promise. A static Go binary maps no
// other file. Its size, at most 64 MiB (a test binary is larger, and its pages are not all touched).
var executableReserve = sync.OnceValue(func() int64 {
	exe, err := os.Executable()
	if err != nil {
		return 32 << 20
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return 32 << 20
	}
	return min(fi.Size(), 64<<20)
})

// limitFor is the runtime's memory limit with reserved bytes of history caps: memOverhead more, executableReserve
// less.
func limitFor(reserved int64) int64 { return reserved + memOverhead - executableReserve() }

// memLimit sets the Go runtime's soft memory limit to the sum of the live instances' maxMemoryMB plus memOverhead,
// less executableReserve, so the garbage collector works harder before the process outgrows what the settings
// promise, instead of letting the heap double between collections. An operator's GOMEMLIMIT wins.
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
	debug.SetMemoryLimit(limitFor(memLimit.reserved))
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
				debug.SetMemoryLimit(limitFor(memLimit.reserved))
			}
			memLimit.Unlock()
		})
	}
}

package app

import (
	"os"
	"runtime/debug"
	"sync"
)

// MemoryLimit is the app process's soft memory limit: the garbage collector works harder before the process
// outgrows it, instead of letting the heap double between collections while many Viewers' /metrics checks and
// Admins' trace downloads are under way. An operator's GOMEMLIMIT wins.
const MemoryLimit = 256 << 20

var setMemoryLimit = sync.OnceFunc(func() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
})

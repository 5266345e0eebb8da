package datasource

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMemoryLimitLeavesRoomForTheExecutable checks that the runtime's limit is what maxMemoryMB + memOverhead
// promise less the executable's pages, which RSS counts and the runtime does not: with the heap held at the limit,
// RSS stays within the promise.
func TestMemoryLimitLeavesRoomForTheExecutable(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT set: the operator's limit wins")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := executableReserve(), min(fi.Size(), 64<<20); got != want || got <= 0 {
		t.Fatalf("executableReserve = %d, want the executable's size %d (at most 64 MiB)", got, want)
	}
	release := reserveMemory(512 << 20)
	defer release()
	// Other tests' instances reserve too: read the sum and the limit under the lock that sets them.
	memLimit.Lock()
	reserved, limit := memLimit.reserved, debug.SetMemoryLimit(-1)
	memLimit.Unlock()
	if want := reserved + memOverhead - executableReserve(); limit != want {
		t.Errorf("limit %d with %d reserved, want %d", limit, reserved, want)
	}
}

//go:build windows

package profilerconfig

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// lockTimeout bounds the wait for another Grafana process's write; a real write takes milliseconds.
const lockTimeout = 10 * time.Second

// lockFile takes an exclusive LockFileEx lock on the open lock file f and returns its release, which also closes f.
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	deadline := time.Now().Add(lockTimeout)
	for {
		err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = f.Close() // the lock is released or was never taken; nothing was written through f
			return nil, fmt.Errorf("timed out after %s waiting for the lock on %s: %v", lockTimeout, f.Name(), err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		_ = windows.UnlockFileEx(h, 0, 1, 0, ol)
		_ = f.Close() // the lock is released or was never taken; nothing was written through f
	}, nil
}

// keepOwner is a no-op: ownership follows the directory's ACL on Windows.
func keepOwner(*os.File, fs.FileInfo) bool { return true }

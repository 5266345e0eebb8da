//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package profilerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lockTimeout bounds the wait for another Grafana process's write; a real write takes milliseconds.
const lockTimeout = 10 * time.Second

// lockFile takes an exclusive advisory flock on the open lock file f (created if needed, never removed: removing
// a lock file lets two processes lock two different inodes) and returns its release, which also closes f.
func lockFile(f *os.File) (func(), error) {
	deadline := time.Now().Add(lockTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close() // the lock is released or was never taken; nothing was written through f
			return nil, ioError("lock", f.Name(), err)
		}
		if time.Now().After(deadline) {
			_ = f.Close() // the lock is released or was never taken; nothing was written through f
			return nil, fmt.Errorf("timed out after %s waiting for the lock on %s held by another process", lockTimeout, f.Name())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close() // the lock is released or was never taken; nothing was written through f
	}, nil
}

// keepOwner gives the new file the old file's owner, and reports whether it has it: always when this process
// owns the old file or is root, otherwise not.
func keepOwner(f *os.File, old fs.FileInfo) bool {
	if old == nil {
		return true
	}
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return true
	}
	return f.Chown(int(st.Uid), int(st.Gid)) == nil
}

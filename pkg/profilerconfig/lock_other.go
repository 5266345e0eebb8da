//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package profilerconfig

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile refuses: without an advisory lock, writes from two processes could interleave.
func lockFile(f *os.File) (func(), error) {
	_ = f.Close() // the lock is released or was never taken; nothing was written through f
	return nil, errors.New("writing profiler config files is not supported on this platform (no advisory file lock)")
}

func keepOwner(*os.File, fs.FileInfo) bool { return true }

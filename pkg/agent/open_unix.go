//go:build unix

package agent

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without blocking: a FIFO swapped in for a file would otherwise hold an OS
// thread until a writer comes.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // #nosec G304 -- the operator names the file on the agent's command line
}

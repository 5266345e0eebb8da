//go:build !unix

package agent

import "os"

// openNonBlocking opens path for reading (systems without FIFOs in the file system need no O_NONBLOCK).
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path) // #nosec G304 -- the operator names the file on the agent's command line
}

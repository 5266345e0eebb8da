//go:build !unix

package e2e

import "testing"

// refusedAddr needs a socket bound but never listening (refused_test.go), which only Unix offers through package
// syscall; elsewhere the tests that need a down endpoint are skipped rather than run with a port another server may
// take.
func refusedAddr(t *testing.T) string {
	t.Skip("a down endpoint needs a bound, non-listening socket (Unix only)")
	return ""
}

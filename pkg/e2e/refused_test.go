//go:build unix

package e2e

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// refusedAddr returns a loopback address that refuses connections for the whole test: a socket bound there but never
// listening. Closing a listener instead frees the port, and on a busy machine another test's server can take it and
// answer, so an endpoint meant to be down reads as up.
func refusedAddr(t *testing.T) string {
	t.Helper()
	// As package net does: no child started meanwhile inherits the socket before it is marked close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("bound socket has address %T", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}

// TestRefusedAddrStaysRefused holds refusedAddr to its promise: connecting is refused, and nothing else can listen on
// the address while the test runs.
func TestRefusedAddrStaysRefused(t *testing.T) {
	addr := refusedAddr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded, want refused", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("another listener took %s", addr)
	}
}

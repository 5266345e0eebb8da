// Package simtest runs the vLLM fleet simulator on loopback for tests.
package simtest

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// Start runs a simulator with the given command-line flags on a loopback port until the test ends and returns its
// /metrics URL.
func Start(t testing.TB, args ...string) string {
	t.Helper()
	url, _ := StartStoppable(t, args...)
	return url
}

// StartStoppable is Start that also returns stop, which shuts the simulator down before the test ends (an
// endpoint going away mid-test); stop is idempotent and runs at cleanup too.
func StartStoppable(t testing.TB, args ...string) (string, func()) {
	t.Helper()
	cfg, err := sim.ParseArgs(append([]string{"-addr=127.0.0.1:0"}, args...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("simulator: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return "http://" + ln.Addr().String() + "/metrics", stop
}

package e2e

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// startSim runs a simulator with the given command-line flags on a loopback port until the test ends and
// returns its /metrics URL.
func startSim(t *testing.T, args ...string) string {
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
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("simulator: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/metrics"
}

// profilerConfig writes an Ascend profiler config with metric_enable set and returns its path.
func profilerConfig(t *testing.T, metricEnable int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ms_service_profiler_config.json")
	if err := os.WriteFile(p, []byte(`{"enable": 0, "metric_enable": `+string(rune('0'+metricEnable))+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

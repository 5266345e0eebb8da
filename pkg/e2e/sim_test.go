package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/internal/simtest"
)

// startSim runs a simulator with the given command-line flags on a loopback port until the test ends and
// returns its /metrics URL.
func startSim(t *testing.T, args ...string) string { return simtest.Start(t, args...) }

// profilerConfig writes an Ascend profiler config with metric_enable set and returns its path.
func profilerConfig(t *testing.T, metricEnable int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ms_service_profiler_config.json")
	if err := os.WriteFile(p, []byte(`{"enable": 0, "metric_enable": `+string(rune('0'+metricEnable))+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

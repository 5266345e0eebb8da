package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// pluginProfiler fetches CPU profiles from a plugin started with Grafana's profiling settings, which the SDK serves
// on every interface at the port given: the benchmark reads it on loopback only.
type pluginProfiler struct{ port string }

// newPluginProfiler picks a free port and returns the profiler and the environment that opens it in a plugin.
func newPluginProfiler(tb testing.TB) (*pluginProfiler, []string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	if err != nil {
		tb.Fatal(err)
	}
	return &pluginProfiler{port: port}, []string{"GF_PLUGIN_PROFILING_ENABLED=true", "GF_PLUGIN_PROFILING_PORT=" + port}
}

// profileTimeout bounds a profile's fetch beyond its own length: the server answers when the sampling ends.
const profileTimeout = time.Minute

// cpu samples the plugin's CPU for d (whole seconds, at least one) and writes the profile to file.
func (p *pluginProfiler) cpu(ctx context.Context, d time.Duration, file string) error {
	secs := max(int((d+time.Second-1)/time.Second), 1)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+profileTimeout)
	defer cancel()
	url := fmt.Sprintf("http://127.0.0.1:%s/debug/pprof/profile?seconds=%d", p.port, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("plugin CPU profile: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("plugin CPU profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("plugin CPU profile: %s: %.200s", resp.Status, body)
	}
	if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b { // a pprof profile is gzipped protobuf
		return fmt.Errorf("plugin CPU profile: the answer is not a gzipped profile (%d bytes)", len(body))
	}
	return os.WriteFile(file, body, 0o600)
}

// profileFile is where -fleet.cpuprofile puts a sub-benchmark's profile: the benchmark's name (its slashes and
// equals signs made dashes) before the extension.
func profileFile(base, benchmark string) string {
	ext := filepath.Ext(base)
	name := strings.NewReplacer("/", "-", "=", "-").Replace(benchmark)
	return strings.TrimSuffix(base, ext) + "-" + name + ext
}

// TestPluginProfilerReadsTheBuiltPlugin is -fleet.cpuprofile's path on the built data source, which the
// benchmarks run in CI never take: Grafana's profiling settings open the port, and a second's CPU profile comes back.
func TestPluginProfilerReadsTheBuiltPlugin(t *testing.T) {
	exe := harness.Executable(t, harness.DatasourceExecutable)
	prof, env := newPluginProfiler(t)
	harness.Start(t, exe, env...)
	file := profileFile(filepath.Join(t.TempDir(), "cpu.pprof"), t.Name())
	// The SDK opens the port beside the plugin's start, not before its handshake: a bounded wait for it.
	var err error
	waitUntil(30*time.Second, func() bool {
		err = prof.cpu(context.Background(), time.Second, file)
		return err == nil || !strings.Contains(err.Error(), "connection refused")
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s: %v", file, err)
	}
	if got, want := profileFile("/tmp/cpu.pprof", "BenchmarkFleetDashboard/endpoints=256/mode=direct"),
		"/tmp/cpu-BenchmarkFleetDashboard-endpoints-256-mode-direct.pprof"; got != want {
		t.Errorf("profileFile = %s, want %s", got, want)
	}
}

package promtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Engine is a PromQL server the tests compare with. The zero value is Prometheus 2, what the package started before
// it knew others, so existing callers keep their server.
type Engine int

const (
	// Prometheus2 is Debian's prometheus package (2.42 on bookworm): prometheus and promtool on PATH.
	Prometheus2 Engine = iota
	// Prometheus3 is Prometheus Prometheus3Version built from its Go module (see .ci/run): prometheus and promtool in
	// $INFERSCOPE_PROMETHEUS3 (a directory, or the prometheus binary in it) or else in CacheDir.
	Prometheus3
	// VictoriaMetrics is Debian's victoria-metrics package (1.79 on bookworm), started by the test itself; the
	// package's own service is never used.
	VictoriaMetrics
	// VictoriaMetrics151 is single-node VictoriaMetrics VictoriaMetrics151Version, built from its Go module by
	// scripts/engines.sh into CacheDir()/victoria-metrics-<version>.
	VictoriaMetrics151
	// ThanosHA is an HA pair behind Thanos ThanosVersion: two Prometheus 3 with the same targets and samples,
	// external labels replica="a" and "b", a sidecar each and a querier deduplicating ReplicaLabel
	// (Options.NoDedup leaves it out, as a misconfigured querier would).
	ThanosHA
	// ThanosShards is two Prometheus 3 holding half the endpoints each (shard="0" and "1"), a sidecar each and one
	// Thanos querier over both.
	ThanosShards
	// Cortex is Cortex CortexVersion as one process (-target=all, blocks on the local filesystem), fed through the
	// remote-write protocol under the tenant Tenant and queried under /prometheus with the TenantHeader.
	Cortex
)

// AllEngines lists every engine the tests know, in a stable order.
var AllEngines = []Engine{Prometheus2, Prometheus3, VictoriaMetrics, VictoriaMetrics151, ThanosHA, ThanosShards, Cortex}

// ScaleEngines are the engines that stand for a fleet beyond one Prometheus: current VictoriaMetrics, Thanos over
// an HA pair and over shards, and a multi-tenant Cortex.
var ScaleEngines = []Engine{VictoriaMetrics151, ThanosHA, ThanosShards, Cortex}

// Prometheus3Version is the Prometheus 3 release CI builds (module github.com/prometheus/prometheus v0.316.0).
const Prometheus3Version = "3.16.0"

// Prometheus3Env names the variable that points at a Prometheus 3 build (a directory holding prometheus and promtool,
// or the prometheus binary itself).
const Prometheus3Env = "INFERSCOPE_PROMETHEUS3"

// String is the engine's short name, usable as a subtest name.
func (e Engine) String() string {
	switch e {
	case Prometheus2:
		return "prometheus2"
	case Prometheus3:
		return "prometheus3"
	case VictoriaMetrics:
		return "victoriametrics"
	case VictoriaMetrics151:
		return "victoriametrics-1.151"
	case ThanosHA:
		return "thanos-ha"
	case ThanosShards:
		return "thanos-shards"
	case Cortex:
		return "cortex"
	}
	return fmt.Sprintf("engine%d", int(e))
}

// IsVictoriaMetrics reports whether the engine is a VictoriaMetrics (MetricsQL: rates without extrapolation).
func (e Engine) IsVictoriaMetrics() bool { return e == VictoriaMetrics || e == VictoriaMetrics151 }

// IsPrometheus reports whether the engine is a Prometheus (promtool backfills it, its TSDB directory can be served).
func (e Engine) IsPrometheus() bool { return e == Prometheus2 || e == Prometheus3 }

// CacheDir is where .ci/run and scripts/test.sh keep the Prometheus 3 build: $XDG_CACHE_HOME/inferscope-bin, else
// ~/.cache/inferscope-bin.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "inferscope-bin")
}

// tools are the executables an engine needs.
func (e Engine) tools() []string {
	switch e {
	case VictoriaMetrics, VictoriaMetrics151:
		return []string{"victoria-metrics"}
	case ThanosHA, ThanosShards:
		return []string{"thanos", "prometheus", "promtool"}
	case Cortex:
		return []string{"cortex", "prometheus", "promtool"}
	}
	return []string{"prometheus", "promtool"}
}

func (e Engine) installHint() string {
	switch e {
	case Prometheus2:
		return "install Debian's prometheus package (apt-get install prometheus)"
	case Prometheus3:
		return fmt.Sprintf("build Prometheus %s into %s as .ci/run does, or point %s at a directory holding prometheus and promtool %s",
			Prometheus3Version, CacheDir(), Prometheus3Env, Prometheus3Version)
	case VictoriaMetrics:
		return "install Debian's victoria-metrics package (apt-get install victoria-metrics)"
	case VictoriaMetrics151, ThanosHA, ThanosShards, Cortex:
		return fmt.Sprintf("run scripts/engines.sh as root (or with --ci), which builds it into %s (and Prometheus %s beside it)",
			CacheDir(), Prometheus3Version)
	}
	return ""
}

var versionRe = regexp.MustCompile(`version (\S+)`)

// versions caches `<binary> --version` per path: each is asked once per test process.
var versions sync.Map // path -> versionResult

type versionResult struct {
	version string
	err     error
}

func binaryVersion(path string) (string, error) {
	if v, ok := versions.Load(path); ok {
		r := v.(versionResult)
		return r.version, r.err
	}
	out, err := exec.Command(path, "--version").CombinedOutput() // #nosec G204 G702 -- path is a test engine found on PATH or in the test cache directory, run with a fixed argument
	r := versionResult{err: err}
	if err == nil {
		if m := versionRe.FindSubmatch(out); m != nil {
			r.version = string(m[1])
		} else {
			r.err = fmt.Errorf("%s --version printed no version: %q", path, out)
		}
	}
	versions.Store(path, r)
	return r.version, r.err
}

// lookup finds one of an engine's executables, checking a Prometheus's major version so a Prometheus 3 on PATH is
// never taken for Debian's 2.x (or the reverse).
func lookup(e Engine, name string) (string, error) {
	var path string
	switch e {
	case Prometheus2, VictoriaMetrics:
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s not found on PATH", name)
		}
		path = p
	case Prometheus3:
		dir := CacheDir()
		if env := os.Getenv(Prometheus3Env); env != "" {
			dir = env
			if st, err := os.Stat(env); err == nil && !st.IsDir() { // #nosec G703 -- $INFERSCOPE_PROMETHEUS3 is set by whoever runs the tests, to point at their own Prometheus
				dir = filepath.Dir(env)
			}
		}
		path = filepath.Join(dir, name)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 { // #nosec G703 -- the test cache directory or $INFERSCOPE_PROMETHEUS3 (above), only checked for an executable
			return "", fmt.Errorf("%s not found in %s", name, dir)
		}
	case VictoriaMetrics151, ThanosHA, ThanosShards, Cortex:
		var version string
		switch name {
		case "prometheus", "promtool":
			return lookup(Prometheus3, name)
		case "victoria-metrics":
			version = VictoriaMetrics151Version
		case "thanos":
			version = ThanosVersion
		case "cortex":
			version = CortexVersion
		}
		path = scaleBinary(name, version, name)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 { // #nosec G703 -- the test cache directory, only checked for an executable
			return "", fmt.Errorf("%s %s not found in %s", name, version, filepath.Dir(path))
		}
		return path, nil
	default:
		return "", fmt.Errorf("unknown engine %d", int(e))
	}
	if e.IsPrometheus() {
		v, err := binaryVersion(path)
		if err != nil {
			return "", err
		}
		want := "2."
		if e == Prometheus3 {
			want = Prometheus3Version
		}
		if !strings.HasPrefix(v, want) {
			return "", fmt.Errorf("%s reports version %s, want %s", path, v, strings.TrimSuffix(want, "."))
		}
	}
	return path, nil
}

// available reports why an engine cannot run here, or nil.
func available(e Engine) error {
	for _, name := range e.tools() {
		if _, err := lookup(e, name); err != nil {
			return err
		}
	}
	return nil
}

// missing skips the test outside CI and fails it in CI, where .ci/run installs every engine.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// EngineBinary returns the path of one of an engine's executables ("prometheus", "promtool" or
// "victoria-metrics"), skipping the test where it is missing outside CI and failing it in CI.
func EngineBinary(t testing.TB, e Engine, name string) string {
	t.Helper()
	p, err := lookup(e, name)
	if err != nil {
		missing(t, fmt.Sprintf("%s: %v: %s", e, err, e.installHint()))
	}
	return p
}

// Engines returns the engines this machine can run, for tests that compare with each:
//
//	for _, eng := range promtest.Engines(t) {
//		t.Run(eng.String(), func(t *testing.T) { s := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: om}) … })
//	}
//
// In CI a missing engine fails the test (.ci/run installs them all); elsewhere it is logged and left out, and the
// test is skipped when none is left.
func Engines(t testing.TB) []Engine {
	t.Helper()
	return EnginesOf(t, AllEngines...)
}

// EnginesOf is Engines limited to the given engines.
func EnginesOf(t testing.TB, want ...Engine) []Engine {
	t.Helper()
	var out []Engine
	var why []string
	for _, e := range want {
		if err := available(e); err != nil {
			why = append(why, fmt.Sprintf("%s: %v: %s", e, err, e.installHint()))
			continue
		}
		out = append(out, e)
	}
	if len(why) > 0 {
		msg := "engines not available:\n  " + strings.Join(why, "\n  ")
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		if len(out) == 0 {
			t.Skip(msg)
		}
		t.Log(msg)
	}
	return out
}

// Version is the engine's version as its binary reports it (empty for VictoriaMetrics, whose Debian build does not
// say), or "" when the engine is missing.
func (e Engine) Version() string {
	if !e.IsPrometheus() {
		return ""
	}
	p, err := lookup(e, "prometheus")
	if err != nil {
		return ""
	}
	v, _ := binaryVersion(p)
	return v
}

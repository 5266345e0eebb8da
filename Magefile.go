//go:build mage

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"

	"github.com/inferscope/inferscope-vllm/pkg/packaging"
)

// backendTarget is one plugin's backend: where its plugin.json is, which main package it builds and where
// Grafana looks for the executable (next to that plugin's plugin.json inside dist/).
type backendTarget struct {
	name       string
	pluginJSON string
	mainPkg    string
	out        string
}

// The data source comes first so that the app's build writes the root dist/go_plugin_build_manifest last.
var backendTargets = []backendTarget{
	{"data source", "src/datasource", "./pkg/cmd/datasource", "dist/datasource"},
	{"app", ".", "./pkg/cmd/app", "dist"},
}

// platforms are the ones Grafana publishes for; the plugin validator needs linux/amd64 for every backend.
var platforms = [][2]string{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"},
}

// Default builds both backends for every platform.
var Default = BuildPlugins

// BuildPlugins builds the app and data source backends for every supported platform into dist/.
func BuildPlugins() error { return buildBackends(platforms) }

// BuildPluginsLocal builds both backends for this machine only, for a quick edit-test loop.
func BuildPluginsLocal() error {
	return buildBackends([][2]string{{runtime.GOOS, runtime.GOARCH}})
}

// Package zips the built dist/ into inferscope-vllm-app-<version>.zip with .sha256 and .md5 files beside it, in the
// repository root (npm run package builds first).
func Package() error {
	r, err := packaging.Build("dist", ".")
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s, %s, %s\n", r.Zip, r.SHA256, r.MD5)
	return nil
}

// buildBackends runs the SDK's build once per plugin and platform. It calls build.Build methods directly:
// mg.Deps would memoize build.BuildAll after the first plugin and silently skip the second, and the SDK's
// before-build callback is a package global, so the builds must run one after another.
func buildBackends(plats [][2]string) error {
	for _, t := range backendTargets {
		t := t
		if err := build.SetBeforeBuildCallback(func(cfg build.Config) (build.Config, error) {
			cfg.PluginJSONPath, cfg.RootPackagePath, cfg.OutputBinaryPath = t.pluginJSON, t.mainPkg, t.out
			return cfg, nil
		}); err != nil {
			return err
		}
		for _, p := range plats {
			fmt.Printf("building %s backend for %s/%s\n", t.name, p[0], p[1])
			if err := (build.Build{}).Custom(p[0], p[1]); err != nil {
				return fmt.Errorf("%s backend for %s/%s: %w", t.name, p[0], p[1], err)
			}
		}
	}
	// Each SDK build also writes a manifest next to its output; only the root one belongs in the archive.
	if err := os.Remove(filepath.Join("dist", "datasource", "go_plugin_build_manifest")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return chmodExecutables()
}

// chmodExecutables makes every backend executable 0755, which Grafana and the plugin validator require.
func chmodExecutables() error {
	for _, glob := range []string{"dist/gpx_*", "dist/datasource/gpx_*"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := os.Chmod(f, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

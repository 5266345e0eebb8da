package packaging

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

const appID = "inferscope-vllm-app"

var (
	archiveOnce sync.Once
	archive     Archive
	archiveErr  error
)

// zipEnv names a release zip (as npm run package writes it) for the checks to read instead of zipping dist/: CI
// checks the very archive it would publish.
const zipEnv = "INFERSCOPE_PLUGIN_ZIP"

// builtArchive reads the release zip named by $INFERSCOPE_PLUGIN_ZIP, or else zips the real dist/ exactly as a
// release would and reads it back, once per test run.
func builtArchive(t *testing.T) (Archive, string) {
	t.Helper()
	root := harness.RepoRoot(t)
	if zipPath := os.Getenv(zipEnv); zipPath != "" {
		archiveOnce.Do(func() { archive, archiveErr = ReadZip(zipPath) })
		if archiveErr != nil {
			t.Fatalf("%s=%s: %v", zipEnv, zipPath, archiveErr)
		}
		return archive, root
	}
	dist := filepath.Join(root, "dist")
	if _, err := os.Stat(filepath.Join(dist, "plugin.json")); err != nil {
		t.Fatalf("dist/ is not built: run npm run package, or npm run build and go tool mage -v, first (%v)", err)
	}
	archiveOnce.Do(func() {
		dir, err := os.MkdirTemp("", "inferscope-archive")
		if err != nil {
			archiveErr = err
			return
		}
		defer os.RemoveAll(dir)
		zipPath := filepath.Join(dir, appID+".zip")
		if archiveErr = Zip(dist, appID, zipPath); archiveErr == nil {
			archive, archiveErr = ReadZip(zipPath)
		}
	})
	if archiveErr != nil {
		t.Fatal(archiveErr)
	}
	return archive, root
}

func TestBuiltArchivePassesChecks(t *testing.T) {
	a, root := builtArchive(t)
	for _, p := range Check(a, root) {
		t.Error(p)
	}
	for _, want := range []string{
		"plugin.json", "module.js", "datasource/plugin.json", "datasource/module.js", "img/logo.svg",
		"datasource/img/logo.svg", "dashboards/vllm-minimal.json", "go_plugin_build_manifest",
		"gpx_inferscope_app_linux_amd64", "datasource/gpx_inferscope_datasource_windows_amd64.exe",
		// src/README.md (the catalog page) points at these provisioning examples inside the archive.
		"provisioning/alerting/inferscope-rules.yaml", "provisioning/datasources/datasources.yaml",
	} {
		if _, ok := a[appID+"/"+want]; !ok {
			t.Errorf("archive lacks %s", want)
		}
	}
}

// TestCheckFindsProblems breaks a copy of the real archive one way at a time and expects the matching rule.
func TestCheckFindsProblems(t *testing.T) {
	base, root := builtArchive(t)
	editJSON := func(a Archive, name string, edit func(m map[string]any)) {
		var m map[string]any
		if err := json.Unmarshal(a[name].Data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		a[name] = File{Mode: a[name].Mode, Data: b}
	}
	cases := []struct {
		name   string
		break_ func(a Archive) Archive
		rule   string
		text   string
	}{
		{"second top-level folder", func(a Archive) Archive {
			a["extra/file.txt"] = File{Mode: 0o644, Data: []byte("x")}
			return a
		}, "archive", "exactly one top-level folder"},
		{"folder not named after id", func(a Archive) Archive {
			out := Archive{}
			for n, f := range a {
				out["dist/"+strings.TrimPrefix(n, appID+"/")] = f
			}
			return out
		}, "archivename", `named after the plugin id`},
		{"linux executable missing", func(a Archive) Archive {
			delete(a, appID+"/datasource/gpx_inferscope_datasource_linux_amd64")
			return a
		}, "backendbinary", "gpx_inferscope_datasource_linux_amd64 is missing"},
		{"executable not 0755", func(a Archive) Archive {
			f := a[appID+"/gpx_inferscope_app_linux_arm64"]
			a[appID+"/gpx_inferscope_app_linux_arm64"] = File{Mode: 0o644, Data: f.Data}
			return a
		}, "binarypermissions", "want 0755"},
		{"linux_amd64 file built for another platform", func(a Archive) Archive {
			a[appID+"/gpx_inferscope_app_linux_amd64"] = a[appID+"/gpx_inferscope_app_darwin_arm64"]
			return a
		}, "backendbinary", "built for darwin/arm64"},
		{"nested plugin not included", func(a Archive) Archive {
			editJSON(a, appID+"/plugin.json", func(m map[string]any) {
				var keep []any
				for _, inc := range m["includes"].([]any) {
					if inc.(map[string]any)["type"] != "datasource" {
						keep = append(keep, inc)
					}
				}
				m["includes"] = keep
			})
			return a
		}, "includesnested", "not declared"},
		{"dashboard included twice", func(a Archive) Archive {
			editJSON(a, appID+"/plugin.json", func(m map[string]any) {
				incs := m["includes"].([]any)
				for _, inc := range incs {
					if inc.(map[string]any)["type"] == "dashboard" {
						m["includes"] = append(incs, inc)
						break
					}
				}
			})
			return a
		}, "includes", "included twice"},
		{"nested logo missing", func(a Archive) Archive {
			delete(a, appID+"/datasource/img/logo.svg")
			return a
		}, "metadatapaths", "datasource/img/logo.svg does not exist"},
		{"module.js missing", func(a Archive) Archive {
			delete(a, appID+"/datasource/module.js")
			return a
		}, "modulejs", "datasource/plugin.json"},
		{"alerting without backend", func(a Archive) Archive {
			editJSON(a, appID+"/datasource/plugin.json", func(m map[string]any) { m["backend"] = false })
			return a
		}, "backendbinary", "alerting needs backend"},
		{"template README", func(a Archive) Archive {
			a[appID+"/README.md"] = File{Mode: 0o644, Data: []byte("# Grafana App Plugin Template\n")}
			return a
		}, "templatereadme", "template"},
		{"no CHANGELOG", func(a Archive) Archive {
			delete(a, appID+"/CHANGELOG.md")
			return a
		}, "changelog", "missing"},
		{"version not replaced", func(a Archive) Archive {
			editJSON(a, appID+"/plugin.json", func(m map[string]any) { m["info"].(map[string]any)["version"] = "%VERSION%" })
			return a
		}, "metadatavalid", "not filled in"},
		{"dashboard include missing", func(a Archive) Archive {
			delete(a, appID+"/dashboards/vllm-minimal.json")
			return a
		}, "metadatapaths", "dashboards/vllm-minimal.json does not exist"},
		{"screenshot rendered without its font", func(a Archive) Archive {
			var buf bytes.Buffer
			if err := png.Encode(&buf, boxes(30, true)); err != nil {
				t.Fatal(err)
			}
			a[appID+"/img/screenshots/query-editor-zh-Hans.png"] = File{Mode: 0o644, Data: buf.Bytes()}
			return a
		}, "screenshots", "query-editor-zh-Hans.png shows 30 empty boxes"},
		{"no links", func(a Archive) Archive {
			editJSON(a, appID+"/datasource/plugin.json", func(m map[string]any) { delete(m["info"].(map[string]any), "links") })
			return a
		}, "links", "datasource/plugin.json: info.links is empty"},
		{"debug leftover", func(a Archive) Archive {
			a[appID+"/standalone.txt"] = File{Mode: 0o644, Data: []byte("1")}
			return a
		}, "backenddebug", "standalone.txt"},
		{"stale Go manifest", func(a Archive) Archive {
			a[appID+"/go_plugin_build_manifest"] = File{Mode: 0o755, Data: []byte("00:pkg/cmd/app/main.go\n")}
			return a
		}, "gomanifest", "changed since the build"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Archive{}
			for n, f := range base {
				a[n] = f
			}
			src := ""
			if tc.rule == "gomanifest" {
				src = root // only the manifest case needs the sources hashed again
			}
			problems := Check(tc.break_(a), src)
			for _, p := range problems {
				if p.Rule == tc.rule && strings.Contains(p.Message, tc.text) {
					return
				}
			}
			t.Fatalf("want a %s problem mentioning %q, got %v", tc.rule, tc.text, problems)
		})
	}
}

package datasource

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

var updateSettings = flag.Bool("update-settings", false, "rewrite src/datasource/settings.gen.ts from settings.go")

// settingsTS is the config editor's copy of the settings' defaults and bounds; TestSettingsTypeScriptIsCurrent fails
// when it is out of step, and `go test ./pkg/datasource -run SettingsTypeScript -update-settings` rewrites it.
const settingsTS = "../../src/datasource/settings.gen.ts"

// renderSettingsTS is settings.gen.ts: every default and bound the config editor shows or checks.
func renderSettingsTS() []byte {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	var b bytes.Buffer
	b.WriteString("// Generated from pkg/datasource/settings.go by `go test ./pkg/datasource -run SettingsTypeScript -update-settings`; do not edit.\n\n")
	b.WriteString("/** SETTINGS are the data source settings' defaults and bounds (pkg/datasource settings.go). */\nexport const SETTINGS = {\n")
	for _, f := range []struct {
		name  string
		value any
	}{
		{"defaultScrapeInterval", short(DefaultScrapeInterval)},
		{"defaultScrapeIntervalMs", ms(DefaultScrapeInterval)},
		{"defaultScrapeTimeout", short(defaultTimeout(DefaultScrapeInterval))},
		{"defaultRetention", short(DefaultRetention)},
		{"defaultMaxMemoryMB", DefaultMaxMemoryMB},
		{"defaultMaxBodyMB", scraper.DefaultMaxBodyBytes >> 20},
		{"defaultMaxSamples", scraper.DefaultMaxSamples},
		{"minMemoryMB", MinMemoryMB},
		{"maxMemoryMB", MaxMemoryMB},
		{"maxBodyMB", MaxBodyMB},
		{"maxSamples", MaxSamples},
		{"minScrapeIntervalMs", ms(MinScrapeInterval)},
		{"minScrapeInterval", short(MinScrapeInterval)},
		{"maxScrapeIntervalMs", ms(MaxScrapeInterval)},
		{"maxScrapeInterval", short(MaxScrapeInterval)},
		{"maxRetentionMs", ms(MaxRetention)},
		{"maxRetention", short(MaxRetention)},
		{"maxEndpoints", MaxEndpoints},
		{"defaultDiscoveryInterval", short(discovery.DefaultInterval)},
		{"minDiscoveryIntervalMs", ms(discovery.MinInterval)},
		{"minDiscoveryInterval", short(discovery.MinInterval)},
		{"maxDiscoveryIntervalMs", ms(discovery.MaxInterval)},
		{"maxDiscoveryInterval", short(discovery.MaxInterval)},
		{"maxDiscoverySources", discovery.MaxSources},
		{"defaultOverlapWindow", short(DefaultOverlapWindow)},
		{"minOverlapWindowMs", ms(MinOverlapWindow)},
		{"maxOverlapWindowMs", ms(MaxOverlapWindow)},
		{"maxOverlapWindow", short(MaxOverlapWindow)},
		{"maxPeak", query.MaxPeak},
	} {
		switch v := f.value.(type) {
		case string:
			fmt.Fprintf(&b, "  %s: '%s',\n", f.name, v)
		case float64:
			fmt.Fprintf(&b, "  %s: %s,\n", f.name, strconv.FormatFloat(v, 'f', -1, 64))
		default:
			fmt.Fprintf(&b, "  %s: %v,\n", f.name, v)
		}
	}
	b.WriteString("} as const;\n\n")
	fmt.Fprintf(&b, "/** MODE names the data source's modes; a data source that names none is in %s mode. */\n", ModeDirect)
	fmt.Fprintf(&b, "export const MODE = {\n  %s: '%s',\n  %s: '%s',\n} as const;\n", ModeDirect, ModeDirect, ModePrometheus, ModePrometheus)
	types := make([]string, len(discovery.Types))
	for i, t := range discovery.Types {
		types[i] = string(t)
	}
	tsList(&b, "DISCOVERY_TYPES", "the discovery sources' kinds (pkg/discovery), in the order the editor offers them", types)
	tsList(&b, "KUBERNETES_ROLES", "what a kubernetes source follows (pkg/discovery), the default first", discovery.KubernetesRoles)
	return b.Bytes()
}

// tsList writes a documented constant list of strings.
func tsList(b *bytes.Buffer, name, doc string, values []string) {
	fmt.Fprintf(b, "\n/** %s are %s. */\nexport const %s = [", name, doc, name)
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "'%s'", v)
	}
	b.WriteString("] as const;\n")
}

func TestSettingsTypeScriptIsCurrent(t *testing.T) {
	want := renderSettingsTS()
	if *updateSettings {
		if err := os.WriteFile(settingsTS, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(settingsTS)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of step with settings.go: run go test ./pkg/datasource -run SettingsTypeScript -update-settings", settingsTS)
	}
}

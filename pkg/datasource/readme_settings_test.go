package datasource

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

// grafanaJSONData are the jsonData fields Grafana's own HTTP settings write, which the README's settings table
// documents beside the data source's.
var grafanaJSONData = []string{"timeout"}

// TestReadmeDocumentsEverySetting keeps the README's settings table, the config editor's type and Settings in step:
// every jsonData field of Settings has a row and a field of VllmOptions, every row names a setting, and the defaults
// the table states are the ones LoadSettings applies.
func TestReadmeDocumentsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	types, err := os.ReadFile("../../src/datasource/types.ts")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	st := reflect.TypeFor[Settings]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields = append(fields, name)
		}
	}
	// The table's rows: | `field`[, `field`] | meaning | default |
	rows := map[string]string{} // field → its default column
	inTable := false
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| jsonData field |") {
			inTable = true
			continue
		}
		if inTable && !strings.HasPrefix(line, "|") {
			break
		}
		if !inTable || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for _, m := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(cells[0], -1) {
			rows[m[1]] = strings.TrimSpace(cells[len(cells)-1])
		}
	}
	if len(rows) == 0 {
		t.Fatal("the README has no settings table (a row starting | jsonData field |)")
	}
	for _, f := range fields {
		if _, ok := rows[f]; !ok {
			t.Errorf("setting %s has no row in the README's settings table", f)
		}
		if !regexp.MustCompile(`(?m)^\s*` + f + `\?:`).Match(types) {
			t.Errorf("setting %s is not a field of VllmOptions (src/datasource/types.ts)", f)
		}
	}
	for r := range rows {
		if !slices.Contains(fields, r) && !slices.Contains(grafanaJSONData, r) {
			t.Errorf("the README's settings table documents %s, which is no setting", r)
		}
	}
	for field, want := range map[string]string{
		"mode":                          "`" + string(ModeDirect) + "`",
		"scrapeInterval":                "`" + short(DefaultScrapeInterval) + "`",
		"retention":                     "`" + short(DefaultRetention) + "`",
		"maxMemoryMB":                   "`512`",
		"incrementalQuerying":           "`true`",
		"incrementalQueryOverlapWindow": "`" + short(DefaultOverlapWindow) + "`",
		"discoveryInterval":             "`" + short(discovery.DefaultInterval) + "`",
		"accelerator":                   "`" + measure.DefaultAccelerator + "`",
	} {
		if got := rows[field]; got != want {
			t.Errorf("the README's default for %s is %q, LoadSettings applies %s", field, got, want)
		}
	}
	if DefaultMaxMemoryMB != 512 {
		t.Errorf("DefaultMaxMemoryMB is %d: update the README's maxMemoryMB row and this test", DefaultMaxMemoryMB)
	}
}

package vllm

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's generated release table")

// The README's table of every name the product reads by release is generated from the provenance table;
// `go test ./pkg/vllm -run Versions -update` rewrites it.
const (
	readmePath    = "../../README.md"
	versionsBegin = "<!-- versions:begin (generated from pkg/vllm by `go test ./pkg/vllm -run Versions -update`) -->\n"
	versionsEnd   = "<!-- versions:end -->\n"
)

// renderVersions is one row per name the catalog reads (Ray Serve's re-exports in one row), sorted by name.
func renderVersions() string {
	names := map[string]bool{}
	for _, s := range Signals {
		for _, n := range s.Names {
			if !strings.HasPrefix(n, RayPrefixes[0]) && !strings.HasPrefix(n, RayPrefixes[1]) {
				names[n] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	b.WriteString(versionsBegin)
	b.WriteString("\n| name | project | releases | declared in |\n| --- | --- | --- | --- |\n")
	for _, n := range sorted {
		o, _ := Provenance(n)
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` |\n", n, o.Project, o.Span(), o.File)
	}
	fmt.Fprintf(&b, "| `%s` | %s | %s from %s (`ray_vllm:` before %s) | `%s` |\n", RayExport.Name, RayExport.Project,
		"each vLLM name's releases,", RayExport.First, RaySanitizedSince, RayExport.File)
	fmt.Fprintf(&b, "\nvLLM releases read: %s; \"0.6.0\" means 0.6.0 or earlier, \"current\" that %s and main still have it. "+
		"The simulator's `-vllm-version` speaks %s.\n", VLLMReleasesRead, NewestRelease(), simReleaseList())
	for _, p := range []string{ProjectDynamo, ProjectAscend, ProjectLMCache} {
		fmt.Fprintf(&b, "\n%s releases read: %s.\n", p, OtherReleases[p].Where)
	}
	b.WriteString("\n" + versionsEnd)
	return b.String()
}

func simReleaseList() string {
	var out []string
	for _, r := range SimReleases {
		out = append(out, r.Tag)
	}
	return strings.Join(out, ", ")
}

func TestVersionsTableIsCurrent(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, versionsBegin), strings.Index(readme, versionsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no release table block (%q … %q)", versionsBegin, versionsEnd)
	}
	want := renderVersions()
	if *update {
		readme = readme[:i] + want + readme[j+len(versionsEnd):]
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme[i:j+len(versionsEnd)] != want {
		t.Errorf("README.md's release table is out of step with pkg/vllm: run go test ./pkg/vllm -run Versions -update")
	}
}

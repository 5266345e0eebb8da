package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// The editors and the README read the catalog through two generated files; these tests fail when either is out of
// step with pkg/measure, and `go test ./pkg/query -run Catalog -update` rewrites both.
const (
	catalogJSON = "../../src/datasource/catalog.json"
	readmePath  = "../../README.md"
	readmeBegin = "<!-- catalog:begin (generated from pkg/measure by `go test ./pkg/query -run Catalog -update`) -->\n"
	readmeEnd   = "<!-- catalog:end -->\n"
)

// editorCatalog is what src/datasource/catalog.json holds.
type editorCatalog struct {
	Types            []measure.TypeInfo              `json:"types"`
	Measures         map[measure.Type]editorMeasures `json:"measures"`
	LatencyMetrics   []measure.Family                `json:"latencyMetrics"`
	DefaultMetric    string                          `json:"defaultMetric"`
	TimerPrefix      string                          `json:"timerPrefix"`
	Scores           []string                        `json:"scores"`
	GroupBy          []Group                         `json:"groupBy"`
	DefaultQuantiles []float64                       `json:"defaultQuantiles"`
	DefaultHeadroom  float64                         `json:"defaultHeadroom"`
	Accelerators     []measure.Accelerator           `json:"accelerators"`
	DefaultAccel     string                          `json:"defaultAccelerator"`
	MaxPeak          float64                         `json:"maxPeak"`
}

type editorMeasures struct {
	Defaults []string         `json:"defaults"`
	Options  []*measure.Entry `json:"options"`
}

func renderEditorCatalog() []byte {
	c := editorCatalog{
		Types: measure.Types, Measures: map[measure.Type]editorMeasures{}, LatencyMetrics: measure.Families,
		DefaultMetric: measure.DefaultFamily, TimerPrefix: measure.TimerPrefix, Scores: measure.Scores,
		GroupBy: []Group{GroupEngine, GroupEndpoint, GroupModel, GroupFleet, GroupRole}, DefaultQuantiles: DefaultQuantiles,
		DefaultHeadroom: DefaultHeadroom, Accelerators: measure.Accelerators, DefaultAccel: measure.DefaultAccelerator, MaxPeak: MaxPeak,
	}
	for _, t := range measure.Types {
		m := editorMeasures{Defaults: measure.Defaults(t.Type), Options: []*measure.Entry{}}
		for _, e := range measure.Catalog {
			if e.Type == t.Type {
				m.Options = append(m.Options, e)
			}
		}
		c.Measures[t.Type] = m
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// renderReadmeCatalog is the README's measure table: one row per entry, defaults in bold.
func renderReadmeCatalog() string {
	var b strings.Builder
	b.WriteString(readmeBegin)
	b.WriteString("\n| queryType | measure | outputs (unit) | what it computes | flavors; releases (see *Metric names by release*) |\n| --- | --- | --- | --- | --- |\n")
	for _, e := range measure.Catalog {
		name := "`" + e.Name + "`"
		if e.Default {
			name = "**" + name + "**"
		}
		var outs []string
		for _, o := range e.Outputs {
			n := "`" + strings.ReplaceAll(o.Name, measure.MetricName, "<metric>") + "`"
			if o.Name == "" {
				n = "the metric's name"
			}
			switch o.Unit {
			case "":
			case measure.MetricUnit:
				n += " (the family's unit)"
			default:
				n += " (" + o.Unit + ")"
			}
			outs = append(outs, n)
		}
		fl := make([]string, len(e.Flavors))
		for i, f := range e.Flavors {
			fl[i] = string(f)
		}
		flavors := strings.Join(fl, ", ")
		if len(e.Needs) > 0 {
			flavors += ", with " + strings.Join(e.Needs, " or ")
		}
		var names []string
		for _, s := range e.Signals() {
			names = append(names, s.Names...)
		}
		if note := vllm.ReleaseNote(names); note != "" {
			flavors += "; " + note
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", e.Type, name, strings.Join(outs, ", "),
			strings.ReplaceAll(e.Description, "|", `\|`), flavors)
	}
	fams := make([]string, len(measure.Families))
	for i, f := range measure.Families {
		fams[i] = "`" + f.Name + "` (" + f.Label + ")"
	}
	fmt.Fprintf(&b, "\nLatency families (`metric`, default `%s`): %s, or `%s<vllm_profiling_… histogram>` for an Ascend profiler timer.\n",
		measure.DefaultFamily, strings.Join(fams, ", "), measure.TimerPrefix)
	b.WriteString("\n" + readmeEnd)
	return b.String()
}

func TestCatalogEditorFileIsCurrent(t *testing.T) {
	want := renderEditorCatalog()
	if *updateGolden {
		if err := os.WriteFile(catalogJSON, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(catalogJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of step with pkg/measure: run go test ./pkg/query -run Catalog -update", catalogJSON)
	}
}

func TestCatalogReadmeTableIsCurrent(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, readmeBegin), strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no catalog block (%q … %q)", readmeBegin, readmeEnd)
	}
	want := renderReadmeCatalog()
	if *updateGolden {
		readme = readme[:i] + want + readme[j+len(readmeEnd):]
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme[i:j+len(readmeEnd)] != want {
		t.Errorf("README.md's measure table is out of step with pkg/measure: run go test ./pkg/query -run Catalog -update")
	}
}

// TestCatalogIsWellFormed checks what the catalog's readers rely on: every type described once, every type with
// defaults, names unique per type, every evaluated entry with outputs, flavors and a description.
func TestCatalogIsWellFormed(t *testing.T) {
	types := map[measure.Type]bool{}
	for _, ti := range measure.Types {
		if types[ti.Type] || ti.Label == "" || ti.Description == "" {
			t.Errorf("type %q is listed twice or undescribed", ti.Type)
		}
		types[ti.Type] = true
		if len(measure.Defaults(ti.Type)) == 0 {
			t.Errorf("type %q has no default measure", ti.Type)
		}
	}
	seen := map[string]bool{}
	known := map[vllm.Flavor]bool{vllm.FlavorV1: true, vllm.FlavorV0: true, vllm.FlavorAscend: true,
		vllm.FlavorDynamoWorker: true, vllm.FlavorDynamoFrontend: true}
	for _, e := range measure.Catalog {
		id := string(e.Type) + "/" + e.Name
		switch {
		case !types[e.Type]:
			t.Errorf("%s: type is not in measure.Types", id)
		case seen[id]:
			t.Errorf("%s: listed twice", id)
		case e.Label == "" || e.Description == "" || !strings.HasSuffix(e.Description, "."):
			t.Errorf("%s: needs a label and a one-sentence description", id)
		}
		seen[id] = true
		if e.Type == TypeDiagnosis || e.Type == TypePromQL {
			continue
		}
		if len(e.Outputs) == 0 || len(e.Flavors) == 0 {
			t.Errorf("%s: has no outputs or no flavors", id)
		}
		for _, f := range e.Flavors {
			if !known[f] {
				t.Errorf("%s: unknown flavor %q", id, f)
			}
		}
		for _, o := range e.Outputs {
			if o.Node == nil {
				t.Errorf("%s: output %q has no formula", id, o.Name)
			}
		}
	}
}

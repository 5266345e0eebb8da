package query

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// The editors and the README read the catalog through generated files; these tests fail when one is out of step
// with pkg/measure. Each kind has its own flag, so that rewriting one cannot carry an unnoticed change to another:
// `go test ./pkg/query -run Catalog -update-catalog` rewrites the editors' files, `-update-readme` the README table
// (and `-update` only the golden frames).
var (
	updateCatalog = flag.Bool("update-catalog", false, "rewrite src/datasource/catalog.json and catalog.gen.ts from pkg/measure")
	updateReadme  = flag.Bool("update-readme", false, "rewrite README.md's measure table from pkg/measure")
)

const (
	catalogJSON = "../../src/datasource/catalog.json"
	catalogTS   = "../../src/datasource/catalog.gen.ts"
	readmePath  = "../../README.md"
	readmeBegin = "<!-- catalog:begin (generated from pkg/measure by `go test ./pkg/query -run Catalog -update-readme`) -->\n"
	readmeEnd   = "<!-- catalog:end -->\n"
)

// editorCatalog is what src/datasource/catalog.json holds.
type editorCatalog struct {
	Types          []measure.TypeInfo              `json:"types"`
	Measures       map[measure.Type]editorMeasures `json:"measures"`
	LatencyMetrics []measure.Family                `json:"latencyMetrics"`
	DefaultMetric  string                          `json:"defaultMetric"`
	TimerPrefix    string                          `json:"timerPrefix"`
	Scores         []string                        `json:"scores"`
	Accelerators   []measure.Accelerator           `json:"accelerators"`
	DefaultAccel   string                          `json:"defaultAccelerator"`
	Fields         []FieldSpec                     `json:"fields"`
	EngineStates   []measure.Code                  `json:"engineStates"`
}

type editorMeasures struct {
	Defaults []string         `json:"defaults"`
	Options  []*measure.Entry `json:"options"`
}

func renderEditorCatalog() []byte {
	c := editorCatalog{
		Types: measure.Types, Measures: map[measure.Type]editorMeasures{}, LatencyMetrics: measure.Families,
		DefaultMetric: measure.DefaultFamily, TimerPrefix: measure.TimerPrefix, Scores: measure.Scores,
		Accelerators: measure.Accelerators, DefaultAccel: measure.DefaultAccelerator,
		Fields: FieldSpecs, EngineStates: measure.EngineStates,
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
	checkGenerated(t, catalogJSON, renderEditorCatalog(), *updateCatalog, "go test ./pkg/query -run Catalog -update-catalog")
}

// checkGenerated fails unless the file at path holds want; with update it writes want there first.
func checkGenerated(t *testing.T, path string, want []byte, update bool, regenerate string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of step with its source: run %s", path, regenerate)
	}
}

// renderCatalogTS is src/datasource/catalog.gen.ts: the catalog's names as TypeScript constants with literal types,
// so that the frontend names a query type, measure, field, grouping or state code only through them.
func renderCatalogTS() []byte {
	var b strings.Builder
	b.WriteString("// Generated from pkg/measure and pkg/query by `go test ./pkg/query -run Catalog -update-catalog`; do not edit.\n\n")
	names := func(name, doc string, values []string) {
		fmt.Fprintf(&b, "/** %s */\nexport const %s = {\n", doc, name)
		for _, v := range values {
			fmt.Fprintf(&b, "  %s: '%s',\n", tsKey(v), v)
		}
		b.WriteString("} as const;\n\n")
	}
	types := measure.TypeNames()
	names("QUERY_TYPE", "QUERY_TYPE names each query type (pkg/measure Types), in the editor's order.", types)
	b.WriteString("/** MEASURE names each query type's measures, in catalog order. */\nexport const MEASURE = {\n")
	for _, t := range types {
		fmt.Fprintf(&b, "  %s: {\n", tsKey(t))
		for _, m := range measure.Names(measure.Type(t)) {
			fmt.Fprintf(&b, "    %s: '%s',\n", tsKey(m), m)
		}
		b.WriteString("  },\n")
	}
	b.WriteString("} as const;\n\n")
	var fields, groups, fams []string
	for _, f := range measure.FieldOrder {
		fields = append(fields, string(f))
	}
	for _, g := range measure.Groups {
		groups = append(groups, string(g))
	}
	for _, f := range measure.Families {
		fams = append(fams, f.Name)
	}
	names("FIELD", "FIELD names the query fields a measure may read (catalog entries' fields).", fields)
	b.WriteString("/** REGEX_FIELDS are the fields holding regular expressions; multi-value variables expand into them as (a|b). */\n")
	b.WriteString("export const REGEX_FIELDS = [")
	sep := ""
	for _, f := range FieldSpecs {
		if f.Regex {
			fmt.Fprintf(&b, "%s'%s'", sep, f.Name)
			sep = ", "
		}
	}
	b.WriteString("] as const;\n\n")
	names("GROUP_BY", "GROUP_BY names the groupBy values.", groups)
	names("FAMILY", "FAMILY names the latency families.", fams)
	names("SCORE", "SCORE names the dp_balance imbalance scores.", measure.Scores)
	names("RAW_METRIC", "RAW_METRIC names the metrics raw queries read besides vLLM's own: the scrape's up.", []string{vllm.Up})
	names("HISTOGRAM", "HISTOGRAM names how a raw histogram is returned.", []string{HistogramBuckets, HistogramQuantiles})
	codes := func(name, doc string, cs []measure.Code) {
		fmt.Fprintf(&b, "/** %s */\nexport const %s = {\n", doc, name)
		for _, c := range cs {
			fmt.Fprintf(&b, "  %s: %d,\n", tsKey(c.Name), c.Value)
		}
		b.WriteString("} as const;\n\n")
	}
	codes("ENGINE_STATE", "ENGINE_STATE is engine_state's value for each state.", measure.EngineStates)
	codes("LORA_STATE", "LORA_STATE is lora/by_adapter's value for each adapter state.", measure.LoRAStates)
	b.WriteString(`/** QueryType names what the backend computes. */
export type QueryType = (typeof QUERY_TYPE)[keyof typeof QUERY_TYPE];

/** MeasureName is a measure of query type T. */
export type MeasureName<T extends QueryType = QueryType> = T extends QueryType
  ? (typeof MEASURE)[T][keyof (typeof MEASURE)[T]]
  : never;

/** Field is a query field a measure reads. */
export type Field = (typeof FIELD)[keyof typeof FIELD];

/** GroupBy says how series are aggregated. */
export type GroupBy = (typeof GROUP_BY)[keyof typeof GROUP_BY];

/** Score is a dp_balance imbalance score. */
export type Score = (typeof SCORE)[keyof typeof SCORE];

/** Histogram is how a raw histogram is returned. */
export type Histogram = (typeof HISTOGRAM)[keyof typeof HISTOGRAM];
`)
	return []byte(b.String())
}

// tsKey is a TypeScript object key for a name: bare where it is an identifier, quoted otherwise.
func tsKey(s string) string {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return "'" + s + "'"
		}
	}
	return s
}

func TestCatalogTypeScriptIsCurrent(t *testing.T) {
	checkGenerated(t, catalogTS, renderCatalogTS(), *updateCatalog, "go test ./pkg/query -run Catalog -update-catalog")
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
	if *updateReadme {
		readme = readme[:i] + want + readme[j+len(readmeEnd):]
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme[i:j+len(readmeEnd)] != want {
		t.Errorf("README.md's measure table is out of step with pkg/measure: run go test ./pkg/query -run Catalog -update-readme")
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

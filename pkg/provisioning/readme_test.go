package provisioning

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/packaging"
)

var update = flag.Bool("update", false, "rewrite the README's generated alert-rule table")

// readmes are the two READMEs whose counts and lists are checked: the repository's and the catalog's (src/README.md,
// shipped in the archive and shown on grafana.com).
var readmes = []string{"README.md", "src/README.md"}

// countedDocs also hold counts: the READMEs and the changelog, whose unreleased entry the archive ships.
var countedDocs = append([]string{"CHANGELOG.md"}, readmes...)

const (
	rulesBegin = "<!-- alert-rules:begin (generated from provisioning/alerting/inferscope-rules.yaml by `go test ./pkg/provisioning -run Readme -update`) -->\n"
	rulesEnd   = "<!-- alert-rules:end -->"
)

// alertRule is what the README says of each provisioned rule.
type alertRule struct {
	UID    string            `yaml:"uid"`
	Title  string            `yaml:"title"`
	For    string            `yaml:"for"`
	Labels map[string]string `yaml:"labels"`
	// Annotations carry the description the README's table shows.
	Annotations map[string]string `yaml:"annotations"`
}

func provisionedRules(t *testing.T, root string) []alertRule {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, filepath.Join(root, "provisioning/alerting/inferscope-rules.yaml"), &f)
	var out []alertRule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// shippedDashboards are the dashboard names the app's plugin.json includes, in its order.
func shippedDashboards(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Includes []struct{ Type, Name, Path string }
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, inc := range p.Includes {
		if inc.Type == "dashboard" {
			names = append(names, inc.Name)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if len(files) != len(names) {
		t.Errorf("dashboards/ holds %d dashboards, plugin.json includes %d", len(files), len(names))
	}
	return names
}

// numberWords spells the counts the READMEs write out.
var numberWords = strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen " +
	"fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four " +
	"twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty")

func spell(n int) string {
	if n < len(numberWords) {
		return numberWords[n]
	}
	return strconv.Itoa(n)
}

// countPattern finds "<number> <noun>" with the number in digits or words, e.g. "sixteen alert rules", "all 5 platforms".
func countPattern(noun string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(` + strings.Join(numberWords, "|") + `|\d+) ` + noun + `\b`)
}

func parseCount(s string) int {
	for i, w := range numberWords {
		if strings.EqualFold(w, s) {
			return i
		}
	}
	n, _ := strconv.Atoi(s)
	return n
}

// renderRulesTable is the README's table of the provisioned alert rules.
func renderRulesTable(rules []alertRule) string {
	var b strings.Builder
	b.WriteString(rulesBegin + "\n| alert rule | for | severity | what it means |\n| --- | --- | --- | --- |\n")
	cell := func(s string) string { return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`) }
	for _, r := range rules {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r.Title), r.For, r.Labels["severity"], cell(r.Annotations["description"]))
	}
	return b.String() + "\n" + rulesEnd
}

// TestReadmeCountsAndListsMatchRepository keeps every count and list in both READMEs true: the query types (pkg/measure),
// measures, shipped dashboards (plugin.json), provisioned alert rules, and build platforms (pkg/packaging).
func TestReadmeCountsAndListsMatchRepository(t *testing.T) {
	root := harness.RepoRoot(t)
	rules := provisionedRules(t, root)
	dashboards := shippedDashboards(t, root)
	platforms := map[string]bool{}
	for _, p := range packaging.Platforms {
		platforms[strings.Replace(strings.TrimSuffix(p, ".exe"), "_", "/", 1)] = true
	}
	facts := map[string]int{
		"query types":      len(measure.Types),
		"measures":         len(measure.Catalog),
		"dashboards":       len(dashboards),
		"alert rules":      len(rules),
		"platforms":        len(platforms),
		"latency families": len(measure.Families),
	}
	for _, name := range countedDocs {
		raw, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(raw)), " ") // a count may wrap onto the next line
		for noun, want := range facts {
			for _, m := range countPattern(noun).FindAllStringSubmatch(text, -1) {
				if got := parseCount(m[1]); got != want {
					t.Errorf("%s says %q: there are %s %s", name, m[0], spell(want), noun)
				}
			}
		}
		if !slices.Contains(readmes, name) {
			continue
		}
		// Every dashboard is named, in bold, where the README presents the dashboards.
		for _, d := range dashboards {
			if !strings.Contains(text, "**"+d+"**") {
				t.Errorf("%s does not present the shipped dashboard **%s**", name, d)
			}
		}
	}

	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	// The status table's dashboard row lists exactly the shipped dashboards, and its packaging row the platforms.
	row := regexp.MustCompile(`(?m)^\| Dashboards: ([^|]+) \|`).FindStringSubmatch(readme)
	if row == nil {
		t.Error("README.md's status table has no `| Dashboards: … |` row")
	} else if got, want := strings.Split(strings.TrimSpace(row[1]), ", "), dashboards; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("README.md's status row lists dashboards %q, plugin.json includes %q", got, want)
	}
	row = regexp.MustCompile(`(?m)^\| Packaging: ([^|]+) \|`).FindStringSubmatch(readme)
	if row == nil {
		t.Error("README.md's status table has no `| Packaging: … |` row")
	} else {
		listed := map[string]bool{}
		for _, p := range regexp.MustCompile(`\b(linux|darwin|windows)/(amd64|arm64)\b`).FindAllString(row[1], -1) {
			listed[p] = true
		}
		if !equalSets(listed, platforms) {
			t.Errorf("README.md's packaging row names platforms %v, pkg/packaging builds %v", keys(listed), keys(platforms))
		}
	}

	// The alert rules are a generated table.
	i, j := strings.Index(readme, rulesBegin), strings.Index(readme, rulesEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no alert-rule block (%q … %q)", rulesBegin, rulesEnd)
	}
	want := renderRulesTable(rules)
	if *update {
		readme = readme[:i] + want + readme[j+len(rulesEnd):]
		if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme[i:j+len(rulesEnd)] != want {
		t.Error("README.md's alert-rule table is out of step with provisioning/alerting: run go test ./pkg/provisioning -run Readme -update")
	}
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestReadmePrerequisitesMatchPins keeps the README's prerequisites exact: the Go version is go.mod's go line, the
// Node version is .nvmrc's (which scripts/node.sh installs), and package.json's engines asks for its major.
func TestReadmePrerequisitesMatchPins(t *testing.T) {
	root := harness.RepoRoot(t)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(read("go.mod"))
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	nodeVersion := strings.TrimSpace(read(".nvmrc"))
	nodeMajor, _, _ := strings.Cut(nodeVersion, ".")
	var pkg struct {
		Engines struct{ Node string } `json:"engines"`
	}
	if err := json.Unmarshal([]byte(read("package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Engines.Node != ">="+nodeMajor {
		t.Errorf("package.json engines.node is %q, want >=%s (.nvmrc %s)", pkg.Engines.Node, nodeMajor, nodeVersion)
	}
	readme := strings.Join(strings.Fields(read("README.md")), " ")
	for _, want := range []string{
		"Go " + goLine[1] + " or later (the `go` line of `go.mod`)",
		"Node " + nodeMajor + " LTS (`.nvmrc` pins " + nodeVersion,
		"`engines` asks for `>=" + nodeMajor + "`",
		"node-v" + nodeVersion,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md's prerequisites do not say %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`\b(Go|Node) (\d+(\.\d+)*)\+? `).FindAllStringSubmatch(readme, -1) {
		if (m[1] == "Go" && !strings.HasPrefix(goLine[1], m[2])) || (m[1] == "Node" && !strings.HasPrefix(nodeVersion, m[2])) {
			t.Errorf("README.md says %q: the pins are Go %s and Node %s", strings.TrimSpace(m[0]), goLine[1], nodeVersion)
		}
	}
}

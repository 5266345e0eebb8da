package rules_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/rules"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

var update = flag.Bool("update", false, "rewrite provisioning/alerting/inferscope-rules.yaml and docs/runbooks.md from the rule table")

const (
	yamlPath    = "../../provisioning/alerting/inferscope-rules.yaml"
	runbookPath = "../../docs/runbooks.md"
)

// TestGeneratedFilesMatchTheTable: the provisioned alert rules and the runbooks are the table rendered; a threshold
// or a text changed in pkg/rules and not regenerated fails here.
func TestGeneratedFilesMatchTheTable(t *testing.T) {
	y, err := rules.YAML(rules.Alerts)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{yamlPath: y, runbookPath: []byte(rules.Runbooks(rules.Alerts))} {
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is out of step with pkg/rules: run go test ./pkg/rules -update", path)
		}
	}
}

// dashboardPanels returns a dashboard's title and the titles of all its panels, rows' collapsed panels included.
func dashboardPanels(t *testing.T, file string) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../dashboards", file+".json"))
	if err != nil {
		t.Fatalf("dashboard %s: %v", file, err)
	}
	type panel struct {
		Title  string
		Panels []json.RawMessage
	}
	var d struct {
		Title  string
		Panels []json.RawMessage
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var titles []string
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			titles = append(titles, p.Title)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return d.Title, titles
}

// checkRunbooks returns what is wrong with the runbooks of alerts against the dashboards and the rendered runbooks.
func checkRunbooks(t *testing.T, alerts []rules.Alert, runbooks string) []string {
	var problems []string
	for _, a := range alerts {
		if a.Description == "" || a.Advice == nil || a.Advice.Cause == "" || a.Advice.Knob == "" || len(a.Confirm) == 0 {
			problems = append(problems, a.UID+": the runbook needs a meaning, likely causes, a fix and a panel to confirm it on")
		}
		if !strings.Contains(runbooks, `<a id="`+a.UID+`"></a>`) {
			problems = append(problems, a.UID+": docs/runbooks.md has no section for it")
		}
		for _, p := range a.Confirm {
			title, panels := dashboardPanels(t, p.Dashboard)
			if !strings.HasPrefix(p.String(), "**"+title+"** ›") {
				problems = append(problems, a.UID+": the runbook names "+p.String()+", but dashboard "+p.Dashboard+" is titled "+title)
			}
			if !slices.Contains(panels, p.Title) {
				problems = append(problems, a.UID+": the runbook names panel "+p.String()+", which does not exist")
			}
		}
	}
	return problems
}

// TestEveryRuleHasARunbookOnRealPanels: each rule's runbook says what it means, names panels that exist on the
// shipped dashboards, and has its section in docs/runbooks.md; a rule without one, or naming a missing panel, fails.
func TestEveryRuleHasARunbookOnRealPanels(t *testing.T) {
	runbooks, err := os.ReadFile(runbookPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkRunbooks(t, rules.Alerts, string(runbooks)) {
		t.Error(p)
	}
	// The check catches what it is for: a rule with no runbook section, and one naming a panel that is not there.
	broken := slices.Clone(rules.Alerts[:2])
	broken[0].UID = "inferscope-without-runbook"
	broken[1].Confirm = []rules.PanelRef{{Dashboard: "vllm-fleet", Title: "No such panel"}}
	if got := checkRunbooks(t, broken, string(runbooks)); len(got) != 2 ||
		!strings.Contains(got[0], "no section") || !strings.Contains(got[1], "does not exist") {
		t.Errorf("the runbook check missed a broken rule: %q", got)
	}
}

// TestAlertQueriesAreValidQueries: every rule's query model is a query the data source accepts, with the fields
// rules use spelled as the query JSON spells them.
func TestAlertQueriesAreValidQueries(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range rules.Alerts {
		if seen[a.UID] {
			t.Errorf("uid %s twice", a.UID)
		}
		seen[a.UID] = true
		if !regexp.MustCompile(`^inferscope-[a-z0-9-]+$`).MatchString(a.UID) {
			t.Errorf("uid %q", a.UID)
		}
		for _, q := range a.Queries {
			b, err := json.Marshal(q.Provisioned())
			if err != nil {
				t.Fatal(err)
			}
			var parsed query.Query
			err = json.Unmarshal(b, &parsed)
			if err == nil {
				err = parsed.Validate()
			}
			if err != nil {
				t.Errorf("%s: query %s: %v", a.UID, b, err)
			}
			// Outputs of one measure share their labels: a rule reading two would hand alerting two series with
			// the same labels, and its threshold would meet whichever number came last.
			if n := len(parsed.Outputs()); parsed.QueryType != query.TypeRaw && n != 1 {
				t.Errorf("%s: query %s returns %d outputs per label set: set output (or score) to the one the condition compares", a.UID, b, n)
			}
		}
	}
}

// TestNoRuleReadsAV0OnlyMeasure: V0 is gone from vLLM, and production-stack's router exports look-alikes of its
// gauges (vllm:num_requests_swapped among them) under vLLM's names, so a rule on a V0-only measure can fire only on
// a router: inferscope-swapped is retired, and none may come back.
func TestNoRuleReadsAV0OnlyMeasure(t *testing.T) {
	for _, a := range rules.Alerts {
		for _, q := range a.Queries {
			for _, e := range measure.Select(measure.Type(q.Model.QueryType), q.Model.Measure) {
				if len(e.Flavors) > 0 && !slices.ContainsFunc(e.Flavors, func(f vllm.Flavor) bool { return f != vllm.FlavorV0 }) {
					t.Errorf("%s reads %s/%s, which only vLLM V0 (or a router look-alike) exposes", a.UID, e.Type, e.Name)
				}
			}
		}
	}
	if slices.ContainsFunc(rules.Alerts, func(a rules.Alert) bool { return a.UID == "inferscope-swapped" }) {
		t.Error("inferscope-swapped is provisioned")
	}
}

// TestThresholdsAreListedOnce: every threshold a rule compares with is in the table the README shows.
func TestThresholdsAreListedOnce(t *testing.T) {
	listed := map[*rules.Threshold]bool{}
	for _, th := range rules.Thresholds {
		if listed[th] {
			t.Errorf("threshold %q listed twice", th.Name)
		}
		listed[th] = true
	}
	for _, a := range rules.Alerts {
		uses := append([]*rules.Threshold{a.When.Limit}, a.When.Args...)
		for _, q := range a.Queries {
			uses = append(uses, q.Target)
		}
		for _, th := range uses {
			if th != nil && th.Value != 0 && th.Name != "up" && !listed[th] {
				t.Errorf("%s compares with %q, which rules.Thresholds does not list", a.UID, th.Name)
			}
		}
	}
}

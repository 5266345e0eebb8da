package query

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/rules"
)

const (
	diagnosisBegin  = "<!-- diagnosis:begin (generated from pkg/query and pkg/rules by `go test ./pkg/query -run RulesReadme -update-readme`) -->\n"
	diagnosisEnd    = "<!-- diagnosis:end -->\n"
	thresholdsBegin = "<!-- thresholds:begin (generated from pkg/rules by `go test ./pkg/query -run RulesReadme -update-readme`) -->\n"
	thresholdsEnd   = "<!-- thresholds:end -->\n"
)

func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// renderDiagnosisTable is the README's table of the diagnosis rules, in their order.
func renderDiagnosisTable() string {
	var b strings.Builder
	b.WriteString(diagnosisBegin + "\n| symptom | severity | likely cause | knob |\n| --- | --- | --- | --- |\n")
	for _, r := range diagnosisRules() {
		sym := r.symptom
		if r.also != nil && r.also.limit != nil {
			sym += fmt.Sprintf(" (with %s past %s)", r.also.limit.Name, r.also.limit.Text())
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(sym), r.severity, cell(r.advice.Cause), cell(r.advice.Knob))
	}
	return b.String() + "\n" + diagnosisEnd
}

// renderThresholdsTable is the README's table of every threshold, with the alert rules and diagnosis rules that
// compare with it.
func renderThresholdsTable() string {
	usedBy := map[*rules.Threshold][]string{}
	for _, a := range rules.Alerts {
		uses := append([]*rules.Threshold{a.When.Limit}, a.When.Args...)
		for _, q := range a.Queries {
			uses = append(uses, q.Target)
		}
		for _, th := range uses {
			if th != nil && (len(usedBy[th]) == 0 || usedBy[th][len(usedBy[th])-1] != "`"+a.UID+"`") {
				usedBy[th] = append(usedBy[th], "`"+a.UID+"`")
			}
		}
	}
	diag := map[*rules.Threshold][]string{}
	for _, r := range diagnosisRules() {
		for x := &r; x != nil; x = x.also {
			for _, th := range []*rules.Threshold{x.limit, x.target} {
				if th != nil {
					diag[th] = append(diag[th], r.symptom)
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString(thresholdsBegin + "\n| threshold | value | alert rules | diagnosis |\n| --- | --- | --- | --- |\n")
	for _, th := range rules.Thresholds {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(th.Name), th.Text(), strings.Join(usedBy[th], ", "), cell(strings.Join(diag[th], "; ")))
	}
	return b.String() + "\n" + thresholdsEnd
}

// TestRulesReadmeTablesAreCurrent keeps the README's diagnosis and thresholds tables generated: a threshold changes
// in pkg/rules, and the alert rules, the diagnosis and both tables follow.
func TestRulesReadmeTablesAreCurrent(t *testing.T) {
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, block := range []struct{ begin, end, want string }{
		{diagnosisBegin, diagnosisEnd, renderDiagnosisTable()},
		{thresholdsBegin, thresholdsEnd, renderThresholdsTable()},
	} {
		i, j := strings.Index(readme, block.begin), strings.Index(readme, block.end)
		if i < 0 || j < i {
			t.Errorf("README.md has no block %q … %q", block.begin, block.end)
			continue
		}
		if *updateReadme {
			readme = readme[:i] + block.want + readme[j+len(block.end):]
			continue
		}
		if readme[i:j+len(block.end)] != block.want {
			t.Errorf("README.md's %s is out of step with pkg/rules: run go test ./pkg/query -run RulesReadme -update-readme", strings.Fields(block.begin)[1])
		}
	}
	if *updateReadme {
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiagnosisComparesWithTheRuleTable: every diagnosis rule that compares a number past a bound reads the bound
// from pkg/rules and trips exactly past it, so the diagnosis and the alert rules cannot drift apart.
func TestDiagnosisComparesWithTheRuleTable(t *testing.T) {
	listed := map[*rules.Threshold]bool{}
	for _, th := range rules.Thresholds {
		listed[th] = true
	}
	for _, r := range diagnosisRules() {
		if r.advice == nil || r.advice.Cause == "" || r.advice.Knob == "" {
			t.Errorf("%q has no advice from pkg/rules", r.symptom)
		}
		for x := &r; x != nil; x = x.also {
			if x.limit == nil {
				// A state rule trips on zero or a state code, which no threshold tunes.
				continue
			}
			if !listed[x.limit] {
				t.Errorf("%q compares with %q, which is not in rules.Thresholds", r.symptom, x.limit.Name)
			}
			v, eps := x.limit.Value, 1e-9+x.limit.Value*1e-6
			if x.trips(v) || x.trips(v+eps) == x.trips(v-eps) {
				t.Errorf("%q does not trip exactly past its threshold %s", r.symptom, x.limit.Text())
			}
		}
	}
}

// TestThresholdFromADashboardVariable: an SLO target chosen with a dashboard variable arrives as a string once
// Grafana interpolates it, and reads as the number it holds; anything else is a clear error.
func TestThresholdFromADashboardVariable(t *testing.T) {
	for raw, want := range map[string]float64{`0.3`: 0.3, `"0.3"`: 0.3, `" 2 "`: 2, `"1e-1"`: 0.1} {
		q, err := Parse([]byte(`{"queryType":"latency","measure":"slo_attainment","metric":"ttft","threshold":` + raw + `}`))
		if err != nil || q.Threshold == nil || *q.Threshold != want {
			t.Errorf("threshold %s: %v, %v; want %v", raw, q.Threshold, err, want)
		}
	}
	for _, raw := range []string{`"$ttft_target"`, `"NaN"`, `"fast"`, `true`} {
		if _, err := Parse([]byte(`{"queryType":"latency","measure":"slo_attainment","metric":"ttft","threshold":` + raw + `}`)); err == nil ||
			!strings.Contains(err.Error(), "threshold") {
			t.Errorf("threshold %s: error %v, want one naming the threshold", raw, err)
		}
	}
	q, err := Parse([]byte(`{"queryType":"latency","metric":"ttft","endpoint":"a","quantiles":[0.5]}`))
	if err != nil || q.Threshold != nil || q.Endpoint != "a" || len(q.Quantiles) != 1 {
		t.Errorf("a query without threshold: %+v, %v", q, err)
	}
}

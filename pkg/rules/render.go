package rules

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RunbookURL is where the runbooks are published; each rule's runbook_url adds its uid as the anchor.
const RunbookURL = "https://github.com/inferscope/inferscope-vllm/blob/main/docs/runbooks.md"

// refID is the refId of the i-th data item of a rule: A, B, C …
func refID(i int) string { return string(rune('A' + i)) } // #nosec G115 -- a rule has a handful of data items

type yamlExpr struct {
	UID  string `yaml:"uid"`
	Type string `yaml:"type"`
}

type yamlEvaluator struct {
	Type   string    `yaml:"type"`
	Params []float64 `yaml:"params"`
}

type yamlCondition struct {
	Evaluator yamlEvaluator `yaml:"evaluator"`
}

type yamlModel struct {
	Model         `yaml:",inline"`
	Type          string          `yaml:"type,omitempty"`
	Expression    string          `yaml:"expression,omitempty"`
	Reducer       string          `yaml:"reducer,omitempty"`
	Settings      map[string]any  `yaml:"settings,omitempty"`
	Conditions    []yamlCondition `yaml:"conditions,omitempty"`
	RefID         string          `yaml:"refId"`
	IntervalMs    int             `yaml:"intervalMs,omitempty"`
	MaxDataPoints int             `yaml:"maxDataPoints,omitempty"`
	Datasource    *yamlExpr       `yaml:"datasource,omitempty"`
}

type yamlRange struct {
	From int `yaml:"from"`
	To   int `yaml:"to"`
}

type yamlData struct {
	RefID             string     `yaml:"refId"`
	RelativeTimeRange *yamlRange `yaml:"relativeTimeRange,omitempty"`
	DatasourceUID     string     `yaml:"datasourceUid"`
	Model             yamlModel  `yaml:"model"`
}

type yamlLabels struct {
	Severity string `yaml:"severity"`
	Team     string `yaml:"team"`
	Service  string `yaml:"service"`
	SLOAlert string `yaml:"slo_alert,omitempty"`
	Rule     string `yaml:"inferscope_rule"`
}

type yamlAnnotations struct {
	Summary     string `yaml:"summary"`
	Description string `yaml:"description"`
	Knob        string `yaml:"knob"`
	RunbookURL  string `yaml:"runbook_url"`
}

type yamlRule struct {
	UID          string          `yaml:"uid"`
	Title        string          `yaml:"title"`
	Condition    string          `yaml:"condition"`
	Data         []yamlData      `yaml:"data"`
	For          string          `yaml:"for"`
	NoDataState  string          `yaml:"noDataState"`
	ExecErrState string          `yaml:"execErrState"`
	IsPaused     bool            `yaml:"isPaused"`
	Labels       yamlLabels      `yaml:"labels"`
	Annotations  yamlAnnotations `yaml:"annotations"`
}

type yamlGroup struct {
	OrgID    int        `yaml:"orgId"`
	Name     string     `yaml:"name"`
	Folder   string     `yaml:"folder"`
	Interval string     `yaml:"interval"`
	Rules    []yamlRule `yaml:"rules"`
}

type yamlFile struct {
	APIVersion int         `yaml:"apiVersion"`
	Groups     []yamlGroup `yaml:"groups"`
}

// yamlHeader opens the generated file.
const yamlHeader = `# Generated from pkg/rules (the one rule table) by ` + "`go test ./pkg/rules -update`" + `: do not edit by hand.
# Alert rules evaluated through the InferScope data source backend (uid inferscope-direct); each query model is
# the data source's query JSON (README, Queries). Runbooks: docs/runbooks.md.
`

// sentence makes an advice phrase an annotation sentence: capitalised, ending in a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// condition is the rule's last data item, which fires it.
func (a Alert) condition() yamlModel {
	ref := refID(len(a.Queries) + len(a.Reduce))
	expr := &yamlExpr{UID: "__expr__", Type: "__expr__"}
	if a.When.Math == "" {
		return yamlModel{Type: "threshold", Expression: refID(len(a.Queries)), RefID: ref, Datasource: expr,
			Conditions: []yamlCondition{{Evaluator: yamlEvaluator{Type: a.When.Op, Params: []float64{a.When.Limit.Value}}}}}
	}
	args := make([]any, 0, len(a.Reduce)+len(a.When.Args))
	for i := range a.Reduce {
		args = append(args, refID(len(a.Queries)+i))
	}
	for _, t := range a.When.Args {
		args = append(args, t.Number())
	}
	return yamlModel{Type: "math", Expression: fmt.Sprintf(a.When.Math, args...), RefID: ref, Datasource: expr}
}

func (a Alert) yaml() yamlRule {
	var data []yamlData
	for i, q := range a.Queries {
		data = append(data, yamlData{RefID: refID(i), RelativeTimeRange: &yamlRange{From: q.From}, DatasourceUID: DatasourceUID,
			Model: yamlModel{Model: q.Provisioned(), RefID: refID(i), IntervalMs: 15000, MaxDataPoints: 43200}})
	}
	expr := &yamlExpr{UID: "__expr__", Type: "__expr__"}
	for i, r := range a.Reduce {
		ref := refID(len(a.Queries) + i)
		data = append(data, yamlData{RefID: ref, DatasourceUID: "__expr__", Model: yamlModel{Type: "reduce",
			Expression: refID(r.Of), Reducer: r.Reducer, Settings: map[string]any{"mode": "dropNN"}, RefID: ref, Datasource: expr}})
	}
	c := a.condition()
	data = append(data, yamlData{RefID: c.RefID, DatasourceUID: "__expr__", Model: c})
	return yamlRule{UID: a.UID, Title: a.Title, Condition: c.RefID, Data: data, For: a.For, NoDataState: "OK",
		ExecErrState: "Error", Labels: yamlLabels{Severity: a.Severity, Team: "inference", Service: "vllm", SLOAlert: a.SLO, Rule: a.UID},
		Annotations: yamlAnnotations{Summary: a.Summary, Description: a.Description, Knob: sentence(a.Advice.Knob),
			RunbookURL: RunbookURL + "#" + a.UID}}
}

// YAML is provisioning/alerting/inferscope-rules.yaml, rendered from Alerts.
func YAML(alerts []Alert) ([]byte, error) {
	f := yamlFile{APIVersion: 1, Groups: []yamlGroup{{OrgID: 1, Name: "vLLM (InferScope)", Folder: "InferScope", Interval: "1m"}}}
	for _, a := range alerts {
		f.Groups[0].Rules = append(f.Groups[0].Rules, a.yaml())
	}
	var b bytes.Buffer
	b.WriteString(yamlHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// String is the panel as the runbooks name it: the dashboard title in bold, the panel title in italics.
func (p PanelRef) String() string {
	return fmt.Sprintf("**%s** › *%s*", dashboardTitles[p.Dashboard], p.Title)
}

// dashboardTitles are the shipped dashboards' titles by file name, as the runbooks name them.
var dashboardTitles = map[string]string{
	"vllm-fleet":          "vLLM fleet overview",
	"vllm-disagg":         "vLLM disaggregated serving & KV",
	"vllm-service-status": "vLLM service status",
	"vllm-minimal":        "vLLM minimal",
	"ascend-per-dp":       "vLLM-Ascend per DP rank",
}

// Runbooks is docs/runbooks.md, rendered from Alerts: per rule what it means, where to confirm it, its likely
// causes and the fix.
func Runbooks(alerts []Alert) string {
	var b strings.Builder
	b.WriteString("# InferScope alert runbooks\n\n<!-- Generated from pkg/rules by `go test ./pkg/rules -update`: do not edit by hand. -->\n\n")
	b.WriteString("Each provisioned alert rule (provisioning/alerting/inferscope-rules.yaml) links here with its `runbook_url`. " +
		"The thresholds, causes and fixes are the ones the **Diagnosis** panel uses (pkg/rules).\n\n")
	for _, a := range alerts {
		fmt.Fprintf(&b, "<a id=\"%s\"></a>\n\n## %s\n\n", a.UID, a.Title)
		fmt.Fprintf(&b, "`%s` · severity **%s** · fires after %s", a.UID, a.Severity, a.For)
		if a.SLO != "" {
			fmt.Fprintf(&b, " · slo_alert %s", a.SLO)
		}
		b.WriteString("\n\n")
		fmt.Fprintf(&b, "**What it means.** %s\n\n", a.Description)
		names := make([]string, len(a.Confirm))
		for i, p := range a.Confirm {
			names[i] = p.String()
		}
		b.WriteString("**Confirm it.** Open " + strings.Join(names, ", "))
		b.WriteString("; filter the dashboard to the endpoint or model the alert names.\n\n")
		fmt.Fprintf(&b, "**Likely causes.** %s\n\n", sentence(a.Advice.Cause))
		fmt.Fprintf(&b, "**Fix.** %s\n\n", sentence(a.Advice.Knob))
	}
	return b.String()
}

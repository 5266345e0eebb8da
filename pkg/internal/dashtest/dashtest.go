// Package dashtest reads the shipped dashboards' panel queries as Grafana sends them, for tests and benchmarks.
package dashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// Panel is one dashboard panel with queries; rows' nested panels are listed beside their row.
type Panel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Repeat  string           `json:"repeat"`
	Targets []map[string]any `json:"targets"`
	Panels  []Panel          `json:"panels"`
}

// Panels returns the panels of the dashboard file that have queries, their targets interpolated with vars.
func Panels(file string, vars map[string]string) ([]Panel, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d struct{ Panels []Panel }
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var flat []Panel
	for _, p := range d.Panels {
		flat = append(flat, p)
		flat = append(flat, p.Panels...)
	}
	var out []Panel
	for _, p := range flat {
		if len(p.Targets) == 0 {
			continue
		}
		for i, t := range p.Targets {
			p.Targets[i] = Interpolate(t, vars).(map[string]any)
		}
		p.Panels = nil
		out = append(out, p)
	}
	return out, nil
}

var varRef = regexp.MustCompile(`\$\{?([a-zA-Z_]+)\}?`)

// Interpolate replaces dashboard variables in a target the way Grafana does with "All" selected (allValue .*),
// and a repeated panel's variable with one concrete value; variables not in vars are left as they are.
func Interpolate(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return varRef.ReplaceAllStringFunc(x, func(m string) string {
			name := varRef.FindStringSubmatch(m)[1]
			if val, ok := vars[name]; ok {
				return val
			}
			return m
		})
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			out[k] = Interpolate(c, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = Interpolate(c, vars)
		}
		return out
	}
	return v
}

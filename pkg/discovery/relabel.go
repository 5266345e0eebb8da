package discovery

import (
	"fmt"
	"regexp"
	"strings"
)

// Relabel is a source's rules: which targets to keep, what to call them, and which labels give role and model.
type Relabel struct {
	// NameTemplate makes the endpoint's name from labels: "{label}" is the label's value, e.g.
	// "{__meta_kubernetes_namespace}/{__meta_kubernetes_pod_name}". Empty uses the source's default.
	NameTemplate string `json:"nameTemplate,omitempty"`
	// Keep keeps only targets that match every rule; Drop drops targets that match any.
	Keep []Match `json:"keep,omitempty"`
	Drop []Match `json:"drop,omitempty"`
	// RoleLabel and ModelLabel name the labels whose values are the endpoint's role (e.g. llm-d.ai/role) and model.
	RoleLabel  string `json:"roleLabel,omitempty"`
	ModelLabel string `json:"modelLabel,omitempty"`
}

// maxRules bounds keep and drop rules of one source.
const maxRules = 32

// rules are compiled relabel rules.
type rules struct {
	name       []namePart
	keep, drop []matcher
	role       string
	model      string
}

type matcher struct {
	label string
	re    *regexp.Regexp
}

// namePart is a template's literal text or, when label is set, a label reference.
type namePart struct {
	text  string
	label bool
}

func (r Relabel) compile() (rules, error) {
	var out rules
	if len(r.Keep)+len(r.Drop) > maxRules {
		return out, fmt.Errorf("%d keep/drop rules: at most %d", len(r.Keep)+len(r.Drop), maxRules)
	}
	for _, s := range []string{r.NameTemplate, r.RoleLabel, r.ModelLabel} {
		if len(s) > MaxValueBytes {
			return out, fmt.Errorf("relabel values are at most %d bytes", MaxValueBytes)
		}
	}
	var err error
	if out.name, err = parseTemplate(r.NameTemplate); err != nil {
		return out, err
	}
	compile := func(kind string, ms []Match) ([]matcher, error) {
		var cs []matcher
		for i, m := range ms {
			if m.Label == "" || len(m.Label) > MaxValueBytes || len(m.Regex) > MaxValueBytes {
				return nil, fmt.Errorf("%s rule %d needs a label and a regex of at most %d bytes", kind, i+1, MaxValueBytes)
			}
			re, err := regexp.Compile("^(?:" + m.Regex + ")$")
			if err != nil {
				return nil, fmt.Errorf("%s rule %d: regex %.64q: %w", kind, i+1, m.Regex, err)
			}
			cs = append(cs, matcher{m.Label, re})
		}
		return cs, nil
	}
	if out.keep, err = compile("keep", r.Keep); err != nil {
		return out, err
	}
	if out.drop, err = compile("drop", r.Drop); err != nil {
		return out, err
	}
	out.role, out.model = r.RoleLabel, r.ModelLabel
	return out, nil
}

// parseTemplate splits "{a}-{b}" into literal and label parts; braces must pair and not nest.
func parseTemplate(t string) ([]namePart, error) {
	var parts []namePart
	for t != "" {
		open := strings.IndexByte(t, '{')
		if close := strings.IndexByte(t, '}'); close >= 0 && (open < 0 || close < open) {
			return nil, fmt.Errorf("nameTemplate: a } without its {")
		}
		if open < 0 {
			parts = append(parts, namePart{text: t})
			break
		}
		if open > 0 {
			parts = append(parts, namePart{text: t[:open]})
		}
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("nameTemplate: a { without its }")
		}
		label := t[open+1 : open+end]
		if label == "" || strings.ContainsRune(label, '{') {
			return nil, fmt.Errorf("nameTemplate: {%.32s} is not a label reference", label)
		}
		parts = append(parts, namePart{text: label, label: true})
		t = t[open+end+1:]
	}
	return parts, nil
}

// keeps says whether a target with these labels passes the keep and drop rules (a missing label is "").
func (r rules) keeps(labels map[string]string) bool {
	for _, m := range r.keep {
		if !m.re.MatchString(labels[m.label]) {
			return false
		}
	}
	for _, m := range r.drop {
		if m.re.MatchString(labels[m.label]) {
			return false
		}
	}
	return true
}

// nameOf is the template filled from labels, or def's when there is no template; a name that comes out empty
// (every referenced label missing) is the target's address.
func (r rules) nameOf(labels map[string]string, def []namePart) string {
	parts := r.name
	if len(parts) == 0 {
		parts = def
	}
	var b strings.Builder
	filled := false
	for _, p := range parts {
		if !p.label {
			b.WriteString(p.text)
			continue
		}
		if v := labels[p.text]; v != "" {
			filled = true
			b.WriteString(v)
		}
	}
	if !filled {
		return labels[LabelAddress]
	}
	return b.String()
}

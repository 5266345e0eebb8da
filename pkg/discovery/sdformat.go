package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// group is one entry of Prometheus's file_sd and http_sd formats: addresses sharing labels.
type group struct {
	Targets []string          `json:"targets" yaml:"targets"`
	Labels  map[string]string `json:"labels" yaml:"labels"`
}

// Labels a target group may set to change its URL, as in Prometheus.
const (
	LabelScheme      = "__scheme__"
	LabelMetricsPath = "__metrics_path__"
)

// parseGroups reads target groups from JSON, or YAML when yamlOK and the text is not JSON, and flattens them into at
// most max targets (truncated when there were more); meta labels are added to every target.
func parseGroups(b []byte, yamlOK bool, max int, meta map[string]string) ([]Target, bool, error) {
	var groups []group
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, false, nil
	}
	if trimmed[0] == '[' || !yamlOK {
		if err := json.Unmarshal(trimmed, &groups); err != nil {
			return nil, false, fmt.Errorf("not a list of target groups ({\"targets\": [...], \"labels\": {...}}): %w", err)
		}
	} else if err := yaml.Unmarshal(trimmed, &groups); err != nil {
		return nil, false, fmt.Errorf("not a YAML list of target groups (- targets: [...]): %w", err)
	}
	var out []Target
	for gi, g := range groups {
		if len(g.Labels)+len(meta) > MaxLabels {
			return nil, false, fmt.Errorf("group %d has %d labels: at most %d", gi+1, len(g.Labels), MaxLabels)
		}
		for k, v := range g.Labels {
			if len(k) > MaxValueBytes || len(v) > MaxValueBytes {
				return nil, false, fmt.Errorf("group %d: labels are at most %d bytes", gi+1, MaxValueBytes)
			}
		}
		for _, addr := range g.Targets {
			if addr == "" || len(addr) > MaxValueBytes || strings.ContainsAny(addr, "/?#@ \t\r\n") {
				return nil, false, fmt.Errorf("group %d: target %.64q is not host:port", gi+1, addr)
			}
			if len(out) == max {
				return out, true, nil
			}
			labels := make(map[string]string, len(g.Labels)+len(meta)+1)
			for k, v := range g.Labels {
				labels[k] = v
			}
			for k, v := range meta {
				labels[k] = v
			}
			labels[LabelAddress] = addr
			out = append(out, Target{Address: addr, Labels: labels})
		}
	}
	return out, false, nil
}

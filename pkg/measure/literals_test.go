package measure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoMeasureNamesOutsideTheCatalog keeps the catalog the one place a measure is defined: no non-test Go file
// outside it and the query model spells a measure or output name as a string literal (which would be a second,
// drifting definition — a switch on measure names, a hard-coded output).
func TestNoMeasureNamesOutsideTheCatalog(t *testing.T) {
	names := map[string]bool{}
	for _, e := range Catalog {
		names[e.Name] = true
		for _, o := range e.Outputs {
			if o.Name != "" && !strings.Contains(o.Name, MetricName) {
				names[o.Name] = true
			}
		}
	}
	// Words that are measure names but also mean something else where they appear.
	allowed := map[string]map[string]bool{
		// The simulator writes the servers' own label values and JSON fields, which some measures are named after.
		"pkg/sim": {"running": true, "waiting": true, "swapped": true, "capacity": true, "series": true, "blocks": true,
			"usage": true, "requests": true, "errors": true, "efficiency": true, "preemptions": true, "num_spec_tokens": true,
			"deferred": true},
		// The profiler agent's audit lines and answers say whether a torch profile is running.
		"pkg/agent": {"running": true},
		// Signal IDs name metrics, often after the measure that reads them.
		"pkg/vllm/catalog.go": nil,
		// A threshold's unit: a count of requests.
		"pkg/rules/thresholds.go": {"requests": true},
		// The alert rules are the query models Grafana sends, written as the YAML carries them; pkg/rules' tests
		// validate each against the catalog (TestAlertQueriesAreValidQueries), so a misspelt measure fails there.
		"pkg/rules/alerts.go": nil,
		// An EndpointSlice endpoint's Kubernetes conditions (ready, serving, terminating), as the API server spells them.
		"pkg/discovery/": {"serving": true},
		// The Prometheus API's /api/v1/targets filter parameter (state=active), as the server spells it.
		"pkg/internal/promtest/": {"state": true},
		"pkg/promapi/horizon.go": {"state": true},
	}
	root := "../.."
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "pkg/measure/") || rel == "pkg/query/model.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !names[s] {
				return true
			}
			for prefix, words := range allowed {
				if strings.HasPrefix(rel, prefix) && (words == nil || words[s]) {
					return true
				}
			}
			t.Errorf("%s: measure name %q spelled outside the catalog; refer to its pkg/measure entry", fset.Position(lit.Pos()), s)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package measure

import (
	"fmt"
	"strings"
	"testing"
)

// throwaway is a node type no switch knows: it has Raw's node method, but no case matches it.
type throwaway struct{ Raw }

// refuses runs f and reports unless it panicked with an error naming the throwaway node type.
func refuses(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if err, ok := r.(error); !ok || !strings.Contains(err.Error(), "*measure.throwaway") {
			t.Errorf("%s accepted a node type it has no case for (recovered %v)", what, r)
		}
	}()
	f()
}

// Every reader of the node types in this package refuses one it has no case for.
func TestNodeSwitchesRefuseAnUnknownNode(t *testing.T) {
	n := &throwaway{}
	outs := []Output{{Name: "x", Node: n}}
	refuses(t, "Visit", func() { _, _ = Visit[shape](n, shaper{}) })
	refuses(t, "Walk", func() { Walk(&Div{Num: n, Den: &Gauge{}}, func(Node) {}) })
	refuses(t, "ReadsRates", func() { ReadsRates(outs) })
	refuses(t, "ReadsQuantiles", func() { ReadsQuantiles(outs) })
	refuses(t, "the catalog's fields", func() { (&Entry{Type: TypeRaw, Outputs: outs}).fill() })
}

func TestUnhandledIsAnErrorNamingTheTypeInProduction(t *testing.T) {
	UnhandledPanics = false
	defer func() { UnhandledPanics = true }()
	_, err := Visit[shape](&throwaway{}, shaper{})
	if err == nil || !strings.Contains(err.Error(), "*measure.throwaway") {
		t.Fatalf("Visit of an unknown node: %v", err)
	}
}

// TestEveryCatalogNodeHasAShape walks every node of the catalog through the visitor: each one is a known type.
func TestEveryCatalogNodeHasAShape(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Catalog {
		for _, o := range e.Outputs {
			Walk(o.Node, func(n Node) {
				if _, err := Visit[shape](n, shaper{}); err != nil {
					t.Errorf("%s/%s: %v", e.Type, e.Name, err)
				}
				seen[fmt.Sprintf("%T", n)] = true
			})
		}
	}
	if len(seen) != 16 {
		t.Errorf("the catalog uses %d node types, want all 16: %v", len(seen), seen)
	}
}

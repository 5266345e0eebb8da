package promapi

import (
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// throwaway is a measure node type the PromQL printer has no case for.
type throwaway struct{ measure.Raw }

// TestPrinterRefusesAnUnknownNode: a node type without a case panics under test and, in production, makes
// Generate fail with an internal error naming the type, not print "" (which reads as "the server holds none").
func TestPrinterRefusesAnUnknownNode(t *testing.T) {
	q := query.Query{QueryType: query.TypeQueue}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(g *gen){
		"print":            func(g *gen) { g.print(&throwaway{}) },
		"print inside Div": func(g *gen) { g.print(&measure.Div{Num: &throwaway{}, Den: &throwaway{}}) },
		"exprs":            func(g *gen) { g.exprs(&throwaway{}) },
	} {
		t.Run(name, func(t *testing.T) {
			func() {
				defer func() {
					if err, ok := recover().(error); !ok || !strings.Contains(err.Error(), "*promapi.throwaway") {
						t.Errorf("%s accepted an unknown node under test", name)
					}
				}()
				var failed error
				f(&gen{q: q, names: mixedFleet, err: &failed})
			}()
			measure.UnhandledPanics = false
			defer func() { measure.UnhandledPanics = true }()
			var failed error
			f(&gen{q: q, names: mixedFleet, err: &failed})
			if failed == nil || !strings.Contains(failed.Error(), "internal error") || !strings.Contains(failed.Error(), "*promapi.throwaway") {
				t.Errorf("%s in production: %v, want an internal error naming the node type", name, failed)
			}
		})
	}
}

// TestPrinterRefusesNodesOnlyTheDataSourceAnswers: LoRA and P/D parts never reach the printer; if they did, it says so.
func TestPrinterRefusesNodesOnlyTheDataSourceAnswers(t *testing.T) {
	q := query.Query{QueryType: query.TypeQueue}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []measure.Node{&measure.LoRA{Part: measure.LoRARunning}, &measure.PD{Part: measure.PDTotal}} {
		var failed error
		(&gen{q: q, names: mixedFleet, err: &failed}).print(n)
		if failed == nil || !strings.Contains(failed.Error(), "internal error") {
			t.Errorf("print(%T): %v, want an internal error", n, failed)
		}
	}
}

package query

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
)

// throwaway is a measure node type the direct engine has no case for.
type throwaway struct{ measure.Raw }

func newTestEvalCtx(t *testing.T) *evalCtx {
	t.Helper()
	q := Query{QueryType: TypeQueue}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	start := int64(1_700_000_000_000)
	eng := &Engine{Source: newFleet(start).src, ScrapeInterval: 5 * time.Second}
	from := time.UnixMilli(start + 30*60*1000)
	rng := Range{Step: 30 * time.Second, Window: time.Minute, From: from, To: from.Add(time.Minute)}
	return eng.newEvalCtx(context.Background(), q, rng, from.UnixMilli())
}

// TestEngineRefusesAnUnknownNode: a node type without a case panics under test and, in production, stops the
// evaluation with an internal error naming the type instead of answering "no data".
func TestEngineRefusesAnUnknownNode(t *testing.T) {
	for name, n := range map[string]measure.Node{
		"alone":      &throwaway{},
		"inside Div": &measure.Div{Num: &throwaway{}, Den: measure.QueueRunning.Outputs[0].Node},
	} {
		t.Run(name, func(t *testing.T) {
			func() {
				defer func() {
					if err, ok := recover().(error); !ok || !strings.Contains(err.Error(), "*query.throwaway") {
						t.Errorf("eval accepted an unknown node under test")
					}
				}()
				newTestEvalCtx(t).eval(n)
			}()
			measure.UnhandledPanics = false
			defer func() { measure.UnhandledPanics = true }()
			c := newTestEvalCtx(t)
			c.eval(n)
			if err := c.stopped(); err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "*query.throwaway") {
				t.Errorf("eval in production: %v, want an internal error naming the node type", err)
			}
		})
	}
}

// TestEngineRefusesNodesOnlyTheDataSourceAnswers: LoRA and P/D never reach an engine (CheckEngineQuery); if one did,
// the evaluation stops with an internal error rather than answering nothing.
func TestEngineRefusesNodesOnlyTheDataSourceAnswers(t *testing.T) {
	for _, n := range []measure.Node{&measure.LoRA{Part: measure.LoRARunning}, &measure.PD{Part: measure.PDTotal}} {
		c := newTestEvalCtx(t)
		c.eval(n)
		if err := c.stopped(); err == nil || !strings.Contains(err.Error(), "internal error") {
			t.Errorf("eval(%T): %v, want an internal error", n, err)
		}
	}
}

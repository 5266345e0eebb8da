package role

import (
	"bytes"
	"context"
	"io"
	"maps"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// TestRolesOnReleases: instances that print exactly what vLLM 0.20 and main print — NIXL histograms registered on
// both sides, only the decode side observing transfers, no pending-send gauge — get their roles in direct mode: the
// prefill side from the prompts it computes, the decode side from the KV it pulls.
func TestRolesOnReleases(t *testing.T) {
	fleet := map[string][]string{
		"prefill-0.20":  {"-vllm-version=0.20", "-kv-role=prefill", "-kv-transfer-ms=1500", "-qps=8", "-seed=41"},
		"decode-0.20":   {"-vllm-version=0.20", "-kv-role=decode", "-kv-transfer-ms=1500", "-kv-transfer-fail-rate=0.02", "-qps=8", "-seed=42"},
		"prefill-main":  {"-vllm-version=main", "-kv-role=prefill", "-qps=8", "-seed=43"},
		"decode-main":   {"-vllm-version=main", "-kv-role=decode", "-qps=8", "-seed=44"},
		"unified-0.20":  {"-vllm-version=0.20", "-qps=8", "-seed=45"},
		"unified-0.11":  {"-vllm-version=0.11", "-qps=8", "-seed=46"},
		"unified-v0-06": {"-flavor=vllm-v0", "-vllm-version=0.6", "-qps=4", "-seed=47"},
	}
	start := time.UnixMilli(1_700_000_002_500)
	store := history.New(history.Options{Retention: time.Hour})
	sims := map[string]*sim.Fleet{}
	for name, args := range fleet {
		cfg, err := sim.ParseArgs(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if sims[name], err = sim.NewFleet(cfg, start); err != nil {
			t.Fatal(err)
		}
	}
	var el time.Duration
	for range 10 * 12 {
		el += 5 * time.Second
		for name, s := range sims {
			s.AdvanceTo(el)
			var buf bytes.Buffer
			if err := s.WriteExposition(&buf); err != nil {
				t.Fatal(err)
			}
			sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{NormalizeFloatLabels: true})
			if err != nil {
				t.Fatal(err)
			}
			store.Append(name, start.Add(el).UnixMilli(), sc)
		}
	}
	e := &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: 5 * time.Second}
	eval := func(ctx context.Context, q query.Query, r query.Request) (*query.Result, error) {
		return e.Eval(ctx, q, r)
	}
	got, err := Resolve(context.Background(), eval, "", query.Request{To: start.Add(el)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"prefill-0.20": Prefill, "decode-0.20": Decode, "prefill-main": Prefill, "decode-main": Decode,
		"unified-0.20": Unified, "unified-0.11": Unified, "unified-v0-06": Unified}
	if !maps.Equal(got, want) {
		t.Errorf("roles %v, want %v", got, want)
	}
}

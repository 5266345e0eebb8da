package role

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// countingEval answers every evidence query with one endpoint that finished requests and counts the calls; the
// window each call read is kept.
type countingEval struct {
	calls atomic.Int32
	fail  bool
	last  atomic.Value // query.Request
}

func (c *countingEval) eval(_ context.Context, q query.Query, r query.Request) (*query.Result, error) {
	c.calls.Add(1)
	c.last.Store(r)
	if c.fail {
		return nil, errors.New("server down")
	}
	for _, ev := range evidence {
		if ev.entry.Type == q.QueryType && ev.entry.Name == q.Measure {
			return &query.Result{Outputs: []query.Output{{Measure: ev.entry.Outputs[ev.output].Name,
				Labels: map[string]string{"endpoint": "vllm-0"}, Points: []derive.Point{{T: r.To.UnixMilli(), V: 1}}}}}, nil
		}
	}
	return &query.Result{}, nil
}

// TestCacheSharesAResolution checks that refreshes within CacheTTL share one resolution per endpoint filter, that
// the evidence ends at the first query's own end (rounding it down could end before the first scrape of a fresh
// data source), that an old entry is resolved again, and that failures and empty resolutions are not kept.
func TestCacheSharesAResolution(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	c := NewCache()
	c.now = func() time.Time { return now }
	ev := &countingEval{}
	end := now.Add(-7 * time.Second)
	r := query.Request{From: end.Add(-time.Hour), To: end}
	for range 3 {
		roles, err := c.Resolve(context.Background(), ev.eval, "vllm-.*", r)
		if err != nil || roles["vllm-0"] != Both {
			t.Fatalf("roles %v %v", roles, err)
		}
		roles["vllm-0"] = "changed by a caller" // must not reach the cache
		r.To = r.To.Add(time.Second)
	}
	if got := ev.calls.Load(); got != int32(len(evidence)) {
		t.Errorf("three refreshes ran %d evidence queries, want one resolution's %d", got, len(evidence))
	}
	if last := ev.last.Load().(query.Request); last.To != end {
		t.Errorf("evidence ended at %s, want the query's end %s", last.To, end)
	}
	if roles, _ := c.Resolve(context.Background(), ev.eval, "vllm-.*", r); roles["vllm-0"] != Both {
		t.Errorf("a caller's change reached the cache: %v", roles)
	}
	if _, err := c.Resolve(context.Background(), ev.eval, "other", r); err != nil || ev.calls.Load() != int32(2*len(evidence)) {
		t.Errorf("another endpoint filter shares the entry: %d calls", ev.calls.Load())
	}
	now = now.Add(CacheTTL)
	if _, err := c.Resolve(context.Background(), ev.eval, "vllm-.*", r); err != nil || ev.calls.Load() != int32(3*len(evidence)) {
		t.Errorf("an entry older than CacheTTL served: %d calls", ev.calls.Load())
	}
	failing := &countingEval{fail: true}
	r.To = r.To.Add(time.Hour)
	for range 2 {
		if _, err := c.Resolve(context.Background(), failing.eval, "vllm-.*", r); err == nil {
			t.Fatal("a failure was answered")
		}
	}
	if failing.calls.Load() != int32(2*len(evidence)) {
		t.Errorf("a failure was kept: %d calls", failing.calls.Load())
	}
	empty := &countingEval{}
	emptyEval := func(context.Context, query.Query, query.Request) (*query.Result, error) {
		empty.calls.Add(1)
		return &query.Result{}, nil
	}
	for range 2 {
		if roles, err := c.Resolve(context.Background(), emptyEval, "fresh", r); err != nil || len(roles) != 0 {
			t.Fatalf("no evidence: %v %v", roles, err)
		}
	}
	if empty.calls.Load() != int32(2*len(evidence)) {
		t.Errorf("a resolution that found no endpoint was kept: %d calls", empty.calls.Load())
	}
	for i := range maxCacheEntries + 10 {
		r.To = r.To.Add(CacheTTL)
		_, _ = c.Resolve(context.Background(), ev.eval, "vllm-"+string(rune('a'+i%26)), r)
	}
	if n := len(c.entries); n > maxCacheEntries {
		t.Errorf("%d entries, at most %d", n, maxCacheEntries)
	}
}

// TestDeclaredRolesWinOverEvidence: a role an endpoint's labels state (llm-d.ai/role through discovery) replaces
// the evidence's for that endpoint, cached or not, and names an endpoint without evidence yet if the filter selects
// it; an unknown value changes nothing.
func TestDeclaredRolesWinOverEvidence(t *testing.T) {
	c := NewCache()
	ev := &countingEval{}
	r := query.Request{From: time.Now().Add(-time.Hour), To: time.Now()}
	declared := map[string]string{"vllm-0": "Prefill", "young-pod": "decode", "other-pod": "decode"}
	c.Declare(func(context.Context) map[string]string { return declared })
	for range 2 { // evidence, then the cached resolution
		roles, err := c.Resolve(context.Background(), ev.eval, "vllm-0|young-pod", r)
		if err != nil || len(roles) != 2 || roles["vllm-0"] != Prefill || roles["young-pod"] != Decode {
			t.Fatalf("roles %v %v", roles, err)
		}
	}
	declared = map[string]string{"vllm-0": "epp"}
	if roles, _ := c.Resolve(context.Background(), ev.eval, "vllm-0", r); roles["vllm-0"] != Both {
		t.Errorf("an unknown label value replaced the evidence: %v", roles)
	}
}

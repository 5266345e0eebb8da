package history

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAccountingMatchesHeap keeps Store.Bytes honest: it is the number maxMemoryMB is enforced against, so the
// heap the store really holds must not be much larger. A churning endpoint (every series new on every scrape)
// stresses the per-series costs; the heap is measured after collections, with the scrapes themselves gone.
func TestAccountingMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	scrapes := make([]string, 40)
	for i := range scrapes {
		var b strings.Builder
		b.WriteString("# TYPE vllm:num_requests_running gauge\n")
		for j := 0; j < 5000; j++ {
			fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\",model_name=\"m\",request_id=\"s%d-%d\"} %d\n", j%8, i, j, j%7)
		}
		scrapes[i] = b.String()
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	s := New(Options{Retention: time.Hour, MaxBytes: -1})
	for i, text := range scrapes {
		s.Append("churn", int64(1_700_000_000_000)+int64(i)*1000, parseText(t, text))
	}
	held := heap() - before
	ratio := float64(held) / float64(s.Bytes())
	t.Logf("store counts %d KB, heap holds %d KB (×%.2f)", s.Bytes()>>10, held>>10, ratio)
	if ratio > 1.25 {
		t.Errorf("the heap holds %.2f× what the store counts", ratio)
	}
	runtime.KeepAlive(s)
}

// TestSelectBoundedReadsNothingOverBudget: a query's point budget is checked before a selection is decoded, so one
// selection over a huge endpoint cannot blow it.
func TestSelectBoundedReadsNothingOverBudget(t *testing.T) {
	s := New(Options{Retention: time.Hour, MaxBytes: -1})
	sc := singleEngine(t)
	for i := 0; i < 10; i++ {
		s.Append("a", int64(1_700_000_000_000)+int64(i)*5000, sc)
	}
	name := s.Names("a")[0]
	all := s.Select("a", name, 0, math.MaxInt64, nil)
	total := 0
	for _, sr := range all {
		total += len(sr.Points)
	}
	if got, ok := s.SelectBounded("a", name, 0, math.MaxInt64, nil, total); !ok || len(got) != len(all) {
		t.Fatalf("within budget: %d series, ok %v", len(got), ok)
	}
	if got, ok := s.SelectBounded("a", name, 0, math.MaxInt64, nil, total-1); ok || got != nil {
		t.Fatalf("over budget: %d series, ok %v", len(got), ok)
	}
}

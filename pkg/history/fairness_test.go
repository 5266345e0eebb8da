package history

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestChurningEndpointCannotEvictOthers (item 3 of the hardening issue): an endpoint whose series change on every
// scrape used to evict a healthy endpoint's history, because trimming went globally oldest first. The largest
// endpoint now loses its own history first; the healthy one keeps all of it, and the store stays near its cap.
func TestChurningEndpointCannotEvictOthers(t *testing.T) {
	const capBytes = 6 << 20 // above one block plus head of the churning endpoint, below its whole history
	s := New(Options{Retention: 24 * time.Hour, MaxBytes: capBytes})
	healthy := singleEngine(t)
	const t0 = int64(1_700_000_000_000)
	const scrapes = 400
	for i := 0; i < scrapes; i++ {
		ts := t0 + int64(i)*5000
		s.Append("healthy", ts, healthy)
		var b strings.Builder
		b.WriteString("# TYPE vllm:churn gauge\n")
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "vllm:churn{request_id=\"r%d-%d\"} %d\n", i, j, j)
		}
		s.Append("churning", ts, parseText(t, b.String()))
	}
	oldest, newest, ok := s.Bounds("healthy")
	if !ok || oldest != t0 || newest != t0+(scrapes-1)*5000 {
		t.Fatalf("healthy endpoint holds %d..%d (ok %v), want all of %d..%d", oldest, newest, ok, t0, t0+(scrapes-1)*5000)
	}
	t.Logf("store %d bytes, cap %d", s.Bytes(), capBytes)
	if c, _, _ := s.Bounds("churning"); c == t0 {
		t.Fatal("the churning endpoint kept everything: the cap was not reached, the test proves nothing")
	}
	if b := s.Bytes(); b > capBytes*5/4 {
		t.Fatalf("store holds %d bytes with a %d cap", b, capBytes)
	}
}

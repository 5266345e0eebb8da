package promtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBackfillAndQuery proves the helper round-trips: samples we write are the samples PromQL sees.
func TestBackfillAndQuery(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	var b strings.Builder
	b.WriteString("# TYPE demo_requests counter\n")
	for i := 0; i <= 60; i++ {
		fmt.Fprintf(&b, "demo_requests_total{engine=\"0\"} %d %d\n", i*10, base.Add(time.Duration(i)*5*time.Second).Unix())
	}
	b.WriteString("# EOF\n")
	s := Start(t, Options{DataDir: Backfill(t, b.String())})
	v, err := s.Query(context.Background(), "rate(demo_requests_total[1m])", base.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 || float64(v[0].Value) != 2 {
		t.Fatalf("rate = %v, want one series at 2/s", v)
	}
	if got := string(v[0].Metric["engine"]); got != "0" {
		t.Fatalf("engine label = %q", got)
	}
}

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Helpers that read frames only where they have what is read: an answer without data fails the test with what it
// got instead of panicking on an index (a loaded machine can leave a frame empty).

// valueFields are a time series frame's value fields: every field after the time field; none where it has fewer.
func valueFields(f *data.Frame) []*data.Field {
	if len(f.Fields) < 2 {
		return nil
	}
	return f.Fields[1:]
}

// lastFloat is the newest value of a frame's first value field; false where there is none.
func lastFloat(f *data.Frame) (float64, bool) {
	vs := valueFields(f)
	if len(vs) == 0 || vs[0].Len() == 0 {
		return 0, false
	}
	v, err := vs[0].FloatAt(vs[0].Len() - 1)
	return v, err == nil
}

// firstFrame is r's first frame; the test fails, showing r, when it has none.
func firstFrame(t *testing.T, r backend.DataResponse) *data.Frame {
	t.Helper()
	if len(r.Frames) == 0 || r.Frames[0] == nil {
		t.Fatalf("no frame in the answer (error %v)", r.Error)
	}
	return r.Frames[0]
}

// stringAt is the string in field col, row row of f; the test fails, showing the frame, where there is none.
func stringAt(t *testing.T, f *data.Frame, col, row int) string {
	t.Helper()
	if col >= len(f.Fields) || row >= f.Fields[col].Len() {
		t.Fatalf("frame has no cell %d,%d:\n%s", col, row, frameTable(f))
	}
	s, ok := f.Fields[col].At(row).(string)
	if !ok {
		t.Fatalf("cell %d,%d is %T, not a string:\n%s", col, row, f.Fields[col].At(row), frameTable(f))
	}
	return s
}

// testScrapeInterval is the scrape interval and timeout of the tests' direct-mode fleets: seconds, so that a scrape
// of a simulator on a loaded machine does not time out (the tests are not about timeouts).
const testScrapeInterval = "3s"

// poll calls cond until it holds or ctx ends, whichever is first; the caller then checks what it got. Only ctx
// bounds it: no step is timed.
func poll(ctx context.Context, cond func() bool) {
	for !cond() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// hasAll reports whether seen holds every one of want.
func hasAll(seen map[string]bool, want []string) bool {
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

// heldSince reports whether every series of an answer has a value at or before t (and there is at least one):
// the history the answer read reaches back that far.
func heldSince(r backend.DataResponse, t time.Time) bool {
	if r.Error != nil || len(r.Frames) == 0 {
		return false
	}
	for _, f := range r.Frames {
		if len(f.Fields) < 2 || f.Rows() == 0 {
			return false
		}
		first, ok := f.Fields[0].At(0).(time.Time)
		if !ok || first.After(t) {
			return false
		}
	}
	return true
}

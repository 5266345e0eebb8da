package agent

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for tries, want := range map[int]time.Duration{
		1: StopRetryFirst, 2: 2 * StopRetryFirst, 3: 4 * StopRetryFirst, 5: 16 * StopRetryFirst, 6: StopRetryMax, 100: StopRetryMax,
	} {
		if got := backoff(tries); got != want {
			t.Errorf("backoff(%d) = %s, want %s", tries, got, want)
		}
	}
}

// TestPerAddressBudgets: each address has its own budget; beyond the tracked maximum, new addresses share one,
// and addresses whose budget refilled are forgotten to make room.
func TestPerAddressBudgets(t *testing.T) {
	p := newPerAddress(0.001, 2, 2)
	for _, step := range []struct {
		addr string
		want bool
	}{
		{"a", true}, {"a", true}, {"a", false}, // a's own burst of 2
		{"b", true}, {"b", true}, {"b", false}, // b is not charged for a
		{"c", true}, {"d", true}, {"e", false}, // past 2 tracked addresses, c, d and e share the overflow budget
	} {
		if got := p.take(step.addr); got != step.want {
			t.Fatalf("take(%q) = %v, want %v", step.addr, got, step.want)
		}
	}
	if len(p.buckets) != 2 {
		t.Errorf("%d addresses tracked, want at most 2", len(p.buckets))
	}
	q := newPerAddress(1000, 1, 1)
	q.take("a")
	time.Sleep(10 * time.Millisecond) // a's budget refills
	q.take("b")
	if _, ok := q.buckets["b"]; !ok {
		t.Errorf("a refilled address was not forgotten to make room: %v", q.buckets)
	}
}

// TestRefusalsSummedUp: refusals write one line at once, then one summary per interval, with the counts by reason.
func TestRefusalsSummedUp(t *testing.T) {
	var buf bytes.Buffer
	audit := slog.New(slog.NewJSONHandler(&buf, nil))
	var c refusals
	r := httptest.NewRequest("GET", PathProfile, nil)
	for i := range 100 {
		c.count(audit, []string{refusedToken, refusedLimited}[i%2], r)
	}
	c.flush(audit)
	c.flush(audit) // nothing new: no line
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"count":1,"unauthorized":1,"rate_limited":0`) ||
		!strings.Contains(lines[1], `"count":99,"unauthorized":49,"rate_limited":50`) {
		t.Errorf("summary lines:\n%s", buf.String())
	}
}

// TestTraceDirIsPinnedAtStart: the agent refuses to start with a -trace-dir it cannot pin, naming the flag.
func TestTraceDirIsPinnedAtStart(t *testing.T) {
	_, err := New(Config{Token: testToken, VLLM: "http://127.0.0.1:1", TraceDir: t.TempDir() + "/missing"})
	if err == nil || !strings.Contains(err.Error(), "-trace-dir") {
		t.Errorf("a missing trace directory: %v", err)
	}
}

package query

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// pointTracker is a memSource that counts the bucket series' points it has handed out and that are still
// reachable (a finalizer on each series' points takes one off), and at every new bucket selection records how many
// of the earlier ones survive a collection.
type pointTracker struct {
	*memSource
	live     atomic.Int64
	selects  int
	survived int64
}

func (s *pointTracker) Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	bucket := strings.HasSuffix(name, "_bucket")
	if bucket && s.selects > 0 {
		// Finalizers run after a collection, on their own goroutine: a bounded poll.
		for i := 0; i < 20 && s.live.Load() > 0; i++ {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		s.survived = max(s.survived, s.live.Load())
	}
	out, ok := s.memSource.Select(endpoint, name, from, to, match, maxPoints)
	if bucket {
		s.selects++
		for _, ser := range out {
			if len(ser.Points) > 0 {
				s.live.Add(1)
				runtime.SetFinalizer(&ser.Points[0], func(*derive.Point) { s.live.Add(-1) })
			}
		}
	}
	return out, ok
}

// TestRateReadsHoldOneSelectionAtATime checks that a rate read keeps its series' rates at the steps, not their
// points: a cold hour of a fleet histogram then holds one endpoint's decoded points at a time, not every endpoint's
// (a hundred MiB and more at 256 endpoints), and answers as derive.RateSteps does.
func TestRateReadsHoldOneSelectionAtATime(t *testing.T) {
	const endpoints, hour = 6, int64(3_600_000)
	start := int64(1_700_000_000_000)
	src := &pointTracker{memSource: &memSource{}}
	bounds := []float64{0.1, 0.5, 1, 5, math.Inf(1)}
	for e := range endpoints {
		for b, le := range bounds {
			var pts []derive.Point
			for i, t := 0, start; t <= start+hour; i, t = i+1, t+5000 {
				pts = append(pts, derive.Point{T: t, V: float64(i * (b + 1) * (e + 1))})
			}
			src.add(fmt.Sprintf("ep%d", e), "vllm:time_to_first_token_seconds_bucket",
				map[string]string{"model_name": "m", "engine": "0", "le": leString(le)}, pts)
		}
	}
	q, err := Parse([]byte(`{"queryType":"latency","quantiles":[0.5]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := evalOne(t, src.memSource, q, start+10*60_000, start+hour) // warm up the parse; the tracked run follows
	eng := &Engine{Source: src, ScrapeInterval: 5 * time.Second}
	tracked, err := eng.Eval(t.Context(), q, Request{From: time.UnixMilli(start + 10*60_000), To: time.UnixMilli(start + hour), Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if src.selects != endpoints {
		t.Fatalf("%d bucket selections, want one per endpoint (%d)", src.selects, endpoints)
	}
	if src.survived > 0 {
		t.Errorf("%d series' points of earlier endpoints were still held when the next endpoint was read; a rate read should keep only their rates", src.survived)
	}
	if len(tracked.Outputs) != endpoints || len(tracked.Outputs) != len(res.Outputs) {
		t.Fatalf("%d outputs tracked, %d untracked, want %d", len(tracked.Outputs), len(res.Outputs), endpoints)
	}
	for i, o := range tracked.Outputs {
		if len(o.Points) == 0 || fmt.Sprint(o.Points) != fmt.Sprint(res.Outputs[i].Points) {
			t.Fatalf("output %d differs between the two runs or is empty", i)
		}
	}
}

// TestReadmeStatesHeavySteps holds the README's account of which rate reads keep rates to heavySteps.
func TestReadmeStatesHeavySteps(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := regexp.MustCompile(`rate read \([^)]*\) over more than (\d+) steps`).FindAllStringSubmatch(string(b), -1)
	if len(found) == 0 {
		t.Fatal("the README does not say over how many steps a rate read keeps rates")
	}
	for _, m := range found {
		if m[1] != strconv.Itoa(heavySteps) {
			t.Errorf("the README says %q; heavySteps is %d", m[0], heavySteps)
		}
	}
}

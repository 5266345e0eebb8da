package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
)

// TestRetentionMarginCoversFleetWindows checks that the history kept beyond the retention holds the longest rate
// window of the fleet overview plus a minute (the range's alignment to its step and one scrape interval), so a range
// as long as the retention reads whole windows at its first steps.
func TestRetentionMarginCoversFleetWindows(t *testing.T) {
	panels, err := dashtest.Panels("../../dashboards/vllm-fleet.json", map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "datasource": "t"})
	if err != nil {
		t.Fatal(err)
	}
	longest := time.Duration(0)
	for _, p := range panels {
		for _, tg := range p.Targets {
			w, ok := tg["window"].(string)
			if !ok {
				continue
			}
			d, err := time.ParseDuration(w)
			if err != nil {
				t.Fatalf("%s: window %q: %v", p.Title, w, err)
			}
			longest = max(longest, d)
		}
	}
	if longest == 0 {
		t.Fatal("no windows read from the fleet overview")
	}
	if RetentionMargin < longest+time.Minute {
		t.Errorf("RetentionMargin %s < the fleet overview's longest window %s plus a minute", RetentionMargin, longest)
	}
}

// TestReadmeStatesRetentionMargin keeps the README saying the margin RetentionMargin is: in the retention row and
// wherever it names an "N-minute margin".
func TestReadmeStatesRetentionMargin(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	minutes := int(RetentionMargin.Minutes())
	for _, m := range regexp.MustCompile(`(\d+)-minute margin`).FindAllStringSubmatch(string(b), -1) {
		if m[1] != strconv.Itoa(minutes) {
			t.Errorf("the README says %q; RetentionMargin is %d minutes", m[0], minutes)
		}
	}
	want := fmt.Sprintf("plus %d minutes", minutes)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `retention` |") {
			if !strings.Contains(line, want) {
				t.Errorf("the README's retention row does not say %q (RetentionMargin): %s", want, line)
			}
			return
		}
	}
	t.Error("the README has no `retention` settings row")
}

// TestSameStepRefreshComputesNothing refreshes the fleet overview over the last hour of a fleet whose oldest scrapes
// are being dropped, then again after a scrape that adds no step: every step of the second refresh comes from the
// results cache, the first steps of the longest windows included, and the newest step too when the refresh comes
// after its scrape.
func TestSameStepRefreshComputesNothing(t *testing.T) {
	panels, err := dashtest.Panels("../../dashboards/vllm-fleet.json", map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "datasource": "bench"})
	if err != nil {
		t.Fatal(err)
	}
	// A refresh at its scrape's time, and one 3 s after: a step can begin between the newest scrape and the
	// refresh, and the watermark must make it final then, not at the next refresh, which would evaluate it again.
	for _, lag := range []time.Duration{0, 3 * time.Second} {
		t.Run(fmt.Sprintf("lag=%s", lag), func(t *testing.T) {
			f := newRefreshFleet(t, 1)
			f.lag = lag
			cache := f.d.mode.(*direct).engine.Cache
			const step = 15 * time.Second
			f.refresh(t, panels)
			sameStep := 0
			for range 6 { // two full steps: four refreshes add no step, each after a scrape that dropped the oldest
				before, at := cache.Stats(), f.end().UnixMilli()/step.Milliseconds()
				f.scrape(t)
				f.refresh(t, panels)
				if f.end().UnixMilli()/step.Milliseconds() != at {
					continue
				}
				sameStep++
				after := cache.Stats()
				if got := after.Computed - before.Computed; got != 0 {
					t.Errorf("a refresh within the same step evaluated %d steps, want all %d from the cache", got, after.Reused-before.Reused)
				}
				if after.Reused == before.Reused {
					t.Error("the refresh took no step from the cache")
				}
			}
			if sameStep != 4 {
				t.Fatalf("%d refreshes within a step, want 4", sameStep)
			}
		})
	}
}

// TestCachedRefreshesAnswerAsUncached refreshes the fleet overview as a viewer does, through steps and within them,
// and compares every panel's answer with the same data source's without a results cache at the same time: the
// cache shares its series' labels and points with the answers it gives (query.Output), so a reader on the way to
// the frames (limits, legends, roles, diagnosis, frames) that changed one would show here as a later refresh's
// answer that differs.
func TestCachedRefreshesAnswerAsUncached(t *testing.T) {
	panels, err := dashtest.Panels("../../dashboards/vllm-fleet.json", map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*", "datasource": "bench"})
	if err != nil {
		t.Fatal(err)
	}
	f := newRefreshFleet(t, 3)
	eng := f.d.mode.(*direct).engine
	cache := eng.Cache
	answer := func(p dashtest.Panel) string {
		resp, err := f.d.QueryData(context.Background(), f.request(p))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	compared := 0
	for refresh := range 8 { // the first cold, then after each scrape: two and a half steps
		if refresh > 0 {
			f.scrape(t)
		}
		for _, p := range panels {
			eng.Cache = cache
			got := answer(p)
			eng.Cache = nil
			want := answer(p)
			if got != want {
				t.Errorf("refresh %d, panel %q: the cached answer differs from the uncached one:\n%s\n%s", refresh, p.Title, got, want)
			}
			compared++
		}
	}
	eng.Cache = cache
	if st := cache.Stats(); st.Reused == 0 || compared == 0 {
		t.Fatalf("compared %d answers, %d steps taken from the cache", compared, st.Reused)
	}
}

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestAgentAttackConcurrentExposureChecks has 32 Viewers load the built app's profiler page at once, over eight
// deployments whose /metrics bodies are 7 MB each: the app's resident memory stays bounded (the old app reached
// 684 MB) and each body is fetched once.
func TestAgentAttackConcurrentExposureChecks(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# TYPE vllm_profiling_x counter\nvllm_profiling_x 1\n# TYPE other_metric gauge\n")
	for i := 0; sb.Len() < 7<<20; i++ {
		fmt.Fprintf(&sb, "other_metric{series=\"%d\",label=\"value-value-value-value-value\"} %d\n", i, i)
	}
	body := sb.String()
	var fetches atomic.Int32
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, body)
	}))
	defer metrics.Close()
	dir := t.TempDir()
	var files []map[string]string
	for i := range 8 {
		files = append(files, map[string]string{"name": fmt.Sprintf("dp%d", i), "path": filepath.Join(dir, fmt.Sprintf("c%d.json", i)),
			"metricsUrl": fmt.Sprintf("%s/metrics?deployment=%d", metrics.URL, i)})
	}
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	settings := map[string]any{"profilerConfigs": files}
	rssBefore := p.RSS()
	stop := sampleMax(p.RSS)
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.CallResource(ctx, harness.AppContext(t, settings, nil, harness.User("Viewer")), "GET", "profiler-configs", nil)
			if err != nil || res.Status != http.StatusOK || strings.Count(string(res.Body), `"exposed":true`) != 8 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	peak := stop()
	t.Logf("FIGURES 32 concurrent Viewer exposure checks over 8 × 7 MB bodies: %d failed, %d fetches, app RSS %d MB before, peak %d MB",
		bad.Load(), fetches.Load(), rssBefore>>20, peak>>20)
	if bad.Load() > 0 || fetches.Load() > 8 {
		t.Errorf("%d page loads failed; %d fetches for 8 deployments", bad.Load(), fetches.Load())
	}
	if peak > 512<<20 {
		t.Errorf("the app's RSS peaked at %d MB", peak>>20)
	}
}

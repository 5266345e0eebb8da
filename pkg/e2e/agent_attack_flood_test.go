package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/app"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// TestAgentAttackFlood runs the built agent with its default limits and the built app: a caller without a token
// floods /healthz and the /v1 routes from 127.0.0.2, Viewers poll GET agents through the app, and meanwhile the
// token holder switches metric_enable directly and an Admin switches it through the app, while a liveness probe
// reads /healthz from 127.0.0.3. Every switch and every probe succeeds, and the refusals take a few audit lines.
func TestAgentAttackFlood(t *testing.T) {
	ca := newTestCA(t)
	config := profilerConfig(t, 0)
	vllm := newAttackVLLM(t, nil)
	ag := startAgent(t, ca, "-profiler-config="+config, "-vllm-url="+vllm.URL)
	p := harness.Start(t, harness.Executable(t, harness.AppExecutable))
	settings := map[string]any{"agents": []map[string]string{{"name": "dp", "url": ag.url}}, "agentCaCert": ca.caPEM}
	secure := map[string]string{app.AgentTokenField("dp"): agentToken}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flood, flood401, flood429, polls atomic.Int32
	flooder := attackClient(t, ca, "127.0.0.2")
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ { // bounded
				select {
				case <-stop:
					return
				default:
				}
				route := []struct{ method, path string }{{"GET", "/healthz"}, {"PUT", "/v1/profiler-config/metric-enable"}, {"POST", "/v1/profile/stop"}}[(g+i)%3]
				code, _ := agentCall(flooder, route.method, ag.url+route.path, "", `{"value":1}`)
				flood.Add(1)
				switch code {
				case http.StatusUnauthorized:
					flood401.Add(1)
				case http.StatusTooManyRequests:
					flood429.Add(1)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ { // bounded
				select {
				case <-stop:
					return
				default:
				}
				_, _ = p.CallResource(ctx, harness.AppContext(t, settings, secure, harness.User("Viewer")), "GET", "agents", nil)
				polls.Add(1)
			}
		}()
	}

	holder, probe := attackClient(t, ca, "127.0.0.1"), attackClient(t, ca, "127.0.0.3")
	direct := map[int]int{}
	viaApp := map[int]int{}
	probes := map[int]int{}
	for i := range 20 {
		code, _ := agentCall(holder, "PUT", ag.url+"/v1/profiler-config/metric-enable", agentToken, fmt.Sprintf(`{"value":%d}`, i%2))
		direct[code]++
		res, err := p.CallResource(ctx, harness.AppContext(t, settings, secure, harness.User("Admin")), "PUT", "agents/dp/metric-enable",
			fmt.Appendf(nil, `{"value":%d}`, (i+1)%2))
		if err != nil {
			t.Fatal(err)
		}
		viaApp[res.Status]++
		if i%2 == 0 {
			code, _ := agentCall(probe, "GET", ag.url+"/healthz", "", "")
			probes[code]++
		}
		time.Sleep(250 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	refusalLines := strings.Count(ag.Logs(), `"msg":"refused requests"`)
	t.Logf("FIGURES flood: %d requests without a token (%d × 401, %d × 429); %d Viewer polls of GET agents; token holder's direct switches %v, "+
		"Admin switches through the app %v, liveness probes %v; %d audit lines of refusals",
		flood.Load(), flood401.Load(), flood429.Load(), polls.Load(), direct, viaApp, probes, refusalLines)
	if direct[http.StatusOK] != 20 || viaApp[http.StatusOK] != 20 || probes[http.StatusOK] != 10 {
		t.Errorf("under the flood: direct switches %v, switches through the app %v, probes %v; want all 200", direct, viaApp, probes)
	}
	if refusalLines > 4 {
		t.Errorf("%d audit lines for %d refused requests: refusals must be summed up", refusalLines, flood.Load())
	}
	if doc, _ := os.ReadFile(config); !strings.Contains(string(doc), `"metric_enable": 0`) {
		t.Errorf("the last switch (to 0) did not land: %s", doc)
	}
}

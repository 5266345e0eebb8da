package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

func TestDirectModeStreamAndResources(t *testing.T) {
	url := startSim(t, "-flavor=vllm-v1", "-engines=2", "-qps=20", "-speed=10", "-seed=5", "-model=llama-3-8b")
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, harness.DataSource{
		UID:      "stream-e2e",
		JSONData: map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": url, "name": "sim"}}, "scrapeInterval": "1s"},
	}, harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if h, err := p.CheckHealth(ctx, pc); err != nil || !strings.Contains(h.Message, "1 of 1") {
		t.Fatalf("health: %v %v", h, err)
	}

	t.Run("resources", func(t *testing.T) {
		want := map[string]string{
			"models": `["llama-3-8b"]`, "engines": `["0","1"]`, "label-values?label=finished_reason": `"stop"`,
			"metrics": `"vllm:time_to_first_token_seconds"`, "endpoints": `"up":true`,
		}
		got := map[string]*harness.ResourceResponse{}
		// The resources list what the scrapes have seen: ask until every one has it (bounded by ctx).
		poll(ctx, func() bool {
			for path, w := range want {
				if r := got[path]; r != nil && r.Status == http.StatusOK && strings.Contains(string(r.Body), w) {
					continue
				}
				res, err := p.CallResource(ctx, pc, http.MethodGet, path, nil)
				if err != nil {
					t.Fatal(err)
				}
				got[path] = res
			}
			for path, w := range want {
				if r := got[path]; r.Status != http.StatusOK || !strings.Contains(string(r.Body), w) {
					return false
				}
			}
			return true
		})
		for path, w := range want {
			if res := got[path]; res.Status != http.StatusOK || !strings.Contains(string(res.Body), w) {
				t.Errorf("GET %s = %d %s, want it to contain %s", path, res.Status, res.Body, w)
			}
		}
		if strings.Contains(string(got["metrics"].Body), "_bucket") {
			t.Errorf("metric names list histogram series instead of families: %s", got["metrics"].Body)
		}
	})

	t.Run("live stream", func(t *testing.T) {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", From: now.Add(-time.Minute), To: now, Interval: time.Second,
			JSON: map[string]any{"queryType": "queue", "measure": "running"}})
		if err != nil {
			t.Fatal(err)
		}
		first := firstFrame(t, resp.Responses["A"])
		if first.Meta == nil {
			t.Fatalf("the answer's frame has no meta, so no channel: %s", frameTable(first))
		}
		channel := first.Meta.Channel
		path := strings.TrimPrefix(channel, "ds/stream-e2e/")
		sub, err := p.SubscribeStream(ctx, pc, path, nil)
		if err != nil || sub.Status != pluginv2.SubscribeStreamResponse_OK {
			t.Fatalf("subscribe %s: %v %v", path, sub, err)
		}
		if sub, _ := p.SubscribeStream(ctx, pc, "query/0000000000000000", nil); sub.Status != pluginv2.SubscribeStreamResponse_NOT_FOUND {
			t.Fatalf("unknown stream path accepted: %v", sub.Status)
		}
		sctx, stop := context.WithTimeout(ctx, 20*time.Second)
		defer stop()
		packets, errs, err := p.RunStream(sctx, pc, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var last time.Time
		for got := 0; got < 3; {
			select {
			case pkt := <-packets:
				var f data.Frame
				if err := json.Unmarshal(pkt.Data, &f); err != nil {
					t.Fatalf("packet is not a frame: %v", err)
				}
				if len(f.Fields) != 3 || f.Rows() == 0 || f.Fields[1].Name != "running" || f.Fields[1].Labels["engine"] == "" {
					t.Fatalf("unexpected frame %s", pkt.Data)
				}
				ts, ok := f.Fields[0].At(0).(time.Time)
				if !ok {
					t.Fatalf("the frame's first field is not time: %s", pkt.Data)
				}
				if !ts.After(last) {
					t.Fatalf("stream did not move forward: %s after %s", ts, last)
				}
				last = ts
				got++
			case err := <-errs:
				t.Fatalf("stream ended: %v", err)
			}
		}
	})
}

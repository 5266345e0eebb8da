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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if h, err := p.CheckHealth(ctx, pc); err != nil || !strings.Contains(h.Message, "1 of 1") {
		t.Fatalf("health: %v %v", h, err)
	}
	time.Sleep(3 * time.Second)

	t.Run("resources", func(t *testing.T) {
		for path, want := range map[string]string{
			"models": `["llama-3-8b"]`, "engines": `["0","1"]`, "label-values?label=finished_reason": `"stop"`,
			"metrics": `"vllm:time_to_first_token_seconds"`, "endpoints": `"up":true`,
		} {
			res, err := p.CallResource(ctx, pc, http.MethodGet, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != http.StatusOK || !strings.Contains(string(res.Body), want) {
				t.Errorf("GET %s = %d %s, want it to contain %s", path, res.Status, res.Body, want)
			}
		}
		res, _ := p.CallResource(ctx, pc, http.MethodGet, "metrics", nil)
		if strings.Contains(string(res.Body), "_bucket") {
			t.Errorf("metric names list histogram series instead of families: %s", res.Body)
		}
	})

	t.Run("live stream", func(t *testing.T) {
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", From: now.Add(-time.Minute), To: now, Interval: time.Second,
			JSON: map[string]any{"queryType": "queue", "measure": "running"}})
		if err != nil {
			t.Fatal(err)
		}
		channel := resp.Responses["A"].Frames[0].Meta.Channel
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
				if len(f.Fields) != 3 || f.Fields[1].Name != "running" || f.Fields[1].Labels["engine"] == "" {
					t.Fatalf("unexpected frame %s", pkt.Data)
				}
				ts := f.Fields[0].At(0).(time.Time)
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

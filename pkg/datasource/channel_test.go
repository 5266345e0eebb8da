package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// TestRankedAndDistributedPanelsHaveNoLiveChannel: a live channel streams the newest point of every series a query
// computes, so a top list (limit) or a distribution (buckets), both taken over the panel's range, would grow back
// into every endpoint's line; such panels get no channel, the others keep theirs, and a distribution comes as
// heatmap rows.
func TestRankedAndDistributedPanelsHaveNoLiveChannel(t *testing.T) {
	cfg, err := sim.ParseArgs([]string{"-flavor=vllm-v1", "-engines=2", "-qps=8", "-seed=4"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	fleet, err := sim.NewFleet(cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	store := history.New(history.Options{})
	for el := time.Duration(0); el <= 5*time.Minute; el += 5 * time.Second {
		fleet.AdvanceTo(el)
		var buf bytes.Buffer
		if err := fleet.WriteExposition(&buf); err != nil {
			t.Fatal(err)
		}
		sc, err := exposition.Parse(buf.Bytes(), exposition.ParseOptions{NormalizeFloatLabels: true})
		if err != nil {
			t.Fatal(err)
		}
		for e := range 3 {
			store.Append(fmt.Sprintf("ep-%d", e), start.Add(el).UnixMilli(), sc)
		}
	}
	d := &Datasource{uid: "ds", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(5 * time.Second)},
		mode: &direct{store: store, scraper: scraper.New(nil, store, scraper.Options{Interval: 5 * time.Second}),
			engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: 5 * time.Second, Cache: query.NewCache(64 << 20)}}}
	for _, tc := range []struct {
		name    string
		q       map[string]any
		channel bool
	}{
		{"series", map[string]any{"queryType": "kv_cache_usage"}, true},
		{"top list", map[string]any{"queryType": "kv_cache_usage", "limit": 1}, false},
		{"distribution", map[string]any{"queryType": "kv_cache_usage", "buckets": []float64{0.25, 0.5, 0.75}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js, err := json.Marshal(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp, err := d.QueryData(ctx, &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A", JSON: js,
				TimeRange: backend.TimeRange{From: start, To: start.Add(5 * time.Minute)}, Interval: 15 * time.Second, MaxDataPoints: 100}}})
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Responses["A"]
			if r.Error != nil || len(r.Frames) == 0 || r.Frames[0].Meta == nil {
				t.Fatalf("answer: %v, %d frames", r.Error, len(r.Frames))
			}
			if got := r.Frames[0].Meta.Channel != ""; got != tc.channel {
				t.Errorf("live channel %q, want one: %v", r.Frames[0].Meta.Channel, tc.channel)
			}
			if _, ok := tc.q["buckets"]; ok {
				f := r.Frames[0]
				if f.Meta.Type != query.HeatmapRowsType || len(f.Fields) != 5 {
					t.Errorf("distribution frame: type %q, %d fields, want heatmap rows of 4 buckets", f.Meta.Type, len(f.Fields))
				}
				// Every step counts the six engines (3 endpoints × 2) once.
				for row := range f.Rows() {
					sum := 0.0
					for _, fld := range f.Fields[1:] {
						sum += fld.At(row).(float64)
					}
					if sum != 6 {
						t.Fatalf("row %d counts %v engines, want 6", row, sum)
					}
				}
			}
		})
	}
}

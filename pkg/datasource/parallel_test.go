package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/history"
	"github.com/inferscope/inferscope-vllm/pkg/internal/dashtest"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

// TestQueriesOfOneRequestAnswerAsAlone sends every query of the fleet overview in one request, which QueryData
// answers several at a time, and checks each answer equals the same query's answer sent alone (run with -race, it
// also checks the evaluation shares nothing unguarded).
func TestQueriesOfOneRequestAnswerAsAlone(t *testing.T) {
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	scrapes := simHour(t, start)
	store := history.New(history.Options{Retention: 2 * time.Hour, MaxBytes: 1 << 30})
	for e := range 4 {
		for i, sc := range scrapes {
			store.Append(fmt.Sprintf("vllm-%d", e), start.Add(time.Duration(i)*5*time.Second).UnixMilli(), sc)
		}
	}
	d := &Datasource{uid: "parallel", streams: newStreamRegistry(), settings: Settings{ScrapeInterval: Duration(5 * time.Second)},
		mode: &direct{store: store, scraper: scraper.New(nil, store, scraper.Options{Interval: time.Second}),
			engine: &query.Engine{Source: query.HistorySource{Store: store}, ScrapeInterval: 5 * time.Second, Cache: query.NewCache(64 << 20)}}}
	panels, err := dashtest.Panels("../../dashboards/vllm-fleet.json", map[string]string{"endpoint": ".*", "model": ".*", "engine": ".*"})
	if err != nil {
		t.Fatal(err)
	}
	end := start.Add(time.Hour)
	all := &backend.QueryDataRequest{}
	for _, p := range panels {
		for _, target := range p.Targets {
			j, _ := json.Marshal(target)
			all.Queries = append(all.Queries, backend.DataQuery{RefID: fmt.Sprintf("Q%d", len(all.Queries)), JSON: j,
				TimeRange: backend.TimeRange{From: end.Add(-time.Hour), To: end}, Interval: 15 * time.Second, MaxDataPoints: 1000})
		}
	}
	if len(all.Queries) <= maxParallelQueries {
		t.Fatalf("only %d queries: nothing runs side by side", len(all.Queries))
	}
	together, err := d.QueryData(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range all.Queries {
		alone, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}})
		if err != nil {
			t.Fatal(err)
		}
		got, want := together.Responses[q.RefID], alone.Responses[q.RefID]
		if (got.Error == nil) != (want.Error == nil) || len(got.Frames) != len(want.Frames) {
			t.Fatalf("%s %s: together %d frames (%v), alone %d frames (%v)", q.RefID, q.JSON, len(got.Frames), got.Error, len(want.Frames), want.Error)
		}
		for i := range got.Frames {
			g, w := got.Frames[i], want.Frames[i]
			if g.Name != w.Name || len(g.Fields) != len(w.Fields) || g.Rows() != w.Rows() {
				t.Fatalf("%s frame %d: together %s (%d rows), alone %s (%d rows)", q.RefID, i, g.Name, g.Rows(), w.Name, w.Rows())
			}
			for f := range g.Fields {
				for r := range g.Rows() {
					if a, b := g.Fields[f].At(r), w.Fields[f].At(r); !reflect.DeepEqual(a, b) {
						t.Fatalf("%s frame %d field %d row %d: together %v, alone %v", q.RefID, i, f, r, a, b)
					}
				}
			}
		}
	}
}

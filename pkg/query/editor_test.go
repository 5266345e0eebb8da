package query

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// editorQueries are queries as the query editor's component tests (QueryEditor.ct.tsx) see the editor produce them.
const editorQueries = "../../src/datasource/testdata/editor_queries.json"

// TestEditorQueriesReturnData answers each query the editor produces over the synthetic fleet: what a user can
// build in the editor is valid and returns data.
func TestEditorQueriesReturnData(t *testing.T) {
	raw, err := os.ReadFile(editorQueries)
	if err != nil {
		t.Fatal(err)
	}
	var queries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &queries); err != nil {
		t.Fatal(err)
	}
	start := int64(1_700_000_000_000)
	eng := &Engine{Source: newFleet(start).src, ScrapeInterval: 5 * time.Second}
	from := time.UnixMilli(start + 30*60*1000)
	req := Request{From: from, To: from.Add(2 * time.Minute), Interval: 30 * time.Second}
	for name, body := range queries {
		t.Run(name, func(t *testing.T) {
			q, err := Parse(body)
			if err != nil {
				t.Fatalf("the editor's query is refused: %v", err)
			}
			res, err := eng.Eval(context.Background(), q, req)
			if err != nil {
				t.Fatal(err)
			}
			points := 0
			for _, o := range res.Outputs {
				points += len(o.Points)
			}
			if points == 0 {
				t.Errorf("%s returns no data: %d series, notices %v", name, len(res.Outputs), res.Notices)
			}
		})
	}
}

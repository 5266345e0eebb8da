package role

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// runningEval answers running-request queries per endpoint from a table: endpoint -> model -> points by step.
func runningEval(running map[string]map[string][]float64) Eval {
	return func(_ context.Context, q query.Query, _ query.Request) (*query.Result, error) {
		if q.QueryType != query.TypeQueue || q.Measure != measure.QueueRunning.Name || q.GroupBy != query.GroupEndpoint {
			return nil, fmt.Errorf("unexpected sub-query %+v", q)
		}
		re := regexp.MustCompile("^(?:" + q.Endpoint + ")$")
		res := &query.Result{}
		for ep, models := range running {
			if !re.MatchString(ep) {
				continue
			}
			for model, vs := range models {
				o := query.Output{Measure: "running", Labels: map[string]string{"endpoint": ep, "model_name": model}}
				for i, v := range vs {
					if v >= 0 { // a negative value is a step the endpoint did not report
						o.Points = append(o.Points, derive.Point{T: int64(i) * 1000, V: v})
					}
				}
				res.Outputs = append(res.Outputs, o)
			}
		}
		return res, nil
	}
}

// TestPDBalance: per model and step, the running requests per prefill instance (the mean over those reporting) ÷
// per decode instance (at least 1: an idle decode side makes the ratio the prefill side's load, not infinite), and
// a notice when one side is missing.
func TestPDBalance(t *testing.T) {
	eval := runningEval(map[string]map[string][]float64{
		"p0": {"m": {8, 6, 4}},
		"p1": {"m": {4, -1, 0}},
		"d0": {"m": {2, 0, 1}},
		"d1": {"m": {2, 0, 3}},
		"x":  {"other": {9, 9, 9}},
	})
	byRole := map[string][]string{Prefill: {"p0", "p1"}, Decode: {"d0", "d1"}}
	q := query.Query{QueryType: query.TypeKVTransfer, Measure: measure.KVTransferPDBalance.Name, GroupBy: query.GroupModel}
	res, err := pdBalance(context.Background(), eval, q, query.Request{}, byRole)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range res.Outputs {
		got = append(got, fmt.Sprintf("%s %s %v", o.Measure, o.Labels["model_name"], o.Points))
	}
	want := []string{
		"pd_running_ratio m [{0 3} {1000 6} {2000 1}]",
		"prefill_running_per_instance m [{0 6} {1000 6} {2000 2}]",
		"decode_running_per_instance m [{0 2} {1000 0} {2000 2}]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("P/D balance:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The query reads the balance's parts, not the P/D TTFT's.
	if !readsPDBalance(q) || readsPDBalance(query.Query{QueryType: query.TypeKVTransfer, Measure: measure.KVTransferPDTTFT.Name}) {
		t.Error("readsPDBalance confuses the P/D balance with the P/D TTFT")
	}
	res, err = pdBalance(context.Background(), eval, q, query.Request{}, map[string][]string{Decode: {"d0"}})
	if err != nil || len(res.Outputs) != 0 || len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "0 prefill, 1 decode") {
		t.Errorf("without a prefill instance: %+v %v", res, err)
	}
}

package query

import (
	"math"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
)

func rankSeries(measure, endpoint, quantile string, values ...float64) Output {
	l := map[string]string{"endpoint": endpoint}
	if quantile != "" {
		l["quantile"] = quantile
	}
	o := Output{Measure: measure, Labels: l}
	for i, v := range values {
		o.Points = append(o.Points, derive.Point{T: int64(i) * 1000, V: v})
	}
	return o
}

func rankNames(outs []Output) string {
	var s []string
	for _, o := range outs {
		s = append(s, o.Measure+"/"+o.Labels["quantile"]+"/"+o.Labels["endpoint"])
	}
	return strings.Join(s, " ")
}

func TestApplyLimit(t *testing.T) {
	fleet := func() *Result {
		return &Result{Outputs: []Output{
			rankSeries("ttft", "a", "0.5", 1, 1), rankSeries("ttft", "b", "0.5", 3, 3), rankSeries("ttft", "c", "0.5", 2, 2),
			rankSeries("ttft", "a", "0.95", 9, 9), rankSeries("ttft", "b", "0.95", 4, 4), rankSeries("ttft", "c", "0.95", math.NaN(), 5),
			rankSeries("ttft", "d", "0.95", math.NaN()),
		}}
	}
	for _, tc := range []struct {
		name  string
		q     Query
		want  string
		notes int
	}{
		{"no limit keeps all", Query{}, "ttft/0.5/a ttft/0.5/b ttft/0.5/c ttft/0.95/a ttft/0.95/b ttft/0.95/c ttft/0.95/d", 0},
		{"highest two per quantile, original order", Query{Limit: 2}, "ttft/0.5/b ttft/0.5/c ttft/0.95/a ttft/0.95/c", 1},
		{"lowest one per quantile; a series without values ranks last", Query{Limit: 1, Rank: RankLowest}, "ttft/0.5/a ttft/0.95/b", 1},
		{"a limit above the count leaves all", Query{Limit: 10}, "ttft/0.5/a ttft/0.5/b ttft/0.5/c ttft/0.95/a ttft/0.95/b ttft/0.95/c ttft/0.95/d", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := fleet()
			ApplyLimit(tc.q, res)
			if got := rankNames(res.Outputs); got != tc.want {
				t.Errorf("kept %s, want %s", got, tc.want)
			}
			if len(res.Notices) != tc.notes {
				t.Errorf("notices %q, want %d", res.Notices, tc.notes)
			}
		})
	}
}

func TestLimitAndRankAreValidated(t *testing.T) {
	for _, q := range []Query{
		{QueryType: TypeQueue, Limit: -1},
		{QueryType: TypeQueue, Limit: MaxLimit + 1},
		{QueryType: TypeQueue, Limit: 5, Rank: "worst"},
	} {
		if err := q.Validate(); err == nil {
			t.Errorf("%+v: accepted", q)
		}
	}
	q := Query{QueryType: TypeQueue, Limit: 5, Rank: RankLowest}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
}

package query

import (
	"maps"
	"slices"
	"testing"
	"unsafe"

	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// TestGroupInputsWindowsContiguousGroups holds groupInputs to the same groups whether or not a group's inputs
// follow one another, and, where they do (as fetch returns a fleet's inputs grouped by endpoint or engine, or as
// one fleet group), to windows onto the inputs capped at each group's end: no member copied.
func TestGroupInputsWindowsContiguousGroups(t *testing.T) {
	labels := func(endpoint, model string) map[string]string {
		return map[string]string{"endpoint": endpoint, "model_name": model}
	}
	a1, a2, b1 := labels("a", "m1"), labels("a", "m2"), labels("b", "m1")
	s := make([]Series, 5)
	in := func(i int, l map[string]string) input {
		return input{endpoint: l["endpoint"], series: &s[i], labels: l}
	}
	for _, c := range []struct {
		name       string
		groupBy    Group
		ins        []input
		want       map[string][]int // a group's endpoint/model: its members' series, in input order
		contiguous bool
	}{
		{"by endpoint, in order", GroupEndpoint, []input{in(0, a1), in(1, a1), in(2, a2), in(3, b1), in(4, b1)},
			map[string][]int{"a/m1": {0, 1}, "a/m2": {2}, "b/m1": {3, 4}}, true},
		{"by model, interleaved", GroupModel, []input{in(0, a1), in(1, a2), in(2, b1), in(3, a2)},
			map[string][]int{"/m1": {0, 2}, "/m2": {1, 3}}, false},
		{"the fleet", GroupFleet, []input{in(0, a1), in(1, a2), in(2, b1)}, map[string][]int{"/": {0, 1, 2}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			groups := (&evalCtx{q: Query{GroupBy: c.groupBy}}).groupInputs(c.ins)
			if len(groups) != len(c.want) {
				t.Fatalf("%d groups, want %d", len(groups), len(c.want))
			}
			for i, g := range groups {
				if i > 0 && groups[i-1].key >= g.key {
					t.Errorf("groups out of key order: %q before %q", groups[i-1].key, g.key)
				}
				name := g.labels["endpoint"] + "/" + g.labels["model_name"]
				want, ok := c.want[name]
				if !ok || len(g.members) != len(want) {
					t.Fatalf("group %s: %d members, want %v", name, len(g.members), want)
				}
				for j, m := range g.members {
					if m.series != &s[want[j]] {
						t.Errorf("group %s: member %d is not series %d", name, j, want[j])
					}
				}
				if !c.contiguous {
					continue
				}
				first := 0
				for c.ins[first].series != &s[want[0]] {
					first++
				}
				if unsafe.SliceData(g.members) != &c.ins[first] || cap(g.members) != len(g.members) {
					t.Errorf("group %s: members copied, or their window not capped (cap %d, len %d)", name, cap(g.members), len(g.members))
				}
			}
		})
	}
}

// TestLabelSetGroupings: a kept label set's key and reported labels under each grouping are what groupInputs
// computes from the map itself, for every grouping a query can name (groupingOf tells them apart as reportsLabel
// does).
func TestLabelSetGroupings(t *testing.T) {
	sets := []map[string]string{
		{"endpoint": "a", "model_name": "m", vllm.RankOutputLabel: "0"},
		{"endpoint": "a", "model_name": "m", vllm.AscendRankOutputLabel: "1|2"},
		{"endpoint": "a"},
		{},
	}
	for _, g := range append(slices.Clone(measure.Groups), "") {
		for _, m := range sets {
			c := &evalCtx{q: Query{GroupBy: g}}
			got := newLabelSet(m).by[groupingOf(g)]
			if want := labelKey(m, c.reports); got.key != want {
				t.Errorf("group by %q, labels %v: key %q, want %q", g, m, got.key, want)
			}
			if want := c.groupLabels(m); !maps.Equal(got.labels, want) {
				t.Errorf("group by %q, labels %v: reported %v, want %v", g, m, got.labels, want)
			}
		}
	}
}

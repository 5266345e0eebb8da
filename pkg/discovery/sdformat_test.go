package discovery

import (
	"strings"
	"testing"
)

func TestParseGroups(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		yaml     bool
		max      int
		want     []string // address|label=value
		trunc    bool
		err      string
	}{
		{name: "json", in: `[{"targets":["a:1","b:2"],"labels":{"job":"vllm"}},{"targets":["c:3"]}]`, max: 10,
			want: []string{"a:1|vllm", "b:2|vllm", "c:3|"}},
		{name: "yaml", yaml: true, in: "- targets: [a:1]\n  labels: {job: vllm}\n", max: 10, want: []string{"a:1|vllm"}},
		{name: "json in a yaml file", yaml: true, in: `[{"targets":["a:1"]}]`, max: 10, want: []string{"a:1|"}},
		{name: "empty file", in: "  \n", max: 10},
		{name: "cut at max", in: `[{"targets":["a:1","b:2","c:3"]}]`, max: 2, want: []string{"a:1|", "b:2|"}, trunc: true},
		{name: "not a list", in: `{"targets":["a:1"]}`, max: 10, err: "not a list of target groups"},
		{name: "yaml only in yaml files", in: "- targets: [a:1]", max: 10, err: "not a list"},
		{name: "a URL is not an address", in: `[{"targets":["http://a:1/metrics"]}]`, max: 10, err: "not host:port"},
		{name: "half-written file", in: `[{"targets":["a:1"`, max: 10, err: "not a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, trunc, err := parseGroups([]byte(tc.in), tc.yaml, tc.max, map[string]string{"__meta_filepath": "f"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range ts {
				if x.Labels[LabelAddress] != x.Address || x.Labels["__meta_filepath"] != "f" {
					t.Errorf("labels %v", x.Labels)
				}
				got = append(got, x.Address+"|"+x.Labels["job"])
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || trunc != tc.trunc {
				t.Errorf("got %v truncated %v, want %v %v", got, trunc, tc.want, tc.trunc)
			}
		})
	}
}
